import { getHubRuntime } from "~/server/hub/runtime";
import { serveLogKey } from "~/server/ledger/http";

export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  const runtime = await getHubRuntime();
  return serveLogKey(runtime);
}
