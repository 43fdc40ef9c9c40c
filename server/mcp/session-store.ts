import { createHash, randomBytes } from "node:crypto";
import { and, count, eq, gt, inArray, isNull, lte, or, sql } from "drizzle-orm";
import type { Database } from "../db";
import { agentTokens, mcpSessions, oauthTokens } from "../db/schema";
import { appendEntry } from "../ledger/append";
import { hashActor } from "../ledger/entry";
import { checkAccessRow, checkTokenRow, hashTokenSecret, looksLikeAccessToken, looksLikeToken, type TokenCheck } from "../tokens";

/**
 * MCP sessions in PostgreSQL. Only sha256(session id) is stored; the id is a
 * name, not a credential — every request is authenticated by its bearer
 * token, and a session answers only to the token that opened it.
 *
 * Every session's start and end is sealed (session/1: opened, closed,
 * expired, reclaimed) in the same transaction as the row change, so the audit log shows
 * which agent sessions existed when — leases and actions name them.
 */

type SessionEvent = "opened" | "closed" | "expired" | "reclaimed";

async function sealSession(db: Database, event: SessionEvent, digest: string, tokenId: string, time: Date): Promise<void> {
  await appendEntry(db, { type: "session/1", time, action_id: null, actor: hashActor("token", tokenId), data: { event, session_digest: `sha256:${digest}`, channel: "mcp" } });
}

export interface SessionLifetimes {
  idleS: number;
  maxS: number;
}

/** What a hub process needs to rebuild the SDK's server for a session it has never seen. */
export interface StoredSession {
  digest: string;
  tokenId: string;
  protocolVersion: string;
  clientInfo: Record<string, unknown>;
  clientCapabilities: Record<string, unknown>;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

export function newSessionId(): string {
  return randomBytes(32).toString("base64url");
}

export function sessionDigest(sessionId: string): string {
  return createHash("sha256").update(sessionId, "utf8").digest("hex");
}

function expiryFor(createdAt: Date, seenAt: Date, lifetimes: SessionLifetimes): Date {
  return new Date(Math.min(seenAt.getTime() + lifetimes.idleS * 1000, createdAt.getTime() + lifetimes.maxS * 1000));
}

export async function countLiveSessions(db: Database, tokenId: string, now: Date): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(mcpSessions)
    .where(and(eq(mcpSessions.tokenId, tokenId), gt(mcpSessions.expiresAt, now)));
  return Number(row?.n ?? 0);
}

/** A token's live sessions as the session cap weighs them (session-cap.ts). */
export async function tokenSessions(db: Database, tokenId: string, now: Date): Promise<Array<{ digest: string; lastSeenAt: Date }>> {
  const rows = await db
    .select({ id: mcpSessions.id, lastSeenAt: mcpSessions.lastSeenAt })
    .from(mcpSessions)
    .where(and(eq(mcpSessions.tokenId, tokenId), gt(mcpSessions.expiresAt, now)));
  return rows.map((r) => ({ digest: r.id, lastSeenAt: new Date(r.lastSeenAt) }));
}

/**
 * Closes an idle session to make room under the cap, sealed `reclaimed`.
 * Only if its stored last-seen time is still at most `seenBy`: a process that
 * marked it busy since (`markSessionBusy`) moved that time forward, and the
 * session is left alone. Returns whether it was closed.
 */
export async function reclaimIdleSession(db: Database, digest: string, seenBy: Date, now: Date): Promise<boolean> {
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    const [row] = await tx
      .delete(mcpSessions)
      .where(and(eq(mcpSessions.id, digest), lte(mcpSessions.lastSeenAt, seenBy)))
      .returning({ tokenId: mcpSessions.tokenId });
    if (row === undefined) return false;
    await sealSession(tx, "reclaimed", digest, row.tokenId, now);
    return true;
  });
}

/**
 * Marks a session busy until `until` for every hub process: its last-seen
 * time is set ahead to `until` (a time in the future means "a call is in
 * flight"), and its idle expiry slides from there.
 */
export async function markSessionBusy(db: Database, session: StoredSession, until: Date, lifetimes: SessionLifetimes): Promise<void> {
  await db
    .update(mcpSessions)
    .set({ lastSeenAt: until, expiresAt: expiryFor(session.createdAt, until, lifetimes) })
    .where(eq(mcpSessions.id, session.digest));
}

/** Ends a busy mark: a last-seen time still in the future comes back to now. */
export async function markSessionIdle(db: Database, session: StoredSession, now: Date, lifetimes: SessionLifetimes): Promise<void> {
  await db
    .update(mcpSessions)
    .set({ lastSeenAt: now, expiresAt: expiryFor(session.createdAt, now, lifetimes) })
    .where(and(eq(mcpSessions.id, session.digest), gt(mcpSessions.lastSeenAt, now)));
}

export async function insertSession(
  db: Database,
  input: { sessionId: string; tokenId: string; protocolVersion: string; clientInfo: Record<string, unknown>; clientCapabilities: Record<string, unknown> },
  lifetimes: SessionLifetimes,
  now: Date,
): Promise<StoredSession> {
  const digest = sessionDigest(input.sessionId);
  const expiresAt = expiryFor(now, now, lifetimes);
  await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    await tx.insert(mcpSessions).values({
      id: digest,
      tokenId: input.tokenId,
      protocolVersion: input.protocolVersion,
      clientInfo: input.clientInfo,
      clientCapabilities: input.clientCapabilities,
      createdAt: now,
      lastSeenAt: now,
      expiresAt,
    });
    await sealSession(tx, "opened", digest, input.tokenId, now);
  });
  return { digest, tokenId: input.tokenId, protocolVersion: input.protocolVersion, clientInfo: input.clientInfo, clientCapabilities: input.clientCapabilities, createdAt: now, lastSeenAt: now, expiresAt };
}

export type SessionLookup = { ok: true; session: StoredSession } | { ok: false; reason: "unknown" | "expired" | "other_token" };

/**
 * The live session `sessionId` of `tokenId`. A session of another token is
 * reported as `other_token` to the caller (who answers 404 like for an
 * unknown one: a session id reveals nothing to a stranger).
 */
export async function findSession(db: Database, sessionId: string, tokenId: string, now: Date): Promise<SessionLookup> {
  const digest = sessionDigest(sessionId);
  const [row] = await db.select().from(mcpSessions).where(eq(mcpSessions.id, digest)).limit(1);
  return lookupOf(row, digest, tokenId, now);
}

type SessionRow = typeof mcpSessions.$inferSelect;

function lookupOf(row: SessionRow | null | undefined, digest: string, tokenId: string, now: Date): SessionLookup {
  if (!row) return { ok: false, reason: "unknown" };
  if (row.tokenId !== tokenId) return { ok: false, reason: "other_token" };
  const session: StoredSession = {
    digest,
    tokenId: row.tokenId,
    protocolVersion: row.protocolVersion,
    clientInfo: (row.clientInfo ?? {}) as Record<string, unknown>,
    clientCapabilities: (row.clientCapabilities ?? {}) as Record<string, unknown>,
    createdAt: new Date(row.createdAt),
    lastSeenAt: new Date(row.lastSeenAt),
    expiresAt: new Date(row.expiresAt),
  };
  if (session.expiresAt.getTime() <= now.getTime()) return { ok: false, reason: "expired" };
  return { ok: true, session };
}

function buildTokenAndSessionQuery(db: Database) {
  return db
    .select({ token: agentTokens, session: mcpSessions })
    .from(agentTokens)
    .leftJoin(mcpSessions, eq(mcpSessions.id, sql.placeholder("session")))
    .where(eq(agentTokens.tokenHash, sql.placeholder("hash")))
    .limit(1)
    .prepare("leasehold_mcp_token_and_session");
}

function buildAccessAndSessionQuery(db: Database) {
  return db
    .select({ access: oauthTokens, grant: agentTokens, session: mcpSessions })
    .from(oauthTokens)
    .innerJoin(agentTokens, eq(agentTokens.id, oauthTokens.tokenId))
    .leftJoin(mcpSessions, eq(mcpSessions.id, sql.placeholder("session")))
    .where(and(eq(oauthTokens.hash, sql.placeholder("hash")), eq(oauthTokens.kind, "access")))
    .limit(1)
    .prepare("leasehold_mcp_access_and_session");
}

/** Built once per database: the request path skips drizzle's query building. */
const tokenAndSessionQueries = new WeakMap<Database, ReturnType<typeof buildTokenAndSessionQuery>>();
const accessAndSessionQueries = new WeakMap<Database, ReturnType<typeof buildAccessAndSessionQuery>>();

function preparedFor<Q>(cache: WeakMap<Database, Q>, db: Database, build: (db: Database) => Q): Q {
  let query = cache.get(db);
  if (query === undefined) {
    query = build(db);
    cache.set(db, query);
  }
  return query;
}

/**
 * What every request on an open session needs, in ONE database round trip:
 * the bearer token's row (authenticated exactly as `authenticateToken` does,
 * for both kinds — an `lh_` token, or an OAuth `lha_` access token with its
 * grant's row and its audience — read now, so a revocation or expiry counts
 * on the very next request) and the row of the session it names. The
 * session's row is judged only for a good token (a bad one learns nothing
 * about it), and only the token (grant) that opened it may use it.
 */
export async function authenticateWithSession(db: Database, presented: string, sessionId: string, now: Date, audience: string): Promise<{ auth: TokenCheck; session: SessionLookup | undefined }> {
  const digest = sessionDigest(sessionId);
  let auth: TokenCheck;
  let sessionRow: SessionRow | null | undefined;
  if (looksLikeToken(presented)) {
    const hash = hashTokenSecret(presented);
    const [row] = await preparedFor(tokenAndSessionQueries, db, buildTokenAndSessionQuery).execute({ hash, session: digest });
    auth = checkTokenRow(row?.token, hash, now);
    sessionRow = row?.session;
  } else if (looksLikeAccessToken(presented)) {
    const hash = hashTokenSecret(presented);
    const [row] = await preparedFor(accessAndSessionQueries, db, buildAccessAndSessionQuery).execute({ hash, session: digest });
    auth = checkAccessRow(row?.access, row?.grant, hash, now, audience);
    sessionRow = row?.session;
  } else {
    return { auth: { ok: false, reason: "malformed" }, session: undefined };
  }
  if (!auth.ok) return { auth, session: undefined };
  return { auth, session: lookupOf(sessionRow, digest, auth.token.id, now) };
}

/**
 * Slides the idle expiry. Written at most every `min(60 s, idle/4)` per
 * session so a busy session does not turn every request into a write.
 */
export async function touchSession(db: Database, session: StoredSession, lifetimes: SessionLifetimes, now: Date): Promise<void> {
  const every = Math.min(60_000, (lifetimes.idleS * 1000) / 4);
  if (now.getTime() - session.lastSeenAt.getTime() < every) return;
  await db
    .update(mcpSessions)
    .set({ lastSeenAt: now, expiresAt: expiryFor(session.createdAt, now, lifetimes) })
    .where(eq(mcpSessions.id, session.digest));
}

/** Ends a session (sealed `closed`); a session already gone is left alone, so ending twice seals once. */
export async function deleteSession(db: Database, digest: string): Promise<void> {
  await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    const [row] = await tx.delete(mcpSessions).where(eq(mcpSessions.id, digest)).returning({ tokenId: mcpSessions.tokenId });
    if (row !== undefined) await sealSession(tx, "closed", digest, row.tokenId, new Date());
  });
}

/** Deletes expired sessions (idle or past their maximum age), each sealed `expired`; returns their digests (their leases must go too). */
export async function reclaimExpiredSessions(db: Database, now: Date): Promise<string[]> {
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    const rows = await tx.delete(mcpSessions).where(lte(mcpSessions.expiresAt, now)).returning({ id: mcpSessions.id, tokenId: mcpSessions.tokenId });
    for (const r of rows) await sealSession(tx, "expired", r.id, r.tokenId, now);
    return rows.map((r) => r.id);
  });
}

/**
 * Which of these session digests are still live — the session unexpired and
 * its token neither revoked nor expired — so a process can close in-memory
 * copies (and open SSE streams) of sessions that ended elsewhere.
 */
export async function liveSessionDigests(db: Database, digests: readonly string[], now: Date): Promise<Set<string>> {
  if (digests.length === 0) return new Set();
  const rows = await db
    .select({ id: mcpSessions.id })
    .from(mcpSessions)
    .innerJoin(agentTokens, eq(agentTokens.id, mcpSessions.tokenId))
    .where(
      and(
        inArray(mcpSessions.id, [...digests]),
        gt(mcpSessions.expiresAt, now),
        isNull(agentTokens.revokedAt),
        or(isNull(agentTokens.expiresAt), gt(agentTokens.expiresAt, now)),
      ),
    );
  return new Set(rows.map((r) => r.id));
}
