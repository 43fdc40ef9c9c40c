import { getHubRuntime } from "../../../../../../server/hub/runtime";
import { serveAck } from "../../../../../../server/jobs/http";

export const dynamic = "force-dynamic";

export async function POST(request: Request, context: { params: Promise<{ id: string }> }): Promise<Response> {
  const { id } = await context.params;
  return serveAck(await getHubRuntime(), request, id);
}
