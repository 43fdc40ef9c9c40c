/**
 * The dispatch queue: hub-signed job rows that a host's guest agent claims.
 *
 * The signed document itself (`leasehold.job/1`), `signJob` and `verifyJob`
 * are the hub ⇄ guest contract and live in server/trust/job.ts, the one
 * verifier the guest runs too; they are re-exported here for the hub.
 *
 * Claiming uses `FOR UPDATE SKIP LOCKED`: any number of claimers (guest
 * connections served by any hub replica) take distinct jobs without waiting
 * on each other.
 */
import { sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import type { JobDocument } from "../trust/job";

export { JOB_SCHEMA, signJob, verifyJob } from "../trust/job";
export type { JobDocument, SignedJob } from "../trust/job";

export interface ClaimedJob {
  id: string;
  actionId: string;
  hostId: string;
  document: JobDocument;
  signature: string;
  deadline: Date;
}

/** Fair shares of a host's job slots (docs/design.md#data; server/dispatch/README.md). */
export interface FairShare {
  /**
   * Running (claimed) jobs one caller — a token, or an admin — may hold on
   * one host. Below the guest's slot count (default 3 of the guest's 4), so
   * one caller never holds every slot and another's job is claimed at once.
   * LEASEHOLD_JOB_SLOTS_PER_TOKEN.
   */
  perCallerSlots: number;
}

export const DEFAULT_FAIR_SHARE: FairShare = { perCallerSlots: 3 };

/**
 * Offers the next queued job for `hostId`, or returns null: the job becomes
 * `offered` (server/jobs/delivery.ts `ackJob` turns it into `claimed` when
 * the guest acknowledges it; an offer never acknowledged goes back to the
 * queue). An offered job counts against its caller's share like a running
 * one, so a re-queue never lets a caller past its cap. Fair across
 * callers: among the queued jobs whose caller (`actions.caller_key`) holds
 * fewer than `perCallerSlots` running jobs on this host, it takes the job of
 * the caller with the fewest running there, oldest first. A caller at its cap
 * waits (its jobs stay queued) while others' jobs are claimed.
 *
 * One transaction holds a per-host advisory lock, so two claimers of one host
 * cannot both count the same caller below its cap; the row itself is taken
 * with SKIP LOCKED. Jobs past their deadline are not handed out.
 */
export async function claimJob(db: Database, hostId: string, claimer = "guest", fair: FairShare = DEFAULT_FAIR_SHARE): Promise<ClaimedJob | null> {
  const cap = Math.max(1, Math.floor(fair.perCallerSlots));
  const rows = await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`leasehold-claim:${hostId}`}))`);
    return executeRows<{ id: string; action_id: string; host_id: string; payload: unknown; signature: string; deadline: Date | string }>(
      tx,
      sql`with running as (
            select a.caller_key, count(*)::int as n
            from jobs c join actions a on a.id = c.action_id
            where c.host_id = ${hostId} and c.state in ('offered', 'claimed')
            group by a.caller_key
          ),
          candidate as (
            select j.id
            from jobs j
            join actions a on a.id = j.action_id
            left join running r on r.caller_key = a.caller_key
            where j.host_id = ${hostId} and j.state = 'queued' and j.deadline > now()
              and coalesce(r.n, 0) < ${cap}
            order by coalesce(r.n, 0), j.created_at, j.id
            limit 1
            for update of j skip locked
          )
          update jobs set state = 'offered', claimed_at = now(), heartbeat_at = null, claimed_by = ${claimer}
          where id = (select id from candidate)
          returning id, action_id, host_id, payload, signature, deadline`,
    );
  });
  const row = rows[0];
  if (row === undefined) return null;
  const payload = typeof row.payload === "string" ? (JSON.parse(row.payload) as JobDocument) : (row.payload as JobDocument);
  return { id: row.id, actionId: row.action_id, hostId: row.host_id, document: payload, signature: row.signature, deadline: new Date(row.deadline) };
}
