import { getHubRuntime } from "~/server/hub/runtime";
import { serveStopWatch } from "~/server/jobs/http";

export const dynamic = "force-dynamic";

export async function GET(request: Request, context: { params: Promise<{ id: string }> }): Promise<Response> {
  const { id } = await context.params;
  return serveStopWatch(await getHubRuntime(), request, id);
}
