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

type SubscriberState = "sleeping" | "busy" | "woken";
// On the listener function itself (not a module-level map): route bundles have their own copies of this module.
const SUBSCRIBER_STATE = Symbol.for("leasehold.hosts.wake.subscriber-state");

export function wake(topic: string): void {
  const e = emitter();
  if (topic.startsWith("job:")) {
    // One queued job needs one claimer: waking every waiting long-poll of the host made each of
    // them run a claim transaction for the one job. A waiter that finds nothing, or
    // stops waiting, is covered by the next wake-up or its own poll.
    // A standing subscription (subscribeTopic) says whether it sleeps, is busy or already holds a
    // wake-up: prefer one asleep, then one busy, so two jobs queued at once wake two claimers.
    const listeners = e.listeners(topic) as Array<(() => void) & { [SUBSCRIBER_STATE]?: () => SubscriberState }>;
    const state = (l: (typeof listeners)[number]): SubscriberState => l[SUBSCRIBER_STATE]?.() ?? "sleeping";
    const chosen = listeners.find((l) => state(l) === "sleeping") ?? listeners.find((l) => state(l) === "busy") ?? listeners[0];
    chosen?.();
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

/**
 * A standing subscription to `topic`: a wake-up that comes while the
 * subscriber is busy (reading the database) is kept for its next `wait`,
 * not lost. It also makes the subscriber a waiter (`hasWaiter`) the whole
 * time, not only while it sleeps.
 */
export interface TopicSubscription {
  /**
   * Resolves at once if woken since the last wait, else at the next wake-up,
   * after `ms`, or on abort: true when a wake-up ended it.
   */
  wait(ms: number, signal?: AbortSignal): Promise<boolean>;
  close(): void;
}

export function subscribeTopic(topic: string): TopicSubscription {
  const e = emitter();
  let woken = false;
  let release: ((byWake: boolean) => void) | undefined;
  const listener = (): void => {
    woken = true;
    release?.(true);
  };
  Object.assign(listener, { [SUBSCRIBER_STATE]: (): SubscriberState => (woken ? "woken" : release !== undefined ? "sleeping" : "busy") });
  e.on(topic, listener);
  return {
    wait(ms, signal) {
      return new Promise((resolve) => {
        if (woken || signal?.aborted) {
          const byWake = woken;
          woken = false;
          resolve(byWake);
          return;
        }
        const done = (byWake: boolean): void => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          release = undefined;
          // Consumed by this wait; one that comes after it ended is kept for the next.
          woken = false;
          resolve(byWake);
        };
        const onAbort = (): void => done(false);
        const timer = setTimeout(() => done(false), Math.max(0, ms));
        release = done;
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    close() {
      e.off(topic, listener);
      release?.(false);
    },
  };
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
