import { handleTokenRequest, preflight } from "~/server/oauth";
import { oauthRoute } from "~/app/_lib/oauth-route";

// OAuth token endpoint: server/oauth/http.ts does everything.
export const dynamic = "force-dynamic";

const handle = oauthRoute("token", handleTokenRequest);
export const POST = handle;
export const GET = handle;
export const OPTIONS = preflight;
