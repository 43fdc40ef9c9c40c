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
