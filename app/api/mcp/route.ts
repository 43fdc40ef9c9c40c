import { getHubRuntime } from "~/server/hub/runtime";
import { serveMcp } from "~/server/mcp";

// MCP Streamable HTTP (docs/design.md#mcp). Everything — auth, Origin,
// limits, sessions — happens in server/mcp; this file only hands the request over.
// The hub's own server answers this path without Next.js (server/hub/direct-routes.ts);
// this file serves it when the app runs under bare Next.
export const dynamic = "force-dynamic";

async function handle(request: Request): Promise<Response> {
  return serveMcp(request, await getHubRuntime());
}

export const GET = handle;
export const POST = handle;
export const DELETE = handle;
// Answered by server/mcp too (401/403/405), not by Next's automatic OPTIONS: the endpoint does not serve CORS.
export const OPTIONS = handle;
export const PUT = handle;
export const PATCH = handle;
