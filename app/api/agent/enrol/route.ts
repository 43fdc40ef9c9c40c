import { getHubRuntime } from "~/server/hub/runtime";
import { serveEnrol } from "~/server/hosts/http";

export const dynamic = "force-dynamic";

export async function POST(request: Request): Promise<Response> {
  return serveEnrol(await getHubRuntime(), request);
}
