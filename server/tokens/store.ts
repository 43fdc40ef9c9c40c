import { randomUUID } from "node:crypto";
import { and, desc, eq } from "drizzle-orm";
import type { Database } from "../db";
import { agentTokens, oauthTokens } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { digestOfJson, hashActor } from "../ledger/entry";
import type { ObserveScope } from "../policy/decide";
import { digestsEqual, generateTokenSecret, hashTokenSecret, looksLikeAccessToken, looksLikeToken } from "./secret";

/** What a token may do. `null` lists mean every tool / every host the hub exposes. */
export interface TokenScope {
  readOnly: boolean;
  tools: string[] | null;
  hosts: string[] | null;
  /**
   * `judged` (absent = judged): every call is rated and held or granted as
   * its risk says. `any` (sandbox-first): a call to an operation that can run
   * under an observe lease runs at once under one, whatever its risk
   * (server/policy/decide.ts). Never together with `readOnly`.
   */
  observe?: ObserveScope;
}

export interface AgentToken extends TokenScope {
  observe: ObserveScope;
  id: string;
  name: string;
  /** `static`: an `lh_` token; `oauth`: a grant an admin consented to, used through rotating `lha_` access tokens. */
  kind: "static" | "oauth";
  /** The OAuth client of an `oauth` grant; null for `static`. */
  oauthClientId: string | null;
  createdBy: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

export type TokenStatus = "active" | "expired" | "revoked";

export function tokenStatus(token: Pick<AgentToken, "expiresAt" | "revokedAt">, now: Date): TokenStatus {
  if (token.revokedAt !== null) return "revoked";
  if (token.expiresAt !== null && token.expiresAt.getTime() <= now.getTime()) return "expired";
  return "active";
}

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;
const HOST_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const TOOL_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

export interface CreateTokenInput extends TokenScope {
  name: string;
  expiresAt: Date | null;
  /** Who asked, for the ledger's hashed actor (e.g. `cli`). */
  createdBy: string;
}

export interface CreateTokenOptions {
  /** Tool names the hub knows; a scope naming anything else is refused (a typo must not grant nothing silently). */
  knownTools: readonly string[];
  now?: Date;
}

function invalid(message: string, hint?: string): LeaseholdError {
  return new LeaseholdError("INVALID_ARGUMENT", message, { tier: "hub", ...(hint === undefined ? {} : { hint }) });
}

/** The digest token/1 and oauth_grant/1 record; `observe` joins it only when it is `any`, so judged scopes keep their digests. */
export function scopeDigest(scope: TokenScope): `sha256:${string}` {
  return digestOfJson({ read_only: scope.readOnly, tools: scope.tools, hosts: scope.hosts, ...(scope.observe === "any" ? { observe: "any" } : {}) });
}

/**
 * A read-only scope with observe `any` asks for two things that contradict
 * each other (no mutating operation at all / every mutating call at once
 * under observe): refused, never resolved silently one way.
 */
export function checkObserveScope(scope: Pick<TokenScope, "readOnly" | "observe">): void {
  if (scope.observe !== undefined && scope.observe !== "judged" && scope.observe !== "any") throw invalid(`observe scope ${JSON.stringify(scope.observe)} is not judged or any`);
  if (scope.readOnly && scope.observe === "any") {
    throw invalid("a read-only token cannot have observe scope any: read-only refuses every mutating operation, observe any runs them at once under the observe lease", "drop --read-only, or leave --observe at judged");
  }
}

/**
 * Issues a token. The `token/1 issued` entry is appended to the ledger
 * BEFORE the token row exists: if the append fails (LEDGER_UNAVAILABLE) no
 * token is created, so no token ever works without its record.
 * Returns the secret, which is never stored and cannot be shown again.
 */
export async function createToken(db: Database, input: CreateTokenInput, options: CreateTokenOptions): Promise<{ token: AgentToken; secret: string }> {
  const now = options.now ?? new Date();
  if (!NAME_PATTERN.test(input.name)) throw invalid(`token name ${JSON.stringify(input.name)} is not allowed`, "1-64 characters: letters, digits, space, . _ -; starting with a letter or digit");
  const { tools, hosts } = normaliseScope(input, options.knownTools);
  checkObserveScope(input);
  const observe: ObserveScope = input.observe ?? "judged";
  if (input.expiresAt !== null && input.expiresAt.getTime() <= now.getTime()) throw invalid("the expiry is in the past");

  const id = randomUUID();
  const secret = generateTokenSecret();
  const scope: TokenScope = { readOnly: input.readOnly, tools, hosts, observe };
  await appendEntry(db, {
    type: "token/1",
    time: now,
    action_id: null,
    actor: hashActor("admin", input.createdBy),
    data: { event: "issued", token_id: id, scope_digest: scopeDigest(scope), read_only: input.readOnly, ...(observe === "any" ? { observe } : {}), expires_at: input.expiresAt?.toISOString() ?? null },
  });
  const [row] = await db
    .insert(agentTokens)
    .values({ id, name: input.name, tokenHash: hashTokenSecret(secret), readOnly: input.readOnly, observe, tools, hosts, createdBy: input.createdBy, createdAt: now, expiresAt: input.expiresAt })
    .returning();
  if (!row) throw new LeaseholdError("INTERNAL", "token insert returned no row");
  return { token: fromRow(row), secret };
}

/**
 * A scope's tool and host lists checked and put in one spelling (sorted,
 * unique): every tool must be one the hub knows — a typo must not grant
 * nothing silently — and an empty list is refused (null means all).
 * Shared by `lh_` tokens and OAuth grants, which are scoped alike.
 */
export function normaliseScope(input: Pick<TokenScope, "tools" | "hosts">, knownTools: readonly string[]): Pick<TokenScope, "tools" | "hosts"> {
  const known = new Set(knownTools);
  const tools = input.tools === null ? null : [...new Set(input.tools)].sort();
  for (const tool of tools ?? []) {
    if (!TOOL_PATTERN.test(tool) || !known.has(tool)) throw invalid(`unknown tool ${JSON.stringify(tool)} in --tools`, `known tools: ${[...known].sort().join(", ")}`);
  }
  if (tools !== null && tools.length === 0) throw invalid("--tools must name at least one tool");
  const hosts = input.hosts === null ? null : [...new Set(input.hosts)].sort();
  for (const host of hosts ?? []) if (!HOST_PATTERN.test(host)) throw invalid(`host name ${JSON.stringify(host)} in --hosts is not a host name`);
  if (hosts !== null && hosts.length === 0) throw invalid("--hosts must name at least one host");
  return { tools, hosts };
}

type TokenRow = typeof agentTokens.$inferSelect;

export function fromRow(row: TokenRow): AgentToken {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind === "oauth" ? "oauth" : "static",
    oauthClientId: row.oauthClientId ?? null,
    readOnly: row.readOnly,
    // The column's check constraint allows only these two; anything else is read as the default.
    observe: row.observe === "any" ? "any" : "judged",
    tools: row.tools ?? null,
    hosts: row.hosts ?? null,
    createdBy: row.createdBy,
    createdAt: new Date(row.createdAt),
    expiresAt: row.expiresAt === null ? null : new Date(row.expiresAt),
    revokedAt: row.revokedAt === null ? null : new Date(row.revokedAt),
  };
}

export async function listTokens(db: Database): Promise<AgentToken[]> {
  const rows = await db.select().from(agentTokens).orderBy(desc(agentTokens.createdAt));
  return rows.map(fromRow);
}

export type TokenCheck =
  | { ok: true; token: AgentToken }
  | { ok: false; reason: "malformed" | "unknown" | "expired" | "revoked" | "wrong_audience" };

type OAuthTokenRow = typeof oauthTokens.$inferSelect;

/**
 * THE authorization decision for a presented bearer credential, both kinds
 * (docs/design.md#oauth: two kinds of token, one decision):
 * - `lh_…` (static): shape check, lookup by SHA-256, constant-time
 *   comparison of the digests;
 * - `lha_…` (OAuth access token): the same, then its own expiry and its
 *   audience — it is accepted only where `audience` (this hub's canonical
 *   MCP URL) is exactly the resource it was issued for (RFC 8707), and a
 *   caller that names no audience (the health route, the CLI) accepts none;
 * then, for both, the token's (or grant's) row: expiry and revocation, read
 * from the database on every call, so a revocation is effective on the next
 * request.
 */
export async function authenticateToken(db: Database, presented: string, now = new Date(), audience?: string): Promise<TokenCheck> {
  if (looksLikeToken(presented)) {
    const digest = hashTokenSecret(presented);
    const [row] = await db.select().from(agentTokens).where(eq(agentTokens.tokenHash, digest)).limit(1);
    return checkTokenRow(row, digest, now);
  }
  if (looksLikeAccessToken(presented)) {
    const digest = hashTokenSecret(presented);
    const [row] = await db
      .select({ access: oauthTokens, grant: agentTokens })
      .from(oauthTokens)
      .innerJoin(agentTokens, eq(agentTokens.id, oauthTokens.tokenId))
      .where(and(eq(oauthTokens.hash, digest), eq(oauthTokens.kind, "access")))
      .limit(1);
    return checkAccessRow(row?.access, row?.grant, digest, now, audience);
  }
  return { ok: false, reason: "malformed" };
}

/**
 * The second half of `authenticateToken` for an `lh_` token, for a caller
 * that read the row itself (the MCP endpoint reads it together with the
 * session in one query): constant-time comparison of the digests, then
 * expiry and revocation as of `now`. `digest` is `hashTokenSecret` of a
 * presented token that passed `looksLikeToken`.
 */
export function checkTokenRow(row: TokenRow | undefined, digest: Uint8Array, now: Date): TokenCheck {
  if (!row || row.tokenHash === null || !digestsEqual(new Uint8Array(row.tokenHash), digest)) return { ok: false, reason: "unknown" };
  return judgeTokenRow(row, now);
}

/**
 * The OAuth scopes that let a token change hosts, and run them at once under
 * the observe lease (server/oauth scopes.ts `SCOPE_WRITE`,
 * `SCOPE_OBSERVE_ANY`; named here because server/oauth builds on this module).
 */
const WRITE_SCOPE = "mcp:write";
const OBSERVE_ANY_SCOPE = "mcp:observe-any";

/**
 * The second half of `authenticateToken` for an `lha_` access token and its
 * grant's row. The access token's own scopes (a refresh may have asked for
 * fewer than the grant holds) narrow the grant: without `mcp:write` it is
 * read-only, without `mcp:observe-any` its observe scope is `judged`,
 * whatever the grant says. They never widen it.
 */
export function checkAccessRow(access: OAuthTokenRow | undefined, grant: TokenRow | undefined, digest: Uint8Array, now: Date, audience: string | undefined): TokenCheck {
  if (!access || !grant || access.kind !== "access" || !digestsEqual(new Uint8Array(access.hash), digest)) return { ok: false, reason: "unknown" };
  if (new Date(access.expiresAt).getTime() <= now.getTime()) return { ok: false, reason: "expired" };
  if (audience === undefined || access.resource !== audience) return { ok: false, reason: "wrong_audience" };
  const judged = judgeTokenRow(grant, now);
  if (!judged.ok || access.scopes === null) return judged;
  const readOnly = judged.token.readOnly || !access.scopes.includes(WRITE_SCOPE);
  const observe: ObserveScope = !readOnly && access.scopes.includes(OBSERVE_ANY_SCOPE) ? judged.token.observe : "judged";
  return { ok: true, token: { ...judged.token, readOnly, observe } };
}

function judgeTokenRow(row: TokenRow, now: Date): TokenCheck {
  const token = fromRow(row);
  const status = tokenStatus(token, now);
  if (status !== "active") return { ok: false, reason: status };
  return { ok: true, token };
}
