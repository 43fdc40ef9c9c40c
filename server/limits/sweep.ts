import type { Database } from "../db";
import { pruneBuckets } from "./buckets";
import { renewInFlight, IN_FLIGHT_LEASE_MS } from "./in-flight";
import { pruneWindows } from "./windows";

/** A bucket untouched this long has refilled at any configured rate (the slowest, 1/min, refills 10 in 10 min). */
const BUCKET_IDLE_MS = 15 * 60_000;
const EVERY_MS = IN_FLIGHT_LEASE_MS / 3;

/**
 * Every hub process runs this: renews its own in-flight rows (so they keep
 * counting while its requests run) and prunes rows that hold nothing any
 * more. All of it is idempotent under concurrency.
 */
export function startLimitSweep(db: Database, onError: (error: unknown) => void): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const tick = () => {
    running ??= (async () => {
      try {
        await renewInFlight(db);
        await pruneWindows(db);
        await pruneBuckets(db, BUCKET_IDLE_MS);
      } catch (error) {
        onError(error);
      } finally {
        running = undefined;
      }
    })();
  };
  const timer = setInterval(tick, EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
