import { getHubRuntime } from "../../../server/hub/runtime";
import { protectedResourceMetadata } from "../../../server/mcp";

// RFC 9728 metadata, served at /.well-known/oauth-protected-resource (and its
// /api/mcp path-suffixed form) through rewrites in next.config.ts.
export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  const runtime = await getHubRuntime();
  return Response.json(protectedResourceMetadata(runtime.config.publicUrl), { headers: { "cache-control": "no-store", "access-control-allow-origin": "*" } });
}
