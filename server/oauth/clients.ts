import { randomBytes } from "node:crypto";
import { and, asc, count, desc, eq, gt, inArray, isNull, ne, sql } from "drizzle-orm";
import type { Database } from "../db";
import { agentTokens, oauthClients } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { digestOf, digestOfJson, hashActor } from "../ledger/entry";
import { revokeToken } from "../tokens";
import {
  checkClientName,
  checkRedirectUriHost,
  ClientMetadataCache,
  fetchClientMetadataDocument,
  isClientIdUrl,
  validateRedirectUri,
  validateRegistrationRequest,
  type ClientMetadata,
  type FetchOptions,
} from "./client-metadata";

/**
 * The clients the authorization server knows, three ways (docs/design.md#oauth):
 * - `cimd`: the client id is an HTTPS URL; its Client ID Metadata Document
 *   is fetched (client-metadata/: SSRF guard, size and time limits, cache)
 *   when an authorization request names it, and a snapshot is kept for the
 *   consent and tokens pages;
 * - `dynamic`: RFC 7591 registration (`dyn_…`), bounded in number, which an
 *   owner can turn off;
 * - `registered`: made by an owner in the browser (`reg_…`), sealed admin/1.
 * All are public clients (PKCE, no secrets).
 */
export type ClientKind = "cimd" | "dynamic" | "registered";

export interface OAuthClient {
  id: string;
  kind: ClientKind;
  /** NFKC, checked (client-metadata/client-name.ts). */
  name: string;
  /** client_name exactly as the client (or owner) sent it, when it sent one: the consent page warns when it differs from `name`. */
  nameAsSent: string | null;
  redirectUris: string[];
  clientUri: string | null;
  createdBy: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
}

const ISSUED_ID = /^(dyn|reg)_[A-Za-z0-9_-]{22}$/;
/**
 * Dynamic registration is unauthenticated: its table is bounded, and at the
 * bound the oldest registration never used makes room for the new one (so a
 * flood evicts the flood, not clients people consented to).
 */
export const MAX_DYNAMIC_CLIENTS = 500;
/** Registrations one client address may make per window; past it the endpoint answers 429 with Retry-After. */
export const DYNAMIC_REGISTRATIONS_PER_ADDRESS = 20;
export const DYNAMIC_REGISTRATION_WINDOW_MS = 60 * 60_000;
const NAME_MAX = 100;

type Row = typeof oauthClients.$inferSelect;

function fromRow(row: Row): OAuthClient {
  const metadata = (row.metadata ?? {}) as Record<string, unknown>;
  return {
    id: row.id,
    kind: row.kind as ClientKind,
    name: row.name,
    nameAsSent: typeof metadata.client_name === "string" ? metadata.client_name : null,
    redirectUris: row.redirectUris,
    clientUri: typeof metadata.client_uri === "string" ? metadata.client_uri : null,
    createdBy: row.createdBy,
    createdAt: new Date(row.createdAt),
    lastUsedAt: row.lastUsedAt === null ? null : new Date(row.lastUsedAt),
  };
}

function issuedId(kind: "dyn" | "reg"): string {
  return `${kind}_${randomBytes(16).toString("base64url")}`;
}

/** How this process fetches Client ID Metadata Documents (operator settings + its cache). */
export interface ClientResolver {
  fetchOptions: FetchOptions;
  cache: ClientMetadataCache;
}

export function clientResolver(allowHosts: readonly string[]): ClientResolver {
  return { fetchOptions: { allowHosts }, cache: new ClientMetadataCache() };
}

export type ClientLookup = { ok: true; client: OAuthClient } | { ok: false; reason: string };

/**
 * The client an authorization request names. A CIMD client's snapshot is
 * refreshed from the (cached) document on every request that names it, so
 * a changed document's redirect URIs take effect within its cache time. A
 * document listing a redirect URI on `adminHost` (the admin pages' host
 * name) is refused whole, as a registration request listing one is.
 */
export async function resolveClient(db: Database, clientId: string, resolver: ClientResolver, adminHost: string, now = new Date()): Promise<ClientLookup> {
  if (isClientIdUrl(clientId)) {
    const fetched = await resolver.cache.get(clientId, () => fetchClientMetadataDocument(clientId, resolver.fetchOptions));
    if (!fetched.ok) return { ok: false, reason: `the client's metadata document could not be used: ${fetched.reason}` };
    const m = fetched.metadata;
    for (const uri of m.redirectUris) {
      const host = checkRedirectUriHost(uri, adminHost);
      if (!host.ok) return { ok: false, reason: `the client's metadata document lists ${JSON.stringify(uri)}, which this hub refuses: ${host.reason}` };
    }
    const values = { kind: "cimd", name: clip(m.name), redirectUris: m.redirectUris, metadata: m.raw };
    const [row] = await db
      .insert(oauthClients)
      .values({ id: clientId, ...values, createdAt: now })
      .onConflictDoUpdate({ target: oauthClients.id, set: values })
      .returning();
    if (!row) throw new LeaseholdError("INTERNAL", "client upsert returned no row");
    return { ok: true, client: fromRow(row) };
  }
  if (!ISSUED_ID.test(clientId)) return { ok: false, reason: "client_id is neither an HTTPS metadata document URL nor a client id this hub issued" };
  const [row] = await db.select().from(oauthClients).where(eq(oauthClients.id, clientId)).limit(1);
  if (!row) return { ok: false, reason: "this hub has no client with that client_id (it may have been removed by an admin)" };
  return { ok: true, client: fromRow(row) };
}

export async function findClient(db: Database, clientId: string): Promise<OAuthClient | undefined> {
  const [row] = await db.select().from(oauthClients).where(eq(oauthClients.id, clientId)).limit(1);
  return row === undefined ? undefined : fromRow(row);
}

export async function markClientUsed(db: Database, clientId: string, now: Date): Promise<void> {
  await db.update(oauthClients).set({ lastUsedAt: now }).where(eq(oauthClients.id, clientId));
}

function clip(name: string): string {
  // Control characters never reach a page or a log line.
  const clean = [...name].map((c) => (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? " " : c)).join("").trim();
  return clean.length > NAME_MAX ? `${clean.slice(0, NAME_MAX - 1)}…` : clean;
}

export type RegistrationResult =
  | { ok: true; client: OAuthClient; response: Record<string, unknown> }
  | { ok: false; status: number; error: string; description: string; retryAfterS?: number };

/** RFC 7591 §3.2.1 response: what was registered, with the issued id. */
function registrationResponse(client: OAuthClient, metadata: Omit<ClientMetadata, "clientId">): Record<string, unknown> {
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    ...(metadata.clientUri === null ? {} : { client_uri: metadata.clientUri }),
    ...(metadata.logoUri === null ? {} : { logo_uri: metadata.logoUri }),
  };
}

export interface DynamicRegistration {
  /** The host name the hub's admin pages are served from: no redirect URI may be on it. */
  adminHost: string;
  /** The client's address as the hub's own server recorded it (HEADER_PEER); "unknown" when absent. */
  from: string;
}

/**
 * RFC 7591 registration. The caller checks the setting; this enforces the
 * per-address rate and the table's bound. Both under one advisory lock, so
 * neither is overrun by concurrent requests.
 */
export async function registerDynamicClient(db: Database, body: unknown, source: DynamicRegistration, now = new Date()): Promise<RegistrationResult> {
  const checked = validateRegistrationRequest(body, source.adminHost);
  if (!checked.ok) return { ok: false, status: 400, error: checked.error, description: checked.description };
  const metadata = checked.metadata;
  return db.transaction(async (txRaw): Promise<RegistrationResult> => {
    const tx = txRaw as unknown as Database;
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('leasehold.oauth.dynamic-registration'))`);
    const windowStart = new Date(now.getTime() - DYNAMIC_REGISTRATION_WINDOW_MS);
    const recent = await tx
      .select({ createdAt: oauthClients.createdAt })
      .from(oauthClients)
      .where(and(eq(oauthClients.kind, "dynamic"), eq(oauthClients.registeredFrom, source.from), gt(oauthClients.createdAt, windowStart)))
      .orderBy(asc(oauthClients.createdAt))
      .limit(DYNAMIC_REGISTRATIONS_PER_ADDRESS);
    if (recent.length >= DYNAMIC_REGISTRATIONS_PER_ADDRESS) {
      const oldest = new Date((recent[0] as { createdAt: Date }).createdAt).getTime();
      const retryAfterS = Math.max(1, Math.ceil((oldest + DYNAMIC_REGISTRATION_WINDOW_MS - now.getTime()) / 1000));
      return {
        ok: false,
        status: 429,
        error: "temporarily_unavailable",
        description: `this address registered ${DYNAMIC_REGISTRATIONS_PER_ADDRESS} clients in the last hour; try again in ${retryAfterS} s, or reuse a client_id already issued`,
        retryAfterS,
      };
    }
    const [total] = await tx.select({ n: count() }).from(oauthClients).where(eq(oauthClients.kind, "dynamic"));
    const excess = Number(total?.n ?? 0) - MAX_DYNAMIC_CLIENTS + 1;
    if (excess > 0) {
      // Never-used registrations only: a client with a consent behind it is never evicted by strangers' registrations.
      const evictable = tx
        .select({ id: oauthClients.id })
        .from(oauthClients)
        .where(and(eq(oauthClients.kind, "dynamic"), isNull(oauthClients.lastUsedAt)))
        .orderBy(asc(oauthClients.createdAt))
        .limit(excess);
      const evicted = await tx.delete(oauthClients).where(inArray(oauthClients.id, evictable)).returning({ id: oauthClients.id });
      if (evicted.length < excess) {
        return { ok: false, status: 503, error: "temporarily_unavailable", description: `this hub already holds ${MAX_DYNAMIC_CLIENTS} dynamically registered clients, all of them in use; an admin can remove some or register the client by hand` };
      }
    }
    const [row] = await tx
      .insert(oauthClients)
      .values({ id: issuedId("dyn"), kind: "dynamic", name: clip(metadata.name), redirectUris: metadata.redirectUris, metadata: metadata.raw, registeredFrom: source.from, createdAt: now })
      .returning();
    if (!row) throw new LeaseholdError("INTERNAL", "client insert returned no row");
    const client = fromRow(row);
    return { ok: true, client, response: registrationResponse(client, metadata) };
  });
}

/**
 * A client an owner registers in the browser: name and redirect URIs, held
 * to the rules a registration request meets (the name's characters, no
 * redirect URI on `adminHost`), sealed admin/1 `oauth.client_register`.
 */
export async function registerClientByAdmin(db: Database, input: { name: string; redirectUris: string[] }, adminName: string, adminHost: string, now = new Date()): Promise<OAuthClient> {
  const checkedName = checkClientName(input.name);
  if (!checkedName.ok) throw new LeaseholdError("INVALID_ARGUMENT", checkedName.reason.replace("client_name", "the client's name"), { tier: "hub" });
  const name = clip(checkedName.name);
  const uris = [...new Set(input.redirectUris.map((u) => u.trim()).filter((u) => u !== ""))];
  if (uris.length === 0 || uris.length > 10) throw new LeaseholdError("INVALID_ARGUMENT", "give 1 to 10 redirect URIs", { tier: "hub" });
  for (const uri of uris) {
    const valid = validateRedirectUri(uri);
    const host = valid.ok ? checkRedirectUriHost(uri, adminHost) : valid;
    if (!host.ok) throw new LeaseholdError("INVALID_ARGUMENT", `redirect URI ${JSON.stringify(uri)}: ${host.reason}`, { tier: "hub", hint: "https://…, http://127.0.0.1:PORT/… or http://[::1]:PORT/… (RFC 8252 loopback), or a private-use scheme like com.example.app:/callback" });
  }
  const id = issuedId("reg");
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    await appendEntry(tx, { type: "admin/1", time: now, action_id: null, actor: hashActor("admin", adminName), data: { operation: "oauth.client_register", target_digest: digestOf(id), settings_digest: digestOfJson({ name, redirect_uris: uris }) } });
    const [row] = await tx.insert(oauthClients).values({ id, kind: "registered", name, redirectUris: uris, metadata: { client_name: input.name, redirect_uris: uris }, createdBy: adminName, createdAt: now }).returning();
    if (!row) throw new LeaseholdError("INTERNAL", "client insert returned no row");
    return fromRow(row);
  });
}

export async function listOAuthClients(db: Database): Promise<OAuthClient[]> {
  const rows = await db.select().from(oauthClients).orderBy(desc(oauthClients.createdAt)).limit(500);
  return rows.map(fromRow);
}

/**
 * Removes a client and revokes every grant it holds (each revocation ends
 * what the grant started, as for an `lh_` token). Sealed admin/1
 * `oauth.client_remove`. A CIMD client can come back by asking again — and
 * an admin consenting again.
 */
export async function removeOAuthClient(db: Database, clientId: string, adminName: string, now = new Date()): Promise<{ grantsRevoked: number }> {
  const client = await findClient(db, clientId);
  if (client === undefined) throw new LeaseholdError("NOT_FOUND", `no OAuth client ${JSON.stringify(clientId)}`, { tier: "hub" });
  const grants = await db
    .select({ id: agentTokens.id })
    .from(agentTokens)
    .where(and(eq(agentTokens.oauthClientId, clientId), isNull(agentTokens.revokedAt), ne(agentTokens.kind, "static")));
  for (const grant of grants) await revokeToken(db, grant.id, adminName, now);
  await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    await appendEntry(tx, { type: "admin/1", time: now, action_id: null, actor: hashActor("admin", adminName), data: { operation: "oauth.client_remove", target_digest: digestOf(clientId), settings_digest: null } });
    await tx.delete(oauthClients).where(eq(oauthClients.id, clientId));
  });
  return { grantsRevoked: grants.length };
}
