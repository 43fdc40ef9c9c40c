/**
 * Host leases (docs/design.md#leases): who may change a host right now.
 *
 * - `exclusive` (mutating actions) — one holder per host; another holder's
 *   mutating call gets HOST_BUSY with when the lease ends and an opaque
 *   holder id (never the holder's token name), `retryable: true`.
 * - `observe` (read-only actions) — shared; never blocks and is never blocked.
 *
 * A holder is (owner kind, owner id, session). A lease has a hard expiry and
 * an idle deadline that each use pushes forward; a lease past either has
 * lapsed. Ending a session releases its leases; an admin may revoke any.
 *
 * - a host path label (a row with `label` set, mode `exclusive`) — exclusive
 *   per label on one host: the lease a `rw` mount of that label needs, taken
 *   beside the host lease (docs/design.md#host-paths). Another holder's `rw`
 *   of the same label gets HOST_BUSY naming the label; other labels, the
 *   host's own leases and other hosts are unaffected. Sealed as lease/1 with
 *   scope `label`, mode `exclusive` and the label. The database holds one
 *   live row per (host, label) (a partial unique index) besides the host
 *   lock below. A host lease is a row with `label` null: every check of the
 *   host's exclusive lease says so, or a label lease would pass for one.
 *
 * Concurrency contract: every change to a host's leases runs in one
 * transaction that first locks the host's row (`SELECT … FOR NO KEY UPDATE`), so
 * two hub processes cannot both grant an exclusive lease. Every change
 * (acquired, released, lapsed, revoked) is appended to the ledger in the
 * same transaction: if the append fails, the change rolls back. Touching the
 * idle deadline is a use, not a change, and is not sealed.
 */
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { Database } from "../db";
import { hosts, leases } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { digestOf, hashActor, type ActorKind } from "../ledger/entry";

export type LeaseMode = "exclusive" | "observe";

export type LeaseRow = typeof leases.$inferSelect;
type Tx = Parameters<Parameters<Database["transaction"]>[0]>[0];

export interface LeaseHolder {
  ownerKind: "token" | "admin";
  ownerId: string;
  sessionId: string | null;
  /** Shown to a caller who gets HOST_BUSY, e.g. `agent token "ci" (session 3f2a…)`. No secrets. */
  description: string;
}

export interface LeaseTimings {
  /** Hard lifetime of a new lease. Default 15 min. */
  ttlMs?: number;
  /** Lapses when unused this long. Default 5 min. */
  idleMs?: number;
}

export const DEFAULT_LEASE_TTL_MS = 15 * 60_000;
export const DEFAULT_LEASE_IDLE_MS = 5 * 60_000;

/** A transaction is a drizzle database for every purpose here (same query API). */
function asDb(tx: Tx): Database {
  return tx as unknown as Database;
}

function sessionDigest(sessionId: string | null): `sha256:${string}` | null {
  return sessionId === null ? null : digestOf(sessionId);
}

async function sealLease(
  db: Database,
  lease: LeaseRow,
  event: "acquired" | "released" | "lapsed" | "revoked",
  actor: { kind: ActorKind; id: string },
  actionId: string | null,
): Promise<void> {
  const label = lease.label;
  await appendEntry(db, {
    type: "lease/1",
    time: new Date(),
    action_id: actionId,
    actor: hashActor(actor.kind, actor.id),
    data: {
      lease_id: lease.id,
      host_id: lease.hostId,
      ...(label === null ? { scope: "host", mode: lease.mode as LeaseMode } : { scope: "label", mode: "exclusive", label }),
      event,
      session_digest: sessionDigest(lease.sessionId),
      expires_at: lease.expiresAt.toISOString(),
    },
  });
}

/**
 * Serialises lease changes on one host. NO KEY UPDATE, not UPDATE: every row
 * that references the host (an action, a job) takes a KEY SHARE lock on it,
 * which FOR UPDATE would wait for — two transactions that each inserted such
 * a row and then asked for the host lock deadlocked (the read-only fast path
 * takes the lease in the transaction that records the action). NO KEY UPDATE
 * still excludes every other lease change.
 */
async function lockHost(tx: Tx, hostId: string): Promise<void> {
  await tx.execute(sql`select id from hosts where id = ${hostId} for no key update`);
}

/** Marks this host's lapsed leases released (reason `lapsed`) and seals each. */
async function lapseOnHost(tx: Tx, hostId: string, now: Date): Promise<void> {
  const lapsed = await tx
    .update(leases)
    .set({ releasedAt: now, releaseReason: "lapsed" })
    .where(
      and(
        eq(leases.hostId, hostId),
        isNull(leases.releasedAt),
        sql`(${leases.expiresAt} <= ${now.toISOString()}::timestamptz or ${leases.idleExpiresAt} <= ${now.toISOString()}::timestamptz)`,
      ),
    )
    .returning();
  for (const lease of lapsed) await sealLease(asDb(tx), lease, "lapsed", { kind: "system", id: "lease-reaper" }, null);
}

/**
 * An opaque, stable id for a lease's holder (owner kind, owner id, session):
 * another caller who gets HOST_BUSY can tell "the same holder as before" from
 * "a new one" without learning which token or admin it is. Admins see the
 * holder's name in `leasehold lease list`.
 */
export function opaqueHolderId(lease: Pick<LeaseRow, "ownerKind" | "ownerId" | "sessionId">): string {
  const digest = digestOf(`leasehold-lease-holder/1\n${lease.ownerKind}\n${lease.ownerId}\n${lease.sessionId ?? ""}`);
  return `holder_${digest.slice("sha256:".length, "sha256:".length + 16)}`;
}

function hostBusy(holder: LeaseRow): LeaseholdError {
  const holderId = opaqueHolderId(holder);
  const ends = holder.idleExpiresAt < holder.expiresAt ? holder.idleExpiresAt : holder.expiresAt;
  const label = holder.label;
  const what = label === null ? "host is leased exclusively" : `host path label ${label} on this host is leased read-write`;
  return new LeaseholdError("HOST_BUSY", `${what} by another holder (${holderId}) until ${ends.toISOString()} at the latest (refused by a hub check)`, {
    tier: "hub",
    retryable: true,
    hint: "retry after the holder's lease is released, lapses when idle, or an admin breaks it (leasehold lease break)",
    // No token or admin name here: the holder id is opaque; admins see names in `leasehold lease list`.
    details: {
      holder_id: holderId,
      mode: label === null ? holder.mode : "exclusive",
      ...(label === null ? {} : { label }),
      expires_at: holder.expiresAt.toISOString(),
      idle_expires_at: holder.idleExpiresAt.toISOString(),
      ends_at: ends.toISOString(),
    },
  });
}

/**
 * The HOST_BUSY that `acquireLease(… mode: "exclusive")` would throw for
 * `holder` now, or null when nobody else holds the host exclusively. A
 * read without the host lock: a racer may still take the lease first, and
 * `acquireLease` stays the check that counts. The pipeline asks before it
 * spends a grant use, so a busy host does not drain grants.
 */
export async function exclusiveConflict(db: Database, hostId: string, holder: LeaseHolder, now = new Date()): Promise<LeaseholdError | null> {
  const active = await db
    .select()
    .from(leases)
    .where(
      and(
        eq(leases.hostId, hostId),
        eq(leases.mode, "exclusive"),
        isNull(leases.label),
        isNull(leases.releasedAt),
        sql`${leases.expiresAt} > ${now.toISOString()}::timestamptz and ${leases.idleExpiresAt} > ${now.toISOString()}::timestamptz`,
      ),
    );
  const other = active.find((lease) => !sameHolder(lease, holder));
  return other === undefined || active.some((lease) => sameHolder(lease, holder)) ? null : hostBusy(other);
}

/**
 * The HOST_BUSY that `acquireLabelLeases` would throw for `holder` and
 * `labels` now, or null. Like exclusiveConflict, a read without the host
 * lock, asked before a grant use is spent.
 */
export async function labelConflict(db: Database, hostId: string, labels: readonly string[], holder: LeaseHolder, now = new Date()): Promise<LeaseholdError | null> {
  if (labels.length === 0) return null;
  const active = await db
    .select()
    .from(leases)
    .where(
      and(
        eq(leases.hostId, hostId),
        isNull(leases.releasedAt),
        sql`${leases.label} is not null`,
        sql`${leases.expiresAt} > ${now.toISOString()}::timestamptz and ${leases.idleExpiresAt} > ${now.toISOString()}::timestamptz`,
      ),
    );
  return busyLabel(active, labels, holder);
}

/** HOST_BUSY for the first of `labels` another holder has among `active`, or null. */
function busyLabel(active: readonly LeaseRow[], labels: readonly string[], holder: LeaseHolder): LeaseholdError | null {
  for (const label of labels) {
    const other = active.find((lease) => lease.label === label && !sameHolder(lease, holder));
    if (other !== undefined && !active.some((lease) => lease.label === label && sameHolder(lease, holder))) return hostBusy(other);
  }
  return null;
}

function sameHolder(lease: LeaseRow, holder: LeaseHolder): boolean {
  return lease.ownerKind === holder.ownerKind && lease.ownerId === holder.ownerId && lease.sessionId === holder.sessionId;
}

export interface AcquireLeaseInput {
  hostId: string;
  mode: LeaseMode;
  holder: LeaseHolder;
  timings?: LeaseTimings;
  /** The action this lease is taken for, recorded in the ledger entry. */
  actionId?: string | null;
}

/**
 * Takes (or reuses) a lease. The holder's existing lease on the host is
 * reused when it covers the mode (exclusive covers observe) and its idle
 * deadline is pushed forward. Throws HOST_BUSY when another holder has the
 * host's exclusive lease and `mode` is exclusive.
 */
export async function acquireLease(db: Database, input: AcquireLeaseInput): Promise<{ lease: LeaseRow; acquired: boolean }> {
  const idleMs = input.timings?.idleMs ?? DEFAULT_LEASE_IDLE_MS;
  const reused = await reuseOwnLease(db, input, idleMs);
  if (reused !== null) return { lease: reused, acquired: false };
  return db.transaction((tx) => acquireLocked(tx, input));
}

/**
 * acquireLease inside the caller's transaction `tx` (the pipeline records a
 * read-only action's decision, lease and dispatch in one transaction). The
 * lease change commits or rolls back with the rest of it.
 */
export async function acquireLeaseInTransaction(tx: Database, input: AcquireLeaseInput): Promise<{ lease: LeaseRow; acquired: boolean }> {
  const reused = await reuseOwnLease(tx, input, input.timings?.idleMs ?? DEFAULT_LEASE_IDLE_MS);
  if (reused !== null) return { lease: reused, acquired: false };
  return acquireLocked(tx as unknown as Tx, input);
}

async function acquireLocked(tx: Tx, input: AcquireLeaseInput): Promise<{ lease: LeaseRow; acquired: boolean }> {
  const ttlMs = input.timings?.ttlMs ?? DEFAULT_LEASE_TTL_MS;
  const idleMs = input.timings?.idleMs ?? DEFAULT_LEASE_IDLE_MS;
  const now = new Date();
  await lockHost(tx, input.hostId);
  await lapseOnHost(tx, input.hostId, now);
  const active = await tx
    .select()
    .from(leases)
    .where(and(eq(leases.hostId, input.hostId), isNull(leases.releasedAt)))
    .orderBy(leases.createdAt);

  const hostLeases = active.filter((lease) => lease.label === null);
  const own = hostLeases.find((lease) => sameHolder(lease, input.holder) && (lease.mode === input.mode || lease.mode === "exclusive"));
  if (own !== undefined) {
    const idle = new Date(Math.min(now.getTime() + idleMs, own.expiresAt.getTime()));
    const [touched] = await tx.update(leases).set({ idleExpiresAt: idle }).where(eq(leases.id, own.id)).returning();
    return { lease: touched ?? own, acquired: false };
  }
  if (input.mode === "exclusive") {
    const holder = hostLeases.find((lease) => lease.mode === "exclusive");
    if (holder !== undefined) throw hostBusy(holder);
  }
  const lease = await insertSealedLease(tx, { hostId: input.hostId, mode: input.mode, label: null, holder: input.holder, actionId: input.actionId }, now, ttlMs, idleMs);
  return { lease, acquired: true };
}

/** Inserts one lease and seals its `acquired` entry in the same transaction: a host lease (label null) or a label's. */
async function insertSealedLease(
  tx: Tx,
  input: { hostId: string; mode: LeaseMode; label: string | null; holder: LeaseHolder; actionId: string | null | undefined },
  now: Date,
  ttlMs: number,
  idleMs: number,
): Promise<LeaseRow> {
  const expiresAt = new Date(now.getTime() + ttlMs);
  const [lease] = await tx
    .insert(leases)
    .values({
      hostId: input.hostId,
      mode: input.mode,
      label: input.label,
      ownerKind: input.holder.ownerKind,
      ownerId: input.holder.ownerId,
      sessionId: input.holder.sessionId,
      description: input.holder.description,
      createdAt: now,
      expiresAt,
      idleExpiresAt: new Date(Math.min(now.getTime() + idleMs, expiresAt.getTime())),
    })
    .returning();
  if (lease === undefined) throw new LeaseholdError("INTERNAL", "lease insert returned no row", { tier: "database" });
  await sealLease(asDb(tx), lease, "acquired", { kind: input.holder.ownerKind, id: input.holder.ownerId }, input.actionId ?? null);
  return lease;
}

export interface AcquireLabelLeasesInput {
  hostId: string;
  /** Host path labels mounted read-write; each gets its own exclusive lease. */
  labels: readonly string[];
  holder: LeaseHolder;
  timings?: LeaseTimings;
  actionId?: string | null;
}

/**
 * Takes (or reuses) the holder's exclusive lease on each host path label,
 * all or none: HOST_BUSY naming the first label another holder has, and
 * then no label is taken. Reuse pushes the idle deadline forward as for host
 * leases. Runs in its own transaction; `acquireLabelLeasesInTransaction`
 * joins the caller's.
 */
export async function acquireLabelLeases(db: Database, input: AcquireLabelLeasesInput): Promise<LeaseRow[]> {
  if (input.labels.length === 0) return [];
  return db.transaction((tx) => acquireLabelsLocked(tx, input));
}

export async function acquireLabelLeasesInTransaction(tx: Database, input: AcquireLabelLeasesInput): Promise<LeaseRow[]> {
  if (input.labels.length === 0) return [];
  return acquireLabelsLocked(tx as unknown as Tx, input);
}

async function acquireLabelsLocked(tx: Tx, input: AcquireLabelLeasesInput): Promise<LeaseRow[]> {
  const ttlMs = input.timings?.ttlMs ?? DEFAULT_LEASE_TTL_MS;
  const idleMs = input.timings?.idleMs ?? DEFAULT_LEASE_IDLE_MS;
  const now = new Date();
  await lockHost(tx, input.hostId);
  await lapseOnHost(tx, input.hostId, now);
  const active = await tx
    .select()
    .from(leases)
    .where(and(eq(leases.hostId, input.hostId), isNull(leases.releasedAt)))
    .orderBy(leases.createdAt);
  // Every label is checked before any is taken: a busy label leaves nothing behind.
  const busy = busyLabel(active, input.labels, input.holder);
  if (busy !== null) throw busy;
  const taken: LeaseRow[] = [];
  for (const label of [...new Set(input.labels)].sort()) {
    const own = active.find((lease) => lease.label === label && sameHolder(lease, input.holder));
    if (own !== undefined) {
      const idle = new Date(Math.min(now.getTime() + idleMs, own.expiresAt.getTime()));
      const [touched] = await tx.update(leases).set({ idleExpiresAt: idle }).where(eq(leases.id, own.id)).returning();
      taken.push(touched ?? own);
      continue;
    }
    taken.push(await insertSealedLease(tx, { hostId: input.hostId, mode: "exclusive", label, holder: input.holder, actionId: input.actionId }, now, ttlMs, idleMs));
  }
  return taken;
}

/**
 * The common case of acquireLease in one statement, without the host lock:
 * the holder's own live lease that covers `mode` gets its idle deadline
 * pushed forward. Reusing a lease changes nobody's standing (no lease is
 * granted, ended or sealed), so it needs no lock; a release or revocation
 * racing it either lands first (no row matches: the locked path decides) or
 * after (the lease ends then, as it would after a locked reuse). Lapsed
 * leases are left to the locked path and the periodic sweep.
 */
async function reuseOwnLease(db: Database, input: AcquireLeaseInput, idleMs: number): Promise<LeaseRow | null> {
  const now = new Date();
  const at = sql`${now.toISOString()}::timestamptz`;
  const live = and(isNull(leases.releasedAt), sql`${leases.expiresAt} > ${at}`, sql`${leases.idleExpiresAt} > ${at}`);
  const covers = and(isNull(leases.label), input.mode === "exclusive" ? eq(leases.mode, "exclusive") : sql`${leases.mode} in ('observe', 'exclusive')`);
  const session = input.holder.sessionId === null ? isNull(leases.sessionId) : eq(leases.sessionId, input.holder.sessionId);
  const own = db
    .select({ id: leases.id })
    .from(leases)
    .where(and(eq(leases.hostId, input.hostId), eq(leases.ownerKind, input.holder.ownerKind), eq(leases.ownerId, input.holder.ownerId), session, covers, live))
    .orderBy(leases.createdAt)
    .limit(1);
  const [touched] = await db
    .update(leases)
    .set({ idleExpiresAt: sql`least(${new Date(now.getTime() + idleMs).toISOString()}::timestamptz, ${leases.expiresAt})` })
    .where(and(sql`${leases.id} = (${own})`, live))
    .returning();
  return touched ?? null;
}

async function endLease(
  db: Database,
  leaseId: string,
  reason: "released" | "revoked" | "session_ended",
  actor: { kind: ActorKind; id: string },
): Promise<LeaseRow | null> {
  return db.transaction(async (tx) => {
    const [current] = await tx.select().from(leases).where(eq(leases.id, leaseId));
    if (current === undefined) return null;
    await lockHost(tx, current.hostId);
    const [ended] = await tx
      .update(leases)
      .set({ releasedAt: new Date(), releaseReason: reason })
      .where(and(eq(leases.id, leaseId), isNull(leases.releasedAt)))
      .returning();
    if (ended === undefined) return null;
    await sealLease(asDb(tx), ended, reason === "revoked" ? "revoked" : "released", actor, null);
    return ended;
  });
}

/** The holder gives a lease back. Returns null when it was not active. */
export async function releaseLease(db: Database, leaseId: string, holder: Pick<LeaseHolder, "ownerKind" | "ownerId">): Promise<LeaseRow | null> {
  const [current] = await db.select().from(leases).where(eq(leases.id, leaseId));
  if (current === undefined || current.ownerKind !== holder.ownerKind || current.ownerId !== holder.ownerId) return null;
  return endLease(db, leaseId, "released", { kind: holder.ownerKind, id: holder.ownerId });
}

/** An admin takes a lease away. NOT_FOUND when no such active lease exists. */
export async function revokeLease(db: Database, leaseId: string, admin: { id: string }): Promise<LeaseRow> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(leaseId)) throw new LeaseholdError("NOT_FOUND", `no active lease ${leaseId}`, { tier: "hub" });
  const ended = await endLease(db, leaseId, "revoked", { kind: "admin", id: admin.id });
  if (ended === null) throw new LeaseholdError("NOT_FOUND", `no active lease ${leaseId}`, { tier: "hub" });
  return ended;
}

/** A session ended (MCP DELETE, idle reclaim, admin sign-out): its leases go with it. */
export async function releaseSessionLeases(db: Database, sessionId: string): Promise<number> {
  const held = await db
    .select({ id: leases.id, ownerKind: leases.ownerKind, ownerId: leases.ownerId })
    .from(leases)
    .where(and(eq(leases.sessionId, sessionId), isNull(leases.releasedAt)));
  let released = 0;
  for (const lease of held) {
    const kind = lease.ownerKind === "admin" ? "admin" : "token";
    if ((await endLease(db, lease.id, "session_ended", { kind, id: lease.ownerId })) !== null) released += 1;
  }
  return released;
}

/** Lapses every lease past its expiry or idle deadline (a periodic sweep; acquisition also lapses per host). */
export async function lapseIdleLeases(db: Database): Promise<number> {
  const hostIds = await db
    .selectDistinct({ hostId: leases.hostId })
    .from(leases)
    .where(and(isNull(leases.releasedAt), sql`(${leases.expiresAt} <= now() or ${leases.idleExpiresAt} <= now())`));
  let count = 0;
  for (const { hostId } of hostIds) {
    await db.transaction(async (tx) => {
      await lockHost(tx, hostId);
      const before = await tx.select({ id: leases.id }).from(leases).where(and(eq(leases.hostId, hostId), isNull(leases.releasedAt)));
      await lapseOnHost(tx, hostId, new Date());
      const after = await tx.select({ id: leases.id }).from(leases).where(and(eq(leases.hostId, hostId), isNull(leases.releasedAt)));
      count += before.length - after.length;
    });
  }
  return count;
}

/** An active lease as an admin sees it: with the host's name and the holder's description. */
export interface LeaseListing {
  id: string;
  host: string;
  mode: string;
  holder_id: string;
  /** The host path label of a label lease (mode `exclusive`), else null. */
  label: string | null;
  /** e.g. `agent token "ci" (session 3f2a…)` — admins only. */
  holder: string;
  created_at: string;
  expires_at: string;
  idle_expires_at: string;
}

/** Active leases (not released, not past either deadline), newest first, for `leasehold lease list`. */
export async function listActiveLeases(db: Database, options: { limit?: number } = {}): Promise<LeaseListing[]> {
  const rows = await db
    .select({ lease: leases, host: hosts.name })
    .from(leases)
    .innerJoin(hosts, eq(hosts.id, leases.hostId))
    .where(and(isNull(leases.releasedAt), sql`${leases.expiresAt} > now()`, sql`${leases.idleExpiresAt} > now()`))
    .orderBy(desc(leases.createdAt))
    .limit(options.limit ?? 500);
  return rows.map(({ lease, host }) => ({
    id: lease.id,
    host,
    mode: lease.mode,
    label: lease.label,
    holder_id: opaqueHolderId(lease),
    holder: lease.description || `${lease.ownerKind} ${lease.ownerId}`,
    created_at: lease.createdAt.toISOString(),
    expires_at: lease.expiresAt.toISOString(),
    idle_expires_at: lease.idleExpiresAt.toISOString(),
  }));
}

export async function listLeases(db: Database, options: { hostId?: string; activeOnly?: boolean } = {}): Promise<LeaseRow[]> {
  const conditions = [];
  if (options.hostId !== undefined) conditions.push(eq(leases.hostId, options.hostId));
  if (options.activeOnly ?? true) conditions.push(isNull(leases.releasedAt), sql`${leases.expiresAt} > now()`, sql`${leases.idleExpiresAt} > now()`);
  return db.select().from(leases).where(and(...conditions)).orderBy(desc(leases.createdAt)).limit(200);
}
