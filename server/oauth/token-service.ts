import { and, eq, isNotNull, lte, or } from "drizzle-orm";
import type { Database } from "../db";
import { agentTokens, oauthAuthorizations, oauthTokens } from "../db/schema";
import { fromRow, generateAccessToken, generateRefreshToken, hashTokenSecret, looksLikeAccessToken, looksLikeRefreshToken, revokeToken, tokenStatus, type AgentToken } from "../tokens";
import { codeDigest } from "./authorize";
import { mcpResourceUrl } from "./metadata";
import { verifierMatches } from "./pkce";
import { parseScopeParam, scopesOf, SUPPORTED_SCOPES, type OAuthScope } from "./scopes";

/**
 * The token endpoint's two grants and RFC 7009 revocation.
 *
 * Every OAuth bearer credential belongs to a grant (an agent_tokens row of
 * kind `oauth`): revoking the grant — from the tokens page, by removing its
 * client, or automatically below — ends every access and refresh token of it
 * and what the grant started (server/tokens/revocation.ts).
 *
 * Automatic revocations (the grant is presumed stolen):
 * - an authorization code presented a second time (RFC 6749 §4.1.2);
 * - a refresh token presented after it was rotated (OAuth 2.1 §4.3.1).
 */

export const ACCESS_TOKEN_TTL_S = 15 * 60;
/**
 * How long a rotated refresh token is kept to recognise its reuse. Past
 * this, presenting it is just an unknown token (refused, but the grant is
 * not revoked): a bound on the rows a long-lived grant leaves behind.
 */
const USED_REFRESH_KEPT_MS = 7 * 86_400_000;
/** Who a revocation the hub makes by itself is recorded as (a `system` actor). */
export const REUSE_REVOKER = "oauth-reuse-detection";

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export type TokenResult = { ok: true; body: TokenResponse } | { ok: false; status: 400 | 401; error: string; description: string };

const invalidGrant = (description: string): TokenResult => ({ ok: false, status: 400, error: "invalid_grant", description });
const invalidTarget = (publicUrl: string): TokenResult => ({ ok: false, status: 400, error: "invalid_target", description: `tokens are issued only for the resource ${mcpResourceUrl(publicUrl)}` });

/**
 * What a presented token carries: its grant's scopes, narrowed by its own
 * row's (a refresh that asked for less), never widened by them.
 */
function carriedScopes(grant: AgentToken, rowScopes: string[] | null): OAuthScope[] {
  const granted = scopesOf(grant.readOnly, grant.observe);
  return rowScopes === null ? granted : granted.filter((s) => rowScopes.includes(s));
}

/**
 * A new access and refresh token for `grant`, both carrying `scopes` (a
 * subset of the grant's; stored as null when it is all of them, so the
 * row follows the grant). The response's `scope` says what was given.
 */
async function issuePair(tx: Database, grant: AgentToken, resource: string, now: Date, scopes: readonly OAuthScope[] = scopesOf(grant.readOnly, grant.observe)): Promise<TokenResponse> {
  // Each rotation adds two rows; the grant's dead ones go here, so a grant's rows stay bounded.
  await tx
    .delete(oauthTokens)
    .where(and(eq(oauthTokens.tokenId, grant.id), or(lte(oauthTokens.expiresAt, now), and(isNotNull(oauthTokens.usedAt), lte(oauthTokens.usedAt, new Date(now.getTime() - USED_REFRESH_KEPT_MS))))));
  const access = generateAccessToken();
  const refresh = generateRefreshToken();
  const grantEnd = grant.expiresAt?.getTime() ?? now.getTime() + 90 * 86_400_000;
  const accessEnd = Math.min(now.getTime() + ACCESS_TOKEN_TTL_S * 1000, grantEnd);
  const given = SUPPORTED_SCOPES.filter((s) => scopes.includes(s) && scopesOf(grant.readOnly, grant.observe).includes(s));
  const stored = given.length === scopesOf(grant.readOnly, grant.observe).length ? null : given;
  await tx.insert(oauthTokens).values([
    { tokenId: grant.id, kind: "access", hash: hashTokenSecret(access), resource, scopes: stored, createdAt: now, expiresAt: new Date(accessEnd) },
    { tokenId: grant.id, kind: "refresh", hash: hashTokenSecret(refresh), resource, scopes: stored, createdAt: now, expiresAt: new Date(grantEnd) },
  ]);
  return { access_token: access, token_type: "Bearer", expires_in: Math.max(1, Math.floor((accessEnd - now.getTime()) / 1000)), refresh_token: refresh, scope: given.join(" ") };
}

export interface CodeExchange {
  clientId: string;
  code: string;
  redirectUri: string | null;
  codeVerifier: string | null;
  resource: string | null;
}

/** `grant_type=authorization_code`. */
export async function exchangeCode(db: Database, publicUrl: string, input: CodeExchange, now = new Date()): Promise<TokenResult> {
  const audience = mcpResourceUrl(publicUrl);
  if (input.resource !== null && input.resource !== audience) return invalidTarget(publicUrl);
  let replayedGrant: string | null = null;
  const result = await db.transaction(async (txRaw): Promise<TokenResult> => {
    const tx = txRaw as unknown as Database;
    const [row] = await tx.select().from(oauthAuthorizations).where(eq(oauthAuthorizations.codeHash, codeDigest(input.code))).for("update");
    if (row === undefined || row.tokenId === null || row.codeExpiresAt === null) return invalidGrant("the authorization code is not valid");
    if (row.codeUsedAt !== null) {
      replayedGrant = row.tokenId;
      return invalidGrant("the authorization code was already used; the grant made with it has been revoked");
    }
    if (row.codeExpiresAt.getTime() <= now.getTime()) return invalidGrant("the authorization code has expired");
    // Spent from here on, whatever the outcome: a code is one attempt.
    await tx.update(oauthAuthorizations).set({ codeUsedAt: now }).where(eq(oauthAuthorizations.id, row.id));
    if (row.clientId !== input.clientId) return invalidGrant("the authorization code was issued to another client");
    if (input.redirectUri !== row.redirectUri) return invalidGrant("redirect_uri must be exactly the one sent to the authorization endpoint");
    if (input.codeVerifier === null || !verifierMatches(input.codeVerifier, row.codeChallenge)) return invalidGrant("code_verifier does not match the code_challenge (PKCE S256)");
    if (row.resource !== audience) return invalidTarget(publicUrl);
    const [grantRow] = await tx.select().from(agentTokens).where(eq(agentTokens.id, row.tokenId)).for("share");
    if (grantRow === undefined) return invalidGrant("the grant no longer exists");
    const grant = fromRow(grantRow);
    if (tokenStatus(grant, now) !== "active") return invalidGrant(`the grant is ${tokenStatus(grant, now)}`);
    return { ok: true, body: await issuePair(tx, grant, audience, now) };
  });
  // After the transaction that marked the replay: revocation takes its own locks.
  if (replayedGrant !== null) await revokeToken(db, replayedGrant, REUSE_REVOKER, now, "system");
  return result;
}

export interface RefreshExchange {
  clientId: string;
  refreshToken: string;
  resource: string | null;
  scope: string | null;
}

/**
 * `grant_type=refresh_token`: the presented token is spent and a new pair
 * issued; a spent one presented again revokes the grant. `scope` may ask
 * for less than the presented refresh token carries (RFC 6749 §6), and the
 * new pair then carries only that — `mcp:read` on a read-write grant yields
 * tokens that only read. Omitted, the new pair carries what the presented
 * refresh token did; a narrowed refresh token never widens again (more
 * needs a new consent). Asking for more is `invalid_scope`.
 */
export async function refreshGrant(db: Database, publicUrl: string, input: RefreshExchange, now = new Date()): Promise<TokenResult> {
  const audience = mcpResourceUrl(publicUrl);
  if (input.resource !== null && input.resource !== audience) return invalidTarget(publicUrl);
  if (!looksLikeRefreshToken(input.refreshToken)) return invalidGrant("the refresh token is not valid");
  let reusedGrant: string | null = null;
  const result = await db.transaction(async (txRaw): Promise<TokenResult> => {
    const tx = txRaw as unknown as Database;
    const [row] = await tx
      .select({ token: oauthTokens, grant: agentTokens })
      .from(oauthTokens)
      .innerJoin(agentTokens, eq(agentTokens.id, oauthTokens.tokenId))
      .where(and(eq(oauthTokens.hash, hashTokenSecret(input.refreshToken)), eq(oauthTokens.kind, "refresh")))
      .for("update", { of: oauthTokens });
    if (row === undefined) return invalidGrant("the refresh token is not valid");
    const grant = fromRow(row.grant);
    if (grant.oauthClientId !== input.clientId) return invalidGrant("the refresh token was issued to another client");
    if (row.token.usedAt !== null) {
      reusedGrant = grant.id;
      return invalidGrant("the refresh token was already used; the grant has been revoked (refresh token reuse)");
    }
    if (row.token.expiresAt.getTime() <= now.getTime()) return invalidGrant("the refresh token has expired");
    if (row.token.resource !== audience) return invalidTarget(publicUrl);
    if (tokenStatus(grant, now) !== "active") return invalidGrant(`the grant is ${tokenStatus(grant, now)}`);
    const held = carriedScopes(grant, row.token.scopes);
    let given = held;
    if (input.scope !== null && input.scope.trim() !== "") {
      const asked = parseScopeParam(input.scope);
      if (!asked.ok || asked.scopes.some((s) => !held.includes(s))) return { ok: false, status: 400, error: "invalid_scope", description: `this refresh token carries ${held.join(" ")}; more needs a new consent` };
      // `mcp:write` implies `mcp:read` in what a token may do; a request naming only mcp:write gets both.
      given = asked.scopes;
    }
    await tx.update(oauthTokens).set({ usedAt: now }).where(eq(oauthTokens.id, row.token.id));
    return { ok: true, body: await issuePair(tx, grant, audience, now, given) };
  });
  if (reusedGrant !== null) await revokeToken(db, reusedGrant, REUSE_REVOKER, now, "system");
  return result;
}

/**
 * RFC 7009. A refresh token revokes its whole grant (and so every access
 * token of it); an access token only itself. Unknown tokens, and tokens of
 * another client, get the same 200 (the endpoint reveals nothing).
 */
export async function revokeOAuthToken(db: Database, input: { clientId: string; token: string }, now = new Date()): Promise<void> {
  const isRefresh = looksLikeRefreshToken(input.token);
  if (!isRefresh && !looksLikeAccessToken(input.token)) return;
  const [row] = await db
    .select({ id: oauthTokens.id, grantId: agentTokens.id, clientId: agentTokens.oauthClientId })
    .from(oauthTokens)
    .innerJoin(agentTokens, eq(agentTokens.id, oauthTokens.tokenId))
    .where(eq(oauthTokens.hash, hashTokenSecret(input.token)))
    .limit(1);
  if (row === undefined || row.clientId !== input.clientId) return;
  if (isRefresh) await revokeToken(db, row.grantId, `oauth-client:${input.clientId}`, now);
  else await db.delete(oauthTokens).where(eq(oauthTokens.id, row.id));
}
