import { getHubRuntime } from "../../../server/hub/runtime";
import { handleMcpRequest } from "../../../server/mcp";

// MCP Streamable HTTP (DESIGN.md "MCP surface"). Everything — auth, Origin,
// limits, sessions — happens in server/mcp; this file only hands the request over.
export const dynamic = "force-dynamic";

async function handle(request: Request): Promise<Response> {
  try {
    return await handleMcpRequest(request, await getHubRuntime());
  } catch (error) {
    console.error(`leasehold: /api/mcp failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
    return Response.json({ jsonrpc: "2.0", error: { code: -32603, message: "internal error", data: { code: "INTERNAL", message: "internal error", retryable: false, hint: "" } }, id: null }, { status: 500 });
  }
}

export const GET = handle;
export const POST = handle;
export const DELETE = handle;
// Answered by server/mcp too (401/403/405), not by Next's automatic OPTIONS: the endpoint does not serve CORS.
export const OPTIONS = handle;
export const PUT = handle;
export const PATCH = handle;
