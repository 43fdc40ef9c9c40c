import { getHubRuntime } from "../../../server/hub/runtime";
import { serveReady } from "../../../server/health/ready";

export const dynamic = "force-dynamic";

/** The hub's own server answers this path without Next.js (server/hub/direct-routes.ts); this file serves it under bare Next. */
export async function GET(): Promise<Response> {
  return serveReady(await getHubRuntime());
}
