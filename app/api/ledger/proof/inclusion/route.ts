import { getHubRuntime } from "~/server/hub/runtime";
import { serveInclusionProof } from "~/server/ledger/http";

export const dynamic = "force-dynamic";

export async function GET(request: Request): Promise<Response> {
  void request;
  const runtime = await getHubRuntime();
  return serveInclusionProof(runtime, new URL(request.url));
}
