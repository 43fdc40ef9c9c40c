/**
 * Job delivery to guests and the hub's watch over claimed jobs.
 *
 * - `nextJob`: a guest's long-poll. Offers (via dispatch/claimJob: fair
 *   across callers, at most `perCallerSlots` offered or running jobs per
 *   caller on the host) the next queued job for the host, waiting up to
 *   `waitMs` for one. The job is then `offered`, not yet the guest's.
 * - `ackJob`: the guest acknowledges an offer before it runs anything; only
 *   then is the job `claimed` (delivered). A long-poll's answer can be lost
 *   on the way (the link went down in its last seconds, a proxy dropped it):
 *   a job that never reached the guest is never acknowledged, so the hub
 *   knows it did not run.
 * - `heartbeat`: the guest renews its claim while the job runs.
 * - `sweepJobs`: run periodically by every hub process (each update is
 *   conditional, so replicas may race harmlessly):
 *     claimed, no heartbeat for `heartbeatLostMs` (default 10 s) → job
 *       `lost`, action `unknown`, sealed as job/1 `unknown`. Never re-queued:
 *       the guest may have run it, and running twice is worse than not knowing.
 *     queued and unclaimed for `claimWaitMs` (default 10 s) while its host
 *       is offline (its guest not heard for `claimWaitMs`, at least 6 s: a
 *       waiting long-poll refreshes the host's last_seen_at every 2 s), or
 *       queued past its deadline → job
 *       `cancelled`, action `failed` with HOST_UNAVAILABLE, sealed as job/1
 *       `host_unavailable`. A job whose host is online but busy (every slot
 *       taken, or its caller at its fair share) waits in the queue: a busy
 *       guest is heard from by its heartbeats every 2 s, an idle one by its
 *       long-polls.
 *     offered and not acknowledged within `offerAckMs` (default 5 s) → back
 *       to `queued` (it never reached the guest, or the guest dropped it): a
 *       later long-poll offers it again, or, its host offline, the sweep
 *       above ends it `host_unavailable` — never `unknown`.
 *   The first two windows are hub settings (LEASEHOLD_JOB_HEARTBEAT_LOST_S,
 *   LEASEHOLD_JOB_CLAIM_WAIT_S).
 *   The action's lease is left to lapse at its own expiry.
 */
import { eq, sql } from "drizzle-orm";
import { claimJob, DEFAULT_FAIR_SHARE, type ClaimedJob, type FairShare } from "../dispatch/jobs";
import { executeRows, type Database } from "../db";
import { actions } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { hashActor } from "../ledger/entry";
import { announce, announceProgress } from "./notify";
import { actionTopic, jobTopic, subscribeTopic, type OutputProgress } from "./wake";
import { traceStage } from "../../common/trace/stage";
import { touchHostLastSeen } from "../hosts/last-seen";
import type { HeartbeatAnswer } from "../trust/protocol";

export const HEARTBEAT_INTERVAL_MS = 2_000;
export const HEARTBEAT_LOST_MS = 10_000;
export const CLAIM_WAIT_MS = 10_000;
export const MAX_LONG_POLL_MS = 25_000;
/**
 * How long an offered job waits for the guest's acknowledgement before it is
 * re-queued. The guest acks as soon as the long-poll answers; the bound only
 * needs to cover that one signed request's round trip and retries.
 */
export const OFFER_ACK_MS = 5_000;
// Waiting long-polls are woken when a job is queued (wake.ts, NOTIFY across processes); this is the
// fallback should a wake-up be missed. Each pass is a claim transaction, so every idle guest slot
// polling twice a second was most of the claims the database saw.
const POLL_FALLBACK_MS = 2_000;

export async function nextJob(db: Database, hostId: string, waitMs: number, signal?: AbortSignal, fair: FairShare = DEFAULT_FAIR_SHARE): Promise<ClaimedJob | null> {
  const until = Date.now() + Math.min(Math.max(0, waitMs), MAX_LONG_POLL_MS);
  // Subscribed before the first look, so a job queued while this poll reads wakes it, not the fallback.
  const queued = subscribeTopic(jobTopic(hostId));
  try {
    let woken = false;
    for (;;) {
      await touchHostLastSeen(db, hostId);
      // A claim is a transaction under the host's lock and most looks find nothing (a guest slot's
      // first look after each job, every fallback poll): unless woken by a queued job, ask the
      // pending-jobs index first (one read instead of four statements).
      if (woken || (await jobQueuedFor(db, hostId))) {
        const job = await claimJob(db, hostId, `host:${hostId}`, fair);
        if (job !== null) {
          traceStage(job.actionId, "hub.claimed");
          return job;
        }
      }
      const left = until - Date.now();
      if (left <= 0 || signal?.aborted) return null;
      woken = await queued.wait(Math.min(left, POLL_FALLBACK_MS), signal);
    }
  } finally {
    queued.close();
  }
}

async function jobQueuedFor(db: Database, hostId: string): Promise<boolean> {
  const [row] = await executeRows<{ queued: boolean }>(db, sql`select exists (select 1 from jobs where host_id = ${hostId} and state = 'queued') as queued`);
  return row?.queued === true;
}

// A guest waiting in a long-poll is online: its host's last_seen_at is refreshed while it
// waits (last-seen.ts: at most once a second per host and process), so the sweep can tell an
// offline host from an idle or busy one within OFFLINE_AFTER_MS. Busy guests are heard by heartbeats.
const OFFLINE_AFTER_MS = 3 * HEARTBEAT_INTERVAL_MS;

/**
 * Renews the host's claim on a job; false when the job is no longer this
 * host's running job. `output` (bytes written so far) is passed on to the
 * callers waiting on the job's action — only for a claim that is still live,
 * so a host cannot speak for a job it does not hold.
 */
export async function heartbeat(db: Database, hostId: string, jobId: string, output?: OutputProgress): Promise<boolean> {
  return (await beat(db, hostId, jobId, output)).alive;
}

/**
 * `heartbeat`, with what the guest is told back (server/trust/protocol.ts
 * `HeartbeatAnswer`): `stop` when the job's action was cancelled while it
 * runs (stop.ts `requestStop`), so the guest kills its lease.
 */
export async function beat(db: Database, hostId: string, jobId: string, output?: OutputProgress): Promise<HeartbeatAnswer> {
  if (!JOB_ID.test(jobId)) return { alive: false };
  const [row] = await executeRows<{ action_id: string; stop: boolean }>(
    db,
    sql`update jobs set heartbeat_at = now()
        where id = ${jobId} and host_id = ${hostId} and state = 'claimed'
        returning action_id, (result ? 'stop') as stop`,
  );
  if (row === undefined) return { alive: false };
  if (output !== undefined) await announceProgress(db, row.action_id, output);
  return row.stop ? { alive: true, stop: true } : { alive: true };
}

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The guest's acknowledgement of an offered job: from here on the job is
 * delivered (`claimed`, its heartbeat window starts) and the guest may run
 * it. Idempotent for this host (a retried ack whose answer was lost is
 * answered alike), so the guest can retry until it hears back. NOT_FOUND
 * for a job never offered to this host, another host's, or an offer already
 * withdrawn (re-queued or ended): the guest must then not run it.
 */
export async function ackJob(db: Database, hostId: string, jobId: string): Promise<{ acked: true }> {
  const refused = () => new LeaseholdError("NOT_FOUND", "no offer of this job to this host (never offered, withdrawn after its acknowledgement window, or ended); do not run it", { tier: "hub" });
  if (!JOB_ID.test(jobId)) throw refused();
  const [row] = await executeRows<{ id: string; action_id: string }>(
    db,
    sql`update jobs set state = 'claimed', heartbeat_at = now()
        where id = ${jobId} and host_id = ${hostId} and state in ('offered', 'claimed')
        returning id, action_id`,
  );
  if (row === undefined) throw refused();
  traceStage(row.action_id, "hub.acked");
  return { acked: true };
}

function storedResult(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
}

export interface SweepWindows {
  heartbeatLostMs: number;
  claimWaitMs: number;
  /** Unacknowledged offers are re-queued after this (default OFFER_ACK_MS). */
  offerAckMs?: number;
}

const DEFAULT_WINDOWS: SweepWindows = { heartbeatLostMs: HEARTBEAT_LOST_MS, claimWaitMs: CLAIM_WAIT_MS, offerAckMs: OFFER_ACK_MS };

/**
 * Puts offers the guest never acknowledged back in the queue. The job keeps
 * its created_at, so a host that stays offline ends it HOST_UNAVAILABLE at
 * the next pass; a guest that comes back gets it offered again.
 */
async function requeueUnackedOffers(db: Database, w: SweepWindows): Promise<number> {
  const rows = await executeRows<{ id: string; host_id: string }>(
    db,
    sql`update jobs set state = 'queued', claimed_at = null, claimed_by = null, heartbeat_at = null
        where state = 'offered' and claimed_at < now() - ${w.offerAckMs ?? OFFER_ACK_MS} * interval '1 millisecond'
        returning id, host_id`,
  );
  for (const host of new Set(rows.map((r) => r.host_id))) await announce(db, jobTopic(host));
  return rows.length;
}

const staleClaim = (w: SweepWindows) => sql`state = 'claimed' and heartbeat_at < now() - ${w.heartbeatLostMs} * interval '1 millisecond'`;
// A host is offline when its guest has not been heard (signed request, a long-poll still
// waiting, heartbeat, health) for the claim window, and never less than three heartbeats.
const hostOffline = (w: SweepWindows) =>
  sql`not exists (select 1 from hosts h where h.id = jobs.host_id and h.removed_at is null
        and h.last_seen_at >= now() - ${Math.max(w.claimWaitMs, OFFLINE_AFTER_MS)} * interval '1 millisecond')`;
const unclaimed = (w: SweepWindows) =>
  sql`state = 'queued' and ((created_at < now() - ${w.claimWaitMs} * interval '1 millisecond' and ${hostOffline(w)}) or deadline <= now())`;

function endError(event: "unknown" | "host_unavailable", actionId: string, w: SweepWindows): LeaseholdError {
  return event === "unknown"
    ? new LeaseholdError("HOST_UNAVAILABLE", "the host stopped answering while it held this job; whether it ran is unknown, and it is not retried", {
        tier: "hub",
        retryable: false,
        hint: "check the host; repeat the action yourself if it is safe to run again",
        details: { action_id: actionId, action_state: "unknown" },
      })
    : new LeaseholdError("HOST_UNAVAILABLE", `no guest agent claimed the job within ${w.claimWaitMs / 1000} s while the host was offline (or it waited for a free slot past its deadline); nothing ran`, {
        tier: "hub",
        retryable: true,
        hint: "hosts_list shows whether the host is online",
        details: { action_id: actionId, action_state: "failed" },
      });
}

/** Ends one job (conditionally: only if it is still stale) and its action, sealed, in one transaction. */
async function endJob(db: Database, jobId: string, event: "unknown" | "host_unavailable", w: SweepWindows): Promise<boolean> {
  const ended = await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    const [job] = await executeRows<{ id: string; action_id: string; host_id: string }>(
      tx,
      sql`update jobs set state = ${event === "unknown" ? "lost" : "cancelled"}, completed_at = now()
          where id = ${jobId} and ${event === "unknown" ? staleClaim(w) : unclaimed(w)}
          returning id, action_id, host_id`,
    );
    if (job === undefined) return null;
    const [action] = await tx.select({ actionHash: actions.actionHash, result: actions.result }).from(actions).where(eq(actions.id, job.action_id));
    if (action === undefined) return null;
    await appendEntry(tx, {
      type: "job/1",
      time: new Date(),
      action_id: job.action_id,
      actor: hashActor("system", "hub"),
      data: { event, job_id: job.id, host_id: job.host_id, action_hash: action.actionHash as `sha256:${string}` },
    });
    await tx
      .update(actions)
      .set({ state: event === "unknown" ? "unknown" : "failed", result: { ...storedResult(action.result), error: endError(event, job.action_id, w).toPayload() }, updatedAt: new Date() })
      .where(eq(actions.id, job.action_id));
    return job.action_id;
  });
  if (ended !== null) await announce(db, actionTopic(ended));
  return ended !== null;
}

/** One pass of the watch over offered, claimed and queued jobs. Returns how many jobs it ended. */
export async function sweepJobs(db: Database, options: { lost?: boolean; windows?: SweepWindows } = {}): Promise<number> {
  const w = options.windows ?? DEFAULT_WINDOWS;
  // Withdrawn offers first: a job that never reached its guest must be judged as queued, not lost.
  await requeueUnackedOffers(db, w);
  const stale = options.lost === false ? [] : await executeRows<{ id: string }>(db, sql`select id from jobs where ${staleClaim(w)} limit 100`);
  const waiting = await executeRows<{ id: string }>(db, sql`select id from jobs where ${unclaimed(w)} limit 100`);
  let n = 0;
  for (const j of stale) if (await endJob(db, j.id, "unknown", w)) n += 1;
  for (const j of waiting) if (await endJob(db, j.id, "host_unavailable", w)) n += 1;
  return n;
}
