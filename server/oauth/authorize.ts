import { createHash, randomBytes, randomUUID } from "node:crypto";
import { and, count, eq, isNull, lte } from "drizzle-orm";
import type { Database } from "../db";
import { agentTokens, oauthAuthorizations } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { digestOf, hashActor } from "../ledger/entry";
import { normaliseScope, scopeDigest, type TokenScope } from "../tokens";
import { findClient, markClientUsed, resolveClient, type ClientResolver, type OAuthClient } from "./clients";
import { checkRedirectUriHost, nameWarnings, redirectUriMatches } from "./client-metadata";
import { mcpResourceUrl } from "./metadata";
import { isCodeChallenge } from "./pkce";
import { parseScopeParam, SCOPE_OBSERVE_ANY, SCOPE_WRITE, scopesOf, type OAuthScope } from "./scopes";

/**
 * The authorization endpoint (RFC 6749 §4.1 with OAuth 2.1's rules), in two
 * steps around a person:
 * 1. `beginAuthorization` checks the request the client sent the browser
 *    with. Until the client and its redirect URI are known good, errors are
 *    shown on the page and never redirected (no open redirect); after, they
 *    go back to the client as `error=` on its redirect URI. A good request
 *    is stored (10 minutes) under a random handle that only the consent page
 *    rendered for this admin carries: the handle is the CSRF token.
 * 2. `decideAuthorization` is the admin's answer: deny, or approve with any
 *    narrowing (read-only, tools, hosts, expiry). Approval makes the grant —
 *    a row in agent_tokens scoped exactly like an `lh_` token — sealed
 *    `oauth_grant/1` before it exists, and a one-time code (60 s) bound to
 *    the client, redirect URI, PKCE challenge and resource.
 */

const REQUEST_TTL_MS = 10 * 60_000;
/** An authorization code is redeemable this long after the admin approves (unredeemed.ts shows the grant as pending until then). */
export const CODE_TTL_MS = 60_000;
/** Undecided requests one client may have open at once (each is a row an unauthenticated link can create). */
const MAX_PENDING_PER_CLIENT = 20;
const MAX_STATE_CHARS = 1024;
const GRANT_NAME = /[^A-Za-z0-9 ._-]/g;

/** Lifetimes an admin can choose for a grant (the refresh token's life; access tokens live 15 minutes). */
export const GRANT_LIFETIMES_S = [3600, 86_400, 7 * 86_400, 30 * 86_400, 90 * 86_400] as const;
export const DEFAULT_GRANT_LIFETIME_S = 30 * 86_400;

export interface OAuthContext {
  db: Database;
  publicUrl: string;
  /** The host name the hub's admin pages are served from (context.ts `adminHostOf`): no redirect URI may be on it. */
  adminHost: string;
  resolver: ClientResolver;
  knownTools: readonly string[];
}

export interface AdminIdentity {
  adminId: string;
  username: string;
}

export interface PendingAuthorization {
  /** Carried by the consent form; never stored (only its sha256). */
  handle: string;
  client: OAuthClient;
  /** What the consent page must say about the client's name before anyone trusts it (client-metadata `nameWarnings`). */
  nameWarnings: string[];
  redirectUri: string;
  /** What the person should recognise: where the browser goes next. */
  redirectTarget: string;
  scopes: OAuthScope[];
  resource: string;
  expiresAt: Date;
}

export type BeginResult =
  | { kind: "error"; title: string; message: string }
  | { kind: "redirect"; location: string }
  | { kind: "consent"; pending: PendingAuthorization };

function handleDigest(handle: string): string {
  return createHash("sha256").update(handle, "utf8").digest("hex");
}

export function codeDigest(code: string): Uint8Array {
  return new Uint8Array(createHash("sha256").update(code, "utf8").digest());
}

/** `redirect_uri` plus the response parameters (and RFC 9207 `iss`), keeping any query it already has. */
function redirectWith(redirectUri: string, publicUrl: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries(params)) if (value !== null) url.searchParams.set(key, value);
  url.searchParams.set("iss", publicUrl);
  return url.toString();
}

function redirectTarget(uri: string): string {
  try {
    const url = new URL(uri);
    return url.protocol === "http:" || url.protocol === "https:" ? `${url.protocol}//${url.host}` : `${url.protocol}${url.pathname.split("/")[0] ?? ""}`;
  } catch {
    return uri;
  }
}

/** A single value, or why not (RFC 6749 §3.1: a parameter sent twice is an error). */
function single(query: URLSearchParams, name: string): { value: string | null } | { duplicate: true } {
  const all = query.getAll(name);
  if (all.length > 1) return { duplicate: true };
  return { value: all[0] ?? null };
}

export async function beginAuthorization(ctx: OAuthContext, query: URLSearchParams, admin: AdminIdentity, now = new Date()): Promise<BeginResult> {
  const pageError = (message: string): BeginResult => ({ kind: "error", title: "This authorization request cannot be used", message });
  const clientParam = single(query, "client_id");
  const redirectParam = single(query, "redirect_uri");
  if ("duplicate" in clientParam || "duplicate" in redirectParam) return pageError("client_id and redirect_uri must each be sent once.");
  if (clientParam.value === null || clientParam.value === "") return pageError("The request names no client_id.");
  if (redirectParam.value === null || redirectParam.value === "") return pageError("The request names no redirect_uri (this hub requires it).");
  const found = await resolveClient(ctx.db, clientParam.value, ctx.resolver, ctx.adminHost, now);
  if (!found.ok) return pageError(found.reason);
  const client = found.client;
  const redirectUri = redirectParam.value;
  if (!redirectUriMatches(client.redirectUris, redirectUri)) {
    return pageError(`The redirect_uri is not one the client registered, so the browser will not be sent there. Registered: ${client.redirectUris.join(", ")}.`);
  }
  // Also for clients stored before the admin's host name was what it is now.
  const onAdminHost = checkRedirectUriHost(redirectUri, ctx.adminHost);
  if (!onAdminHost.ok) return pageError(`The browser will not be sent to ${redirectUri}: ${onAdminHost.reason}.`);

  // From here on the client and its redirect URI are trusted enough to hear errors.
  const stateParam = single(query, "state");
  const state = "duplicate" in stateParam ? null : stateParam.value;
  const back = (error: string, description: string): BeginResult => ({
    kind: "redirect",
    location: redirectWith(redirectUri, ctx.publicUrl, { error, error_description: description, state }),
  });
  for (const name of ["state", "response_type", "code_challenge", "code_challenge_method", "scope", "resource"]) {
    if (query.getAll(name).length > 1) return back("invalid_request", `${name} was sent more than once`);
  }
  if (state !== null && state.length > MAX_STATE_CHARS) return back("invalid_request", `state is longer than ${MAX_STATE_CHARS} characters`);
  if (query.get("response_type") !== "code") return back("unsupported_response_type", "only response_type=code is supported");
  const challenge = query.get("code_challenge");
  if (challenge === null) return back("invalid_request", "PKCE is required: send code_challenge and code_challenge_method=S256");
  if (query.get("code_challenge_method") !== "S256") return back("invalid_request", "code_challenge_method must be S256 (plain is not accepted)");
  if (!isCodeChallenge(challenge)) return back("invalid_request", "code_challenge must be the 43-character base64url SHA-256 of the verifier");
  const scope = parseScopeParam(query.get("scope"));
  if (!scope.ok) return back("invalid_scope", `unknown scope ${scope.unknown.join(" ")}; this hub has mcp:read and mcp:write`);
  const resource = query.get("resource") ?? mcpResourceUrl(ctx.publicUrl);
  if (resource !== mcpResourceUrl(ctx.publicUrl)) return back("invalid_target", `this authorization server issues tokens only for ${mcpResourceUrl(ctx.publicUrl)}`);

  await ctx.db.delete(oauthAuthorizations).where(lte(oauthAuthorizations.expiresAt, now));
  const [pending] = await ctx.db
    .select({ n: count() })
    .from(oauthAuthorizations)
    .where(and(eq(oauthAuthorizations.clientId, client.id), isNull(oauthAuthorizations.decidedAt)));
  if (Number(pending?.n ?? 0) >= MAX_PENDING_PER_CLIENT) {
    return pageError(`This client already has ${MAX_PENDING_PER_CLIENT} authorization requests waiting; they expire after 10 minutes.`);
  }
  const handle = randomBytes(32).toString("base64url");
  const expiresAt = new Date(now.getTime() + REQUEST_TTL_MS);
  await ctx.db.insert(oauthAuthorizations).values({
    id: handleDigest(handle),
    clientId: client.id,
    redirectUri,
    state,
    codeChallenge: challenge,
    scopes: scope.scopes,
    resource,
    adminId: admin.adminId,
    createdAt: now,
    expiresAt,
  });
  return { kind: "consent", pending: { handle, client, nameWarnings: nameWarnings(client.name, client.nameAsSent), redirectUri, redirectTarget: redirectTarget(redirectUri), scopes: scope.scopes, resource, expiresAt } };
}

export interface Decision {
  handle: string;
  approve: boolean;
  /** Narrowing only: a request without mcp:write is read-only whatever is sent. */
  readOnly: boolean;
  /**
   * The owner grants the sandbox-first scope (observe `any`). Narrowing only:
   * it takes effect only when the client asked for `mcp:observe-any` and the
   * grant is not read-only; otherwise the grant is `judged` whatever is sent.
   */
  observeAny?: boolean;
  tools: string[] | null;
  hosts: string[] | null;
  lifetimeS: number;
}

function grantName(client: OAuthClient): string {
  const cleaned = client.name.replace(GRANT_NAME, " ").replace(/\s+/g, " ").trim();
  const name = `OAuth ${cleaned}`.slice(0, 64).trim();
  return /^[A-Za-z0-9]/.test(name) ? name : "OAuth client";
}

/** The admin's answer. Returns where the browser goes next (the client's redirect URI). */
export async function decideAuthorization(ctx: OAuthContext, decision: Decision, admin: AdminIdentity, now = new Date()): Promise<{ location: string; tokenId: string | null }> {
  if (!(GRANT_LIFETIMES_S as readonly number[]).includes(decision.lifetimeS)) {
    throw new LeaseholdError("INVALID_ARGUMENT", `the grant lifetime must be one of ${GRANT_LIFETIMES_S.join(", ")} seconds`, { tier: "hub" });
  }
  const result = await ctx.db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    const [row] = await tx.select().from(oauthAuthorizations).where(eq(oauthAuthorizations.id, handleDigest(decision.handle))).for("update");
    const gone = new LeaseholdError("NOT_FOUND", "this authorization request is unknown or has expired", { tier: "hub", hint: "start again from the MCP client" });
    if (row === undefined || row.expiresAt.getTime() <= now.getTime()) throw gone;
    if (row.adminId !== admin.adminId) throw new LeaseholdError("FORBIDDEN", "this authorization request was shown to another admin", { tier: "hub", hint: "open the client's authorization link yourself" });
    if (row.decidedAt !== null) throw new LeaseholdError("INVALID_ARGUMENT", "this authorization request has already been decided", { tier: "hub" });
    const client = await findClient(tx, row.clientId);
    if (client === undefined) throw gone;
    const clientDigest = digestOf(client.id);
    // Browser actions record the admin by id, as tokens made in the browser do (server/trpc tokens).
    const actor = hashActor("admin", admin.adminId);
    const requested = row.scopes as OAuthScope[];

    if (!decision.approve) {
      await appendEntry(tx, {
        type: "oauth_grant/1",
        time: now,
        action_id: null,
        actor,
        data: { event: "denied", client_digest: clientDigest, client_kind: client.kind, token_id: null, scopes: [], scope_digest: null, read_only: true, expires_at: null },
      });
      await tx.update(oauthAuthorizations).set({ decidedAt: now, outcome: "denied" }).where(eq(oauthAuthorizations.id, row.id));
      return { location: redirectWith(row.redirectUri, ctx.publicUrl, { error: "access_denied", error_description: "the admin denied the request", state: row.state }), tokenId: null };
    }

    const readOnly = decision.readOnly || !requested.includes(SCOPE_WRITE);
    const observe = decision.observeAny === true && !readOnly && requested.includes(SCOPE_OBSERVE_ANY) ? "any" : "judged";
    const { tools, hosts } = normaliseScope({ tools: decision.tools, hosts: decision.hosts }, ctx.knownTools);
    const scope: TokenScope = { readOnly, tools, hosts, observe };
    const expiresAt = new Date(now.getTime() + decision.lifetimeS * 1000);
    const tokenId = randomUUID();
    // Sealed before the grant exists: no grant ever works without its record.
    await appendEntry(tx, {
      type: "oauth_grant/1",
      time: now,
      action_id: null,
      actor,
      data: { event: "granted", client_digest: clientDigest, client_kind: client.kind, token_id: tokenId, scopes: scopesOf(readOnly, observe), scope_digest: scopeDigest(scope), read_only: readOnly, expires_at: expiresAt.toISOString() },
    });
    await tx.insert(agentTokens).values({
      id: tokenId,
      name: grantName(client),
      kind: "oauth",
      oauthClientId: client.id,
      tokenHash: null,
      readOnly,
      observe,
      tools,
      hosts,
      createdBy: admin.adminId,
      createdAt: now,
      expiresAt,
    });
    const code = randomBytes(32).toString("base64url");
    await tx
      .update(oauthAuthorizations)
      .set({
        decidedAt: now,
        outcome: "granted",
        codeHash: codeDigest(code),
        codeExpiresAt: new Date(now.getTime() + CODE_TTL_MS),
        tokenId,
        // Kept past the code's life so a replayed code is recognised (and its grant revoked).
        expiresAt: new Date(now.getTime() + REQUEST_TTL_MS),
      })
      .where(eq(oauthAuthorizations.id, row.id));
    await markClientUsed(tx, client.id, now);
    return { location: redirectWith(row.redirectUri, ctx.publicUrl, { code, state: row.state }), tokenId };
  });
  return result;
}
