import { getHubRuntime } from "~/server/hub/runtime";
import { serveHealthReport } from "~/server/hosts/http";

export const dynamic = "force-dynamic";

export async function POST(request: Request): Promise<Response> {
  return serveHealthReport(await getHubRuntime(), request);
}
