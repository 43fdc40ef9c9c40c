import type { Database } from "../db";
import { expireOverdueApprovals } from "../approvals/approvals";
import { lapseIdleLeases } from "../leases/leases";

/**
 * Deadlines that must take effect even when nobody is looking: an undecided
 * approval is denied (and the denial sealed) at its deadline, an idle lease
 * lapses. The pipeline also applies both lazily on every wait, list and
 * acquire; this sweep makes them happen on time in an idle hub. Every hub
 * process runs it; both operations are idempotent under concurrency.
 */
export function startHousekeeping(db: Database, options: { intervalMs?: number; onError?: (error: unknown) => void } = {}): { stop(): Promise<void> } {
  const intervalMs = options.intervalMs ?? 5_000;
  let running: Promise<void> | undefined;
  const tick = () => {
    running ??= (async () => {
      try {
        await expireOverdueApprovals(db);
        await lapseIdleLeases(db);
      } catch (error) {
        options.onError?.(error);
      } finally {
        running = undefined;
      }
    })();
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
