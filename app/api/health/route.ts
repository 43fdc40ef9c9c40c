import { readHealth } from "../../../server/health/read-health";
import { getHubRuntime } from "../../../server/hub/runtime";
import { toErrorPayload } from "../../../server/errors";

export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  try {
    const health = await readHealth(await getHubRuntime());
    return Response.json(health, { headers: { "cache-control": "no-store" } });
  } catch (error) {
    return Response.json({ status: "unavailable", error: toErrorPayload(error) }, { status: 503 });
  }
}
