/**
 * In-process wake-ups between the pipeline (a job was queued, an action
 * completed) and the handlers that wait for them (a guest's long-poll, a
 * caller waiting for its result). Kept on globalThis because the Next.js
 * route bundles and the CLI-loaded server each have their own module copies.
 * Waiters also poll the database, so another hub replica's changes are seen
 * too — a wake-up only makes them prompt.
 */
import { EventEmitter } from "node:events";

const KEY = Symbol.for("leasehold.hosts.wake");

function emitter(): EventEmitter {
  const g = globalThis as unknown as Record<symbol, EventEmitter | undefined>;
  let e = g[KEY];
  if (e === undefined) {
    e = new EventEmitter();
    e.setMaxListeners(0);
    g[KEY] = e;
  }
  return e;
}

export function wake(topic: string): void {
  const e = emitter();
  if (topic.startsWith("job:")) {
    // One queued job needs one claimer: waking every waiting long-poll of the host made each of
    // them run a claim transaction for the one job (issue 16). A waiter that finds nothing, or
    // stops waiting, is covered by the next wake-up or its own poll.
    const [first] = e.listeners(topic) as Array<() => void>;
    first?.();
    return;
  }
  e.emit(topic);
}

/** True when something in this process is waiting on `topic` now. */
export function hasWaiter(topic: string): boolean {
  return emitter().listenerCount(topic) > 0;
}

export const jobTopic = (hostId: string): string => `job:${hostId}`;
export const actionTopic = (actionId: string): string => `action:${actionId}`;

/** Resolves after `ms`, or earlier when `topic` is woken or `signal` aborts. */
export function sleepUntilWoken(topic: string, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const e = emitter();
    const done = (): void => {
      clearTimeout(timer);
      e.off(topic, done);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    e.on(topic, done);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Bytes of output a running job's workload has written so far (a count; never content). */
export interface OutputProgress {
  stdout_bytes: number;
  stderr_bytes: number;
}

const progressEvent = (actionId: string): string => `progress:${actionId}`;

/** Tells this process's waiters on `actionId` how much output its job has written. */
export function emitProgress(actionId: string, progress: OutputProgress): void {
  emitter().emit(progressEvent(actionId), progress);
}

/** Listens for `actionId`'s output progress in this process; returns the unsubscribe. */
export function onOutputProgress(actionId: string, listener: (progress: OutputProgress) => void): () => void {
  const e = emitter();
  const event = progressEvent(actionId);
  e.on(event, listener);
  return () => e.off(event, listener);
}

/** Wakes the long-poll of `hostId`'s guest (in this process; other replicas poll). */
export function notifyJobQueued(hostId: string): void {
  wake(jobTopic(hostId));
}
