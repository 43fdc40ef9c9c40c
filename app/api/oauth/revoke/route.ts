import { handleRevocationRequest, preflight } from "~/server/oauth";
import { oauthRoute } from "~/app/_lib/oauth-route";

// OAuth revoke endpoint: server/oauth/http.ts does everything.
export const dynamic = "force-dynamic";

const handle = oauthRoute("revoke", handleRevocationRequest);
export const POST = handle;
export const GET = handle;
export const OPTIONS = preflight;
