import { getHubRuntime } from "~/server/hub/runtime";
import { serveConsistencyProof } from "~/server/ledger/http";

export const dynamic = "force-dynamic";

export async function GET(request: Request): Promise<Response> {
  void request;
  const runtime = await getHubRuntime();
  return serveConsistencyProof(runtime, new URL(request.url));
}
