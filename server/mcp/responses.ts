import type { ErrorCode } from "../errors";
import type { Refusal } from "./checks";
import { challengeParams } from "../oauth/metadata";

/**
 * HTTP answers the endpoint gives before (or instead of) the SDK: JSON-RPC
 * error objects with `id: null`, the stable Leasehold code in `error.data`,
 * and the headers RFC 6750 / RFC 9728 ask for.
 */

/** JSON-RPC error codes: -32700 parse error, -32600 invalid request, -32601 method not found, -32001 session not found (SDK convention), -32000 other. */
export type RpcCode = -32700 | -32600 | -32601 | -32602 | -32001 | -32000;

export type RpcId = string | number | null;

export function rpcError(
  status: number,
  rpcCode: RpcCode,
  code: ErrorCode,
  message: string,
  options: { hint?: string; retryable?: boolean; headers?: Record<string, string>; id?: RpcId } = {},
): Response {
  const body = {
    jsonrpc: "2.0",
    error: { code: rpcCode, message, data: { code, message, retryable: options.retryable ?? false, hint: options.hint ?? "" } },
    // The request's id when there was exactly one request, so a client can match the error to it.
    id: options.id ?? null,
  };
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "cache-control": "no-store", ...options.headers } });
}

function quoted(value: string): string {
  return value.replace(/["\\\r\n]/g, " ");
}

/**
 * 401 for a missing, malformed, unknown, expired, revoked or wrong-audience
 * token. The challenge names the RFC 9728 metadata (which names the hub as
 * authorization server) and the scopes a client may ask for, so a client
 * that speaks the MCP authorization spec starts its OAuth flow from here.
 */
export function unauthorized(publicUrl: string, message: string, tokenPresented: boolean): Response {
  const parts = [`Bearer ${challengeParams(publicUrl)}`];
  if (tokenPresented) parts.push(`error="invalid_token"`, `error_description="${quoted(message)}"`);
  return rpcError(401, -32000, "UNAUTHENTICATED", message, {
    hint: "send Authorization: Bearer <token> — an lh_ token (`leasehold token create`) or an OAuth access token from this hub (clients that speak the MCP authorization spec get one through the browser consent)",
    headers: { "www-authenticate": parts.join(", ") },
  });
}

/**
 * 403 for a tool outside the token's scope (RFC 6750 insufficient_scope).
 * `scope` names what is needed, so an OAuth client can step up: ask again,
 * and an admin consents to more (or not).
 */
export function insufficientScope(publicUrl: string, message: string, hint: string): Response {
  return rpcError(403, -32000, "FORBIDDEN", message, {
    hint,
    headers: { "www-authenticate": `Bearer error="insufficient_scope", ${challengeParams(publicUrl)}, error_description="${quoted(message)}"` },
  });
}

export function refusalResponse(refusal: Refusal, headers?: Record<string, string>): Response {
  const rpc: RpcCode = refusal.status === 400 ? -32600 : -32000;
  return rpcError(refusal.status, rpc, refusal.code, refusal.message, { retryable: refusal.status === 429, ...(headers === undefined ? {} : { headers }) });
}

export function rateLimited(message: string, retryAfterS: number): Response {
  return rpcError(429, -32000, "RATE_LIMITED", message, { retryable: true, hint: `retry after ${retryAfterS} s`, headers: { "retry-after": String(retryAfterS) } });
}

export function sessionNotFound(): Response {
  return rpcError(404, -32001, "NOT_FOUND", "Session not found", { hint: "the session expired, ended, or belongs to another token; initialize a new one" });
}
