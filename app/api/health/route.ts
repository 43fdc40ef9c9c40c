import { mayReadFullHealth, publicHealth } from "../../../server/health/access";
import { readHealth } from "../../../server/health/read-health";
import { getHubRuntime } from "../../../server/hub/runtime";
import { toErrorPayload } from "../../../server/errors";

export const dynamic = "force-dynamic";

/**
 * Without a credential: `{status, version}` only. With an admin session or
 * an agent token (`Authorization: Bearer lh_…`): the full health.
 */
export async function GET(request: Request): Promise<Response> {
  try {
    const runtime = await getHubRuntime();
    const health = await readHealth(runtime);
    const full = await mayReadFullHealth(runtime.database.handle.db, request.headers, { secure: runtime.config.publicUrl.startsWith("https://") });
    return Response.json(full ? health : publicHealth(health), { headers: { "cache-control": "no-store", vary: "authorization, cookie" } });
  } catch (error) {
    return Response.json({ status: "unavailable", error: toErrorPayload(error) }, { status: 503 });
  }
}
