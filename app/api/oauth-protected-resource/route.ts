import { getHubRuntime } from "~/server/hub/runtime";
import { preflight, protectedResourceResponse } from "~/server/oauth";

// RFC 9728 metadata, served at /.well-known/oauth-protected-resource (and its
// /api/mcp path-suffixed form) through rewrites in next.config.ts.
export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  return protectedResourceResponse((await getHubRuntime()).config.publicUrl);
}

export const OPTIONS = preflight;
