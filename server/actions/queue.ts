/**
 * Per-caller scheduling: within one session, read-only actions run
 * in parallel (at most `readOnlyParallel`, default 4), a mutating action is a
 * barrier for its host — it starts only after every earlier action on that
 * host finished, and later ones on that host wait for it — and results are
 * delivered in the order the calls were made.
 *
 * A call of a mutating operation whose assessed risk is read_only (`ls`
 * through run_command) counts as read-only here, as it does for the lease
 * (service.ts decides it before enqueueing, so calls keep their order).
 *
 * This is in-process ordering of one session's concurrent calls; across
 * sessions and hub processes the host's exclusive lease is what serialises
 * mutating actions.
 */
export interface QueueTask {
  mutating: boolean;
  host: string | null;
}

interface Entry extends QueueTask {
  run: () => Promise<unknown>;
  started: boolean;
  finished: boolean;
  settled: Promise<void>;
  resolveSettled: () => void;
}

class SessionQueue {
  readonly #entries: Entry[] = [];
  #lastDelivery: Promise<void> = Promise.resolve();

  constructor(private readonly readOnlyParallel: number) {}

  get idle(): boolean {
    return this.#entries.length === 0;
  }

  enqueue<T>(task: QueueTask, fn: () => Promise<T>): Promise<T> {
    let resolveSettled!: () => void;
    const settled = new Promise<void>((resolve) => (resolveSettled = resolve));
    let outcome!: { ok: true; value: T } | { ok: false; error: unknown };
    const entry: Entry = {
      ...task,
      started: false,
      finished: false,
      settled,
      resolveSettled,
      run: async () => {
        try {
          outcome = { ok: true, value: await fn() };
        } catch (error) {
          outcome = { ok: false, error };
        }
      },
    };
    this.#entries.push(entry);
    const previous = this.#lastDelivery;
    const delivery = Promise.all([previous, settled]).then(() => undefined);
    this.#lastDelivery = delivery;
    this.#pump();
    return delivery.then(() => {
      if (outcome.ok) return outcome.value;
      throw outcome.error;
    });
  }

  #eligible(index: number): boolean {
    const entry = this.#entries[index] as Entry;
    const earlier = this.#entries.slice(0, index).filter((other) => !other.finished);
    const sameHost = (other: Entry): boolean => entry.host === null || other.host === null || other.host === entry.host;
    if (entry.mutating) return earlier.filter(sameHost).length === 0;
    if (earlier.some((other) => other.mutating && sameHost(other))) return false;
    return this.#entries.filter((other) => other.started && !other.finished && !other.mutating).length < this.readOnlyParallel;
  }

  #pump(): void {
    for (let index = 0; index < this.#entries.length; index += 1) {
      const entry = this.#entries[index] as Entry;
      if (entry.started || !this.#eligible(index)) continue;
      entry.started = true;
      void entry.run().then(() => {
        entry.finished = true;
        entry.resolveSettled();
        const at = this.#entries.indexOf(entry);
        if (at >= 0) this.#entries.splice(at, 1);
        this.#pump();
      });
    }
  }
}

export interface ActionScheduler {
  run<T>(sessionKey: string, task: QueueTask, fn: () => Promise<T>): Promise<T>;
}

export function createActionScheduler(options: { readOnlyParallel?: number } = {}): ActionScheduler {
  const queues = new Map<string, SessionQueue>();
  const parallel = options.readOnlyParallel ?? 4;
  return {
    async run(sessionKey, task, fn) {
      let queue = queues.get(sessionKey);
      if (queue === undefined) {
        queue = new SessionQueue(parallel);
        queues.set(sessionKey, queue);
      }
      try {
        return await queue.enqueue(task, fn);
      } finally {
        if (queue.idle && queues.get(sessionKey) === queue) queues.delete(sessionKey);
      }
    },
  };
}
