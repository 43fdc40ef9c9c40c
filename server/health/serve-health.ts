import { sessionCookieSecure } from "../admins";
import { toErrorPayload } from "../errors";
import type { HubRuntime } from "../hub/runtime";
import { mayReadFullHealth, publicHealth } from "./access";
import { readHealth } from "./read-health";

/**
 * GET /api/health. Without a credential: `{status, version}` only. With an
 * admin session or an agent token (`Authorization: Bearer lh_…`): the full
 * health. Served by the hub's own server (server/hub/direct-routes.ts) and
 * by the route file under bare Next.
 */
export async function serveHealth(runtime: HubRuntime, request: Request): Promise<Response> {
  try {
    const health = await readHealth(runtime);
    const full = await mayReadFullHealth(runtime.database.handle.db, request.headers, { secure: sessionCookieSecure(runtime.config) });
    return Response.json(full ? health : publicHealth(health), { headers: { "cache-control": "no-store", vary: "authorization, cookie" } });
  } catch (error) {
    return Response.json({ status: "unavailable", error: toErrorPayload(error) }, { status: 503 });
  }
}
