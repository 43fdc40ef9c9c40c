/**
 * Stopping a job on the hub's side (docs/design.md#cancel). The hub never
 * calls a host: a running job is marked, and its guest hears `stop` on its
 * next heartbeat's answer (delivery.ts `beat`, every 2 s while it runs),
 * kills the lease and posts its signed result as usual. A job no guest has
 * taken yet is simply ended. Both run inside the cancelling transaction
 * (server/actions/cancel.ts), which seals cancel/1 with them.
 */
import { sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import type { HeartbeatAnswer } from "../trust/protocol";
import { actionTopic, subscribeTopic } from "./wake";

/** Marks a claimed (running) job to be stopped; false when it is not running any more (or was never taken). */
export async function requestStop(tx: Database, jobId: string): Promise<boolean> {
  const rows = await executeRows<{ id: string }>(
    tx,
    sql`update jobs set result = coalesce(result, '{}'::jsonb) || jsonb_build_object('stop', jsonb_build_object('at', now()::text))
        where id = ${jobId} and state = 'claimed'
        returning id`,
  );
  return rows.length > 0;
}

/**
 * Ends a job no guest has acknowledged (queued, or offered and not acked:
 * a guest acks before it runs anything, and its ack of a cancelled job is
 * refused). False when a guest has taken it meanwhile.
 */
export async function dropUnclaimedJob(tx: Database, jobId: string): Promise<boolean> {
  const rows = await executeRows<{ id: string }>(
    tx,
    sql`update jobs set state = 'cancelled', completed_at = now()
        where id = ${jobId} and state in ('queued', 'offered')
        returning id`,
  );
  return rows.length > 0;
}

/** Whether the hub asked for this job to be stopped (its stored `result.stop`). */
export function stopWasRequested(result: unknown): boolean {
  return result !== null && typeof result === "object" && Object.hasOwn(result, "stop");
}

/** Longest a guest's stop watch is held open (its client gives up at 35 s). */
export const STOP_WATCH_MAX_MS = 25_000;
/** Re-read between wake-ups: another process's cancel is heard by NOTIFY, and by this read if that is lost. */
const STOP_WATCH_POLL_MS = 2_000;

/**
 * The guest's stop watch (`GET /api/agent/jobs/<id>/stop?wait=MS`): answers
 * `{alive: true, stop: true}` as soon as the job's action is cancelled
 * (`requestStop`, announced on the action's topic by cancel.ts), so a stop
 * reaches the sandbox in milliseconds instead of at the next heartbeat;
 * `{alive: true}` when the wait ran out, `{alive: false}` when the job is
 * not (any longer) this host's running job. Heartbeats still carry `stop`
 * too, so a watch that failed costs latency, never the stop.
 */
export async function watchForStop(db: Database, hostId: string, jobId: string, waitMs: number, signal?: AbortSignal, pollMs = STOP_WATCH_POLL_MS): Promise<HeartbeatAnswer> {
  if (!JOB_ID.test(jobId)) return { alive: false };
  const read = async (): Promise<{ action_id: string; stop: boolean } | undefined> =>
    (
      await executeRows<{ action_id: string; stop: boolean }>(
        db,
        sql`select action_id, (coalesce(result, '{}'::jsonb) ? 'stop') as stop from jobs
            where id = ${jobId} and host_id = ${hostId} and state = 'claimed'`,
      )
    )[0];
  const first = await read();
  if (first === undefined) return { alive: false };
  if (first.stop) return { alive: true, stop: true };
  const until = Date.now() + Math.min(Math.max(0, waitMs), STOP_WATCH_MAX_MS);
  const woken = subscribeTopic(actionTopic(first.action_id));
  try {
    while (Date.now() < until && signal?.aborted !== true) {
      await woken.wait(Math.min(pollMs, until - Date.now()), signal);
      const row = await read();
      if (row === undefined) return { alive: false };
      if (row.stop) return { alive: true, stop: true };
    }
    return { alive: true };
  } finally {
    woken.close();
  }
}

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
