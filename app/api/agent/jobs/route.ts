import { getHubRuntime } from "~/server/hub/runtime";
import { serveNextJob } from "~/server/jobs/http";

export const dynamic = "force-dynamic";

export async function GET(request: Request): Promise<Response> {
  return serveNextJob(await getHubRuntime(), request);
}
