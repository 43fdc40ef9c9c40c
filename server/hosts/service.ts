/**
 * The host services one hub process runs in the background: the job sweep
 * (lost heartbeats → unknown, unclaimed → HOST_UNAVAILABLE). Every replica
 * may run it; its updates are conditional.
 */
import type { Database } from "../db";
import { CLAIM_WAIT_MS, HEARTBEAT_LOST_MS, sweepJobs, type SweepWindows } from "./delivery";

export interface HostServices {
  stop(): Promise<void>;
}

export function startHostServices(db: Database, options: { intervalMs?: number; windows?: SweepWindows; onError?: (error: unknown) => void } = {}): HostServices {
  const windows = options.windows ?? { heartbeatLostMs: HEARTBEAT_LOST_MS, claimWaitMs: CLAIM_WAIT_MS };
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const startedAt = Date.now();
  const timer = setInterval(() => {
    if (stopped) return;
    // A hub that just (re)started has not been reachable: give guests one heartbeat window
    // to renew their claims before calling any of them lost.
    const lost = Date.now() - startedAt > windows.heartbeatLostMs;
    running = sweepJobs(db, { lost, windows }).catch((error: unknown) => options.onError?.(error));
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
