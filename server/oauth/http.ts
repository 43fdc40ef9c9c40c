import { readBoundedBody } from "../http/body";
import { HEADER_PEER } from "../trust/protocol";
import type { OAuthContext } from "./authorize";
import { registerDynamicClient } from "./clients";
import { authorizationServerMetadata, protectedResourceMetadata } from "./metadata";
import { getOAuthSettings } from "./settings";
import { exchangeCode, refreshGrant, revokeOAuthToken, type TokenResult } from "./token-service";

/**
 * The authorization server's HTTP endpoints as Request → Response handlers
 * (app/api/oauth/* and the well-known routes only hand requests over).
 *
 * Why not the MCP SDK's `mcpAuthRouter`: it is Express middleware around an
 * OAuthServerProvider, while the hub's routes are Next.js Web handlers, and
 * the hub's grants must be rows in its own token table so one authorization
 * decision covers both kinds of token. The SDK's zod schemas are still the
 * boundary for client metadata (client-metadata/registration.ts).
 *
 * These endpoints take no cookies and no ambient credentials, so they answer
 * any origin (CORS `*`): browser-based MCP clients call them directly.
 */

const FORM_MAX_BYTES = 16 * 1024;
const CORS = { "access-control-allow-origin": "*", "access-control-allow-methods": "GET, POST, OPTIONS", "access-control-allow-headers": "content-type, mcp-protocol-version", "access-control-max-age": "600" };

function json(status: number, body: unknown, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache", ...CORS, ...extra } });
}

function oauthError(status: number, error: string, description: string, extra: Record<string, string> = {}): Response {
  return json(status, { error, error_description: description }, extra);
}

export function preflight(): Response {
  return new Response(null, { status: 204, headers: CORS });
}

export function protectedResourceResponse(publicUrl: string): Response {
  return json(200, protectedResourceMetadata(publicUrl));
}

export async function authorizationServerResponse(ctx: OAuthContext): Promise<Response> {
  const settings = await getOAuthSettings(ctx.db);
  return json(200, authorizationServerMetadata(ctx.publicUrl, { dynamicRegistration: settings.dynamicRegistration }));
}

type Form = { ok: true; params: URLSearchParams } | { ok: false; response: Response };

/** RFC 6749 §3.2: POST, application/x-www-form-urlencoded, each parameter at most once. */
async function readForm(request: Request): Promise<Form> {
  if (request.method !== "POST") return { ok: false, response: oauthError(405, "invalid_request", "use POST", { allow: "POST, OPTIONS" }) };
  const type = (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return { ok: false, response: oauthError(400, "invalid_request", "the body must be application/x-www-form-urlencoded") };
  const body = await readBoundedBody(request, FORM_MAX_BYTES);
  if (!body.ok) return { ok: false, response: oauthError(body.status, "invalid_request", body.error.message) };
  const params = new URLSearchParams(new TextDecoder("utf-8", { fatal: false }).decode(body.value));
  const seen = new Set<string>();
  for (const key of params.keys()) {
    if (seen.has(key)) return { ok: false, response: oauthError(400, "invalid_request", `${key} was sent more than once`) };
    seen.add(key);
  }
  return { ok: true, params };
}

/**
 * Public clients only: the client identifies itself with `client_id` in the
 * body. A client presenting a secret (Basic or client_secret) is refused
 * rather than half-trusted: the hub registered no secret for anyone.
 */
function clientIdOf(request: Request, params: URLSearchParams): { ok: true; clientId: string } | { ok: false; response: Response } {
  if (request.headers.has("authorization") || params.has("client_secret") || params.has("client_assertion")) {
    return { ok: false, response: oauthError(401, "invalid_client", "this hub's clients are public (token_endpoint_auth_method none); send client_id and no secret", { "www-authenticate": 'Basic realm="leasehold"' }) };
  }
  const clientId = params.get("client_id");
  if (clientId === null || clientId === "") return { ok: false, response: oauthError(401, "invalid_client", "client_id is required") };
  return { ok: true, clientId };
}

function tokenResponse(result: TokenResult): Response {
  return result.ok ? json(200, result.body) : oauthError(result.status, result.error, result.description);
}

export async function handleTokenRequest(request: Request, ctx: OAuthContext): Promise<Response> {
  const form = await readForm(request);
  if (!form.ok) return form.response;
  const p = form.params;
  const client = clientIdOf(request, p);
  if (!client.ok) return client.response;
  const grantType = p.get("grant_type");
  if (grantType === "authorization_code") {
    const code = p.get("code");
    if (code === null || code === "") return oauthError(400, "invalid_request", "code is required");
    return tokenResponse(await exchangeCode(ctx.db, ctx.publicUrl, { clientId: client.clientId, code, redirectUri: p.get("redirect_uri"), codeVerifier: p.get("code_verifier"), resource: p.get("resource") }));
  }
  if (grantType === "refresh_token") {
    const refreshToken = p.get("refresh_token");
    if (refreshToken === null || refreshToken === "") return oauthError(400, "invalid_request", "refresh_token is required");
    return tokenResponse(await refreshGrant(ctx.db, ctx.publicUrl, { clientId: client.clientId, refreshToken, resource: p.get("resource"), scope: p.get("scope") }));
  }
  return oauthError(400, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token");
}

export async function handleRevocationRequest(request: Request, ctx: OAuthContext): Promise<Response> {
  const form = await readForm(request);
  if (!form.ok) return form.response;
  const client = clientIdOf(request, form.params);
  if (!client.ok) return client.response;
  const token = form.params.get("token");
  if (token === null || token === "") return oauthError(400, "invalid_request", "token is required");
  await revokeOAuthToken(ctx.db, { clientId: client.clientId, token });
  return new Response(null, { status: 200, headers: { "cache-control": "no-store", ...CORS } });
}

/** RFC 7591 dynamic client registration (JSON body), while an owner leaves it on. */
export async function handleRegistrationRequest(request: Request, ctx: OAuthContext): Promise<Response> {
  if (request.method !== "POST") return oauthError(405, "invalid_request", "use POST", { allow: "POST, OPTIONS" });
  const settings = await getOAuthSettings(ctx.db);
  if (!settings.dynamicRegistration) {
    return oauthError(403, "access_denied", "dynamic client registration is turned off on this hub; an admin can register the client on the OAuth clients page, or the client can use a Client ID Metadata Document");
  }
  const type = (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") return oauthError(400, "invalid_client_metadata", "the body must be application/json");
  const body = await readBoundedBody(request, FORM_MAX_BYTES);
  if (!body.ok) return oauthError(body.status, "invalid_client_metadata", body.error.message);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body.value));
  } catch {
    return oauthError(400, "invalid_client_metadata", "the body is not valid JSON");
  }
  // The address the hub's own server recorded (bin/next-web.ts replaces any client-sent value).
  const from = request.headers.get(HEADER_PEER) || "unknown";
  const result = await registerDynamicClient(ctx.db, parsed, { adminHost: ctx.adminHost, from });
  if (!result.ok) return oauthError(result.status, result.error, result.description, result.retryAfterS === undefined ? {} : { "retry-after": String(result.retryAfterS) });
  return json(201, result.response);
}
