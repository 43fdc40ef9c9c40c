import { getHubRuntime } from "~/server/hub/runtime";
import { serveHealth } from "~/server/health/serve-health";

export const dynamic = "force-dynamic";

/** The hub's own server answers this path without Next.js (server/hub/direct-routes.ts); this file serves it under bare Next. */
export async function GET(request: Request): Promise<Response> {
  return serveHealth(await getHubRuntime(), request);
}
