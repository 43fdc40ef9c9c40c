/**
 * Approved actions are dispatched even when nobody waits for them
 * (docs/design.md#pipeline, step 7): the caller's process may have died
 * holding the call, or the caller may never call `approval_wait`. Every hub
 * process runs this pass; the dispatch is conditional on the action still
 * being approved, so processes (and a live waiter) racing on one action
 * queue one job.
 */
import { approvedUndispatched, dispatchApprovedAction } from "./pipeline";
import type { PipelineDeps } from "./types";

/** A waiter dispatches within milliseconds of the decision; after this the action is taken to have none. */
export const APPROVED_DISPATCH_GRACE_MS = 1_500;
const LOOK_BACK_MS = 24 * 3_600_000;
/** An action whose host was busy is tried again after this, not every pass. */
const BUSY_RETRY_MS = 5_000;

export interface ApprovedDispatch {
  /** One pass now (tests; the timer runs it every `intervalMs`). Returns how many it dispatched. */
  pass(): Promise<number>;
  stop(): Promise<void>;
}

export function startApprovedDispatch(deps: PipelineDeps, options: { intervalMs?: number; graceMs?: number; onError?: (error: unknown) => void } = {}): ApprovedDispatch {
  const busyUntil = new Map<string, number>();
  let stopped = false;
  let running: Promise<number> | undefined;
  const pass = (): Promise<number> =>
    (running ??= (async () => {
      let dispatched = 0;
      try {
        const now = Date.now();
        for (const [id, until] of busyUntil) if (until <= now) busyUntil.delete(id);
        const ids = await approvedUndispatched(deps.handle.db, { graceMs: options.graceMs ?? APPROVED_DISPATCH_GRACE_MS, lookBackMs: LOOK_BACK_MS, limit: 20 });
        for (const id of ids) {
          if (stopped) break;
          if (busyUntil.has(id)) continue;
          try {
            const outcome = await dispatchApprovedAction(deps, id);
            if (outcome === "dispatched") dispatched += 1;
            if (outcome === "busy") busyUntil.set(id, Date.now() + BUSY_RETRY_MS);
          } catch (error) {
            busyUntil.set(id, Date.now() + BUSY_RETRY_MS);
            options.onError?.(error);
          }
        }
      } catch (error) {
        options.onError?.(error);
      } finally {
        running = undefined;
      }
      return dispatched;
    })());
  const timer = setInterval(() => {
    if (!stopped) void pass();
  }, options.intervalMs ?? 1_000);
  timer.unref();
  return {
    pass,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
