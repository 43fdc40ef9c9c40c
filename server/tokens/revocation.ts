/**
 * Revocation ends what a token started (an action a revoked token
 * submitted, approved after the revocation, still ran).
 *
 * One transaction, which first locks the token row:
 *   1. token/1 `revoked` is sealed and `revoked_at` set — the next request
 *      that presents the token is refused;
 *   2. every pending approval of its actions is denied, reason
 *      "token revoked", each sealed approval/1 `denied`;
 *   3. every job of its actions still `queued` (not claimed by a guest) is
 *      `cancelled`, its action `failed` with FORBIDDEN, each sealed job/1
 *      `cancelled`.
 * Then, each in its own transaction (they lock host rows): every lease the
 * token holds is released, sealed lease/1 `revoked`.
 *
 * Then every job of its actions a guest has already claimed (running) is
 * stopped through the one cancel path (server/actions/cancel.ts, by
 * `token_revoked`, sealed cancel/1): its guest kills the lease on its next
 * heartbeat and posts the signed result, stored as `cancelled`. The
 * revocation does not wait for those results. Its lease is released at once
 * all the same, so the host is free for other sessions.
 *
 * Races: the pipeline's dispatch re-reads the token row FOR SHARE inside the
 * transaction that queues a job (server/actions/pipeline.ts), so a dispatch
 * either commits before this transaction locks the row — and its queued job
 * is cancelled in step 3 — or sees the revocation and refuses.
 */
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { denyApprovalsOfToken, announceDecision } from "../approvals";
import type { Database } from "../db";
import { actions, agentTokens, jobs, leases } from "../db/schema";
import { LeaseholdError } from "../errors";
import { cancelAction } from "../actions/cancel";
import { TOKEN_REVOKED_MESSAGE } from "../actions/messages";
import { announce } from "../jobs/notify";
import { actionTopic } from "../jobs/wake";
import { appendEntry } from "../ledger/append";
import { hashActor } from "../ledger/entry";
import { revokeLease } from "../leases";
import { fromRow, scopeDigest, type AgentToken } from "./store";

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What a revocation ended. `jobsRunning`: running jobs (claimed by a guest) told to stop. */
export interface RevocationEffects {
  approvalsDenied: number;
  jobsCancelled: number;
  leasesReleased: number;
  jobsRunning: number;
}

const NOTHING: RevocationEffects = { approvalsDenied: 0, jobsCancelled: 0, leasesReleased: 0, jobsRunning: 0 };


function revokedError(actionId: string): LeaseholdError {
  return new LeaseholdError("FORBIDDEN", TOKEN_REVOKED_MESSAGE, { tier: "hub", details: { action_id: actionId, token_revoked: true } });
}

/**
 * Revokes a token and ends what it started (see the file comment). Revoking
 * a revoked token changes nothing and says so (`alreadyRevoked`), but still
 * releases any lease left behind.
 */
export async function revokeToken(
  db: Database,
  id: string,
  revokedBy: string,
  now = new Date(),
  // `system`: the hub revoked it by itself (server/oauth reuse detection), not a person.
  actorKind: "admin" | "system" = "admin",
): Promise<{ token: AgentToken; alreadyRevoked: boolean; ended: RevocationEffects }> {
  if (!UUID_PATTERN.test(id)) throw new LeaseholdError("NOT_FOUND", `no token ${JSON.stringify(id)}`, { hint: "leasehold token list shows token ids" });
  const actor = hashActor(actorKind, revokedBy);
  const inside = await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    const [row] = await tx.select().from(agentTokens).where(eq(agentTokens.id, id)).for("update");
    if (!row) throw new LeaseholdError("NOT_FOUND", `no token ${id}`, { hint: "leasehold token list shows token ids" });
    const token = fromRow(row);
    if (token.revokedAt !== null) return { token, alreadyRevoked: true, denied: [] as string[], cancelled: [] as string[], running: [] as string[] };
    await appendEntry(tx, {
      type: "token/1",
      time: now,
      action_id: null,
      actor,
      data: { event: "revoked", token_id: id, scope_digest: scopeDigest(token), read_only: token.readOnly, expires_at: token.expiresAt?.toISOString() ?? null },
    });
    const [updated] = await tx.update(agentTokens).set({ revokedAt: now }).where(eq(agentTokens.id, id)).returning();
    const denied = await denyApprovalsOfToken(tx, id, actor);
    const cancelled = await cancelQueuedJobs(tx, id, actor);
    const running = await tx
      .select({ actionId: jobs.actionId })
      .from(jobs)
      .where(and(eq(jobs.state, "claimed"), sql`${jobs.actionId} in (select ${actions.id} from ${actions} where ${actions.tokenId} = ${id})`));
    return { token: updated ? fromRow(updated) : { ...token, revokedAt: now }, alreadyRevoked: false, denied, cancelled, running: running.map((r) => r.actionId) };
  });
  for (const approvalId of inside.denied) await announceDecision(db, approvalId);
  for (const actionId of inside.cancelled) await announce(db, actionTopic(actionId));
  const stopped = await stopRunning(db, inside.running, actorKind === "system" ? "system" : revokedBy);
  const leasesReleased = await releaseTokenLeases(db, id, revokedBy);
  const ended = inside.alreadyRevoked
    ? { ...NOTHING, leasesReleased }
    : { approvalsDenied: inside.denied.length, jobsCancelled: inside.cancelled.length, leasesReleased, jobsRunning: stopped };
  return { token: inside.token, alreadyRevoked: inside.alreadyRevoked, ended };
}

/**
 * Cancels the token's jobs no guest has claimed yet — queued, or offered and
 * not yet acknowledged (a guest acks before it runs anything, and its ack of
 * a cancelled job is refused); each sealed job/1 `cancelled`. Returns their action ids.
 */
async function cancelQueuedJobs(tx: Database, tokenId: string, actor: `sha256:${string}`): Promise<string[]> {
  const cancelled = await tx
    .update(jobs)
    .set({ state: "cancelled", completedAt: new Date() })
    .where(and(inArray(jobs.state, ["queued", "offered"]), sql`${jobs.actionId} in (select ${actions.id} from ${actions} where ${actions.tokenId} = ${tokenId})`))
    .returning({ id: jobs.id, actionId: jobs.actionId, hostId: jobs.hostId });
  if (cancelled.length === 0) return [];
  const rows = await tx.select({ id: actions.id, actionHash: actions.actionHash, result: actions.result }).from(actions).where(inArray(actions.id, cancelled.map((j) => j.actionId)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const job of cancelled) {
    const action = byId.get(job.actionId);
    if (action === undefined) continue;
    await appendEntry(tx, {
      type: "job/1",
      time: new Date(),
      action_id: job.actionId,
      actor,
      data: { event: "cancelled", job_id: job.id, host_id: job.hostId, action_hash: action.actionHash as `sha256:${string}` },
    });
    const stored = action.result !== null && typeof action.result === "object" ? (action.result as Record<string, unknown>) : {};
    await tx
      .update(actions)
      .set({ state: "failed", result: { ...stored, error: revokedError(job.actionId).toPayload() }, updatedAt: new Date() })
      .where(eq(actions.id, job.actionId));
  }
  return cancelled.map((j) => j.actionId);
}

/**
 * Tells the guests running the token's jobs to stop them (cancel.ts, not
 * waiting for their results). One that finished meanwhile has nothing left
 * to stop. Returns how many were told.
 */
async function stopRunning(db: Database, actionIds: readonly string[], revokedBy: string): Promise<number> {
  let told = 0;
  for (const actionId of actionIds) {
    try {
      await cancelAction(db, { actionId, by: { kind: "token_revoked", id: revokedBy }, reason: "token revoked", confirmMs: 0 });
      told += 1;
    } catch (error) {
      if (!(error instanceof LeaseholdError && error.code === "ACTION_FINISHED")) throw error;
    }
  }
  return told;
}

/** Releases every active lease the token holds (any session), sealed lease/1 `revoked` by `revokedBy`. */
async function releaseTokenLeases(db: Database, tokenId: string, revokedBy: string): Promise<number> {
  const held = await db
    .select({ id: leases.id })
    .from(leases)
    .where(and(eq(leases.ownerKind, "token"), eq(leases.ownerId, tokenId), isNull(leases.releasedAt)));
  let released = 0;
  for (const lease of held) {
    try {
      await revokeLease(db, lease.id, { id: revokedBy });
      released += 1;
    } catch (error) {
      // Released by someone else meanwhile (session end, lapse): nothing left to do.
      if (!(error instanceof LeaseholdError && error.code === "NOT_FOUND")) throw error;
    }
  }
  return released;
}
