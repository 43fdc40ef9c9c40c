/**
 * The job services one hub process runs in the background: the job sweep
 * (lost heartbeats → unknown, unclaimed on an offline host → HOST_UNAVAILABLE)
 * every second, and output retention (stored output of jobs finished longer
 * ago than LEASEHOLD_OUTPUT_RETENTION_S is pruned; evidence and ledger
 * digests stay) once a minute. Every replica may run them; their updates
 * are conditional.
 */
import type { Database } from "../db";
import { CLAIM_WAIT_MS, HEARTBEAT_LOST_MS, sweepJobs, type SweepWindows } from "./delivery";
import { pruneExpiredOutput } from "./intake";

export const DEFAULT_OUTPUT_RETENTION_MS = 7 * 86_400_000;
const RETENTION_EVERY_MS = 60_000;

export interface JobServices {
  stop(): Promise<void>;
}

export function startJobServices(db: Database, options: { intervalMs?: number; windows?: SweepWindows; retentionMs?: number; onError?: (error: unknown) => void } = {}): JobServices {
  const windows = options.windows ?? { heartbeatLostMs: HEARTBEAT_LOST_MS, claimWaitMs: CLAIM_WAIT_MS };
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const startedAt = Date.now();
  let retainedAt = 0;
  const timer = setInterval(() => {
    if (stopped) return;
    // A hub that just (re)started has not been reachable: give guests one heartbeat window
    // to renew their claims before calling any of them lost.
    const lost = Date.now() - startedAt > windows.heartbeatLostMs;
    const retention = Date.now() - retainedAt >= RETENTION_EVERY_MS;
    if (retention) retainedAt = Date.now();
    running = sweepJobs(db, { lost, windows })
      .then(() => (retention ? pruneExpiredOutput(db, options.retentionMs ?? DEFAULT_OUTPUT_RETENTION_MS) : 0))
      .catch((error: unknown) => options.onError?.(error));
  }, options.intervalMs ?? 1000);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
