/**
 * The host services one hub process runs in the background: the job sweep
 * (lost heartbeats → unknown, unclaimed → HOST_UNAVAILABLE). Every replica
 * may run it; its updates are conditional.
 */
import type { Database } from "../db";
import { HEARTBEAT_LOST_MS, sweepJobs } from "./delivery";

export interface HostServices {
  stop(): Promise<void>;
}

export function startHostServices(db: Database, options: { intervalMs?: number; onError?: (error: unknown) => void } = {}): HostServices {
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const startedAt = Date.now();
  const timer = setInterval(() => {
    if (stopped) return;
    // A hub that just (re)started has not been reachable: give guests one heartbeat window
    // to renew their claims before calling any of them lost.
    const lost = Date.now() - startedAt > HEARTBEAT_LOST_MS;
    running = sweepJobs(db, { lost }).catch((error: unknown) => options.onError?.(error));
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
