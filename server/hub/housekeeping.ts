import type { Database } from "../db";
import { expireOverdueApprovals } from "../approvals/approvals";
import { lapseIdleLeases } from "../leases/leases";
import { sweepArtifacts } from "../artifacts";

/** Artifact expiry is measured in hours and days: a sweep a minute is prompt enough and keeps the scan rare. */
const ARTIFACT_SWEEP_MS = 60_000;

/**
 * Deadlines that must take effect even when nobody is looking: an undecided
 * approval is denied (and the denial sealed) at its deadline, an idle lease
 * lapses, an idle incomplete or retired artifact upload expires and its
 * unreferenced bytes are reclaimed (server/artifacts). The pipeline also applies both lazily on every wait, list and
 * acquire; this sweep makes them happen on time in an idle hub. Every hub
 * process runs it; both operations are idempotent under concurrency.
 */
export function startHousekeeping(db: Database, options: { intervalMs?: number; onError?: (error: unknown) => void } = {}): { stop(): Promise<void> } {
  const intervalMs = options.intervalMs ?? 5_000;
  let running: Promise<void> | undefined;
  let lastArtifactSweep = 0;
  const tick = () => {
    running ??= (async () => {
      try {
        await expireOverdueApprovals(db);
        await lapseIdleLeases(db);
        if (Date.now() - lastArtifactSweep >= ARTIFACT_SWEEP_MS) {
          lastArtifactSweep = Date.now();
          await sweepArtifacts(db);
        }
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
