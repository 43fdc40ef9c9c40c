import { getHubRuntime } from "~/server/hub/runtime";
import { knownToolNames } from "~/server/mcp";
import { oauthContext, type OAuthContext } from "~/server/oauth";

/** An OAuth endpoint's route handler: server/oauth does the work; a failure is an RFC 6749 `server_error`, never a stack. */
export function oauthRoute(name: string, handler: (request: Request, ctx: OAuthContext) => Promise<Response>): (request: Request) => Promise<Response> {
  return async (request) => {
    try {
      return await handler(request, oauthContext(await getHubRuntime(), knownToolNames()));
    } catch (error) {
      console.error(`leasehold: /api/oauth/${name} failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
      return Response.json({ error: "server_error", error_description: "internal error" }, { status: 500, headers: { "cache-control": "no-store" } });
    }
  };
}
