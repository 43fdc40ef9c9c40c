import { getHubRuntime } from "~/server/hub/runtime";
import { knownToolNames } from "~/server/mcp";
import { authorizationServerResponse, oauthContext, preflight } from "~/server/oauth";

// RFC 8414 metadata, served at /.well-known/oauth-authorization-server through a rewrite in next.config.ts.
export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  return authorizationServerResponse(oauthContext(await getHubRuntime(), knownToolNames()));
}

export const OPTIONS = preflight;
