/**
 * Which hub process integrates (docs/design.md#integrator-election): the one
 * whose database session holds a session-level advisory lock. Every process
 * tries for it; the others stand by. A process that dies takes its session
 * with it, and PostgreSQL releases the lock at once; a standby asks again
 * every `retryMs`, so one takes over within that.
 *
 * The lock lives on a session of this process's own: one connection outside
 * the pool (`driver.session`, server/db/client.ts), never one lent by it.
 * The process therefore knows the moment that session ends — its connection
 * closing (a server restart, a terminated backend, a network error) marks
 * the lock lost at once — and the next try opens a new session and asks
 * again. Every statement on it has a deadline (`statementMs`): one that does
 * not answer in time ends the session, so a session that hangs is given up
 * as well, and the integrator's loop never waits here longer than that. The
 * holder also checks, at most every `checkMs`, that its session still holds
 * the lock (`pg_locks` for `pg_backend_pid()`).
 *
 * The same session is the channel between processes: it LISTENs on
 * `leasehold_ledger` (again on every new session). A standby whose caller
 * needs an entry integrated asks the holder (`NOTIFY leasehold_ledger,
 * 'flush'`), and the holder's batch announces each new size
 * (`integrated:<size>`, sent inside the batch's transaction, so only a
 * committed checkpoint is announced). A notice can be missed — one sent
 * while the session was being replaced — so listeners poll as well, and
 * each new session's first LISTEN is passed on as an `integrated` notice:
 * whatever was announced before it, a waiting standby reads again.
 */
import type { Sql } from "postgres";
import type { DatabaseHandle, SessionEvents } from "../db";

/** Arbitrary constant, distinct from the per-batch transaction lock (integrate.ts INTEGRATOR_LOCK_KEY). */
export const INTEGRATOR_ELECTION_KEY = 7_245_010_003;
export const LEDGER_CHANNEL = "leasehold_ledger";

export type LedgerNotice = "flush" | "integrated";

export interface IntegratorElection {
  /** True while this process holds the integrator lock (trying for it when due). Never waits longer than two statement deadlines. */
  hold(): Promise<boolean>;
  /** A standby asks the holder for a batch. */
  askForBatch(): Promise<void>;
  /** Called when a standby asks for a batch (`flush`) or the holder announces one (`integrated`). */
  onNotice(listener: (notice: LedgerNotice) => void): void;
  /** Gives the lock up (a clean stop: the session ends) and stops listening. */
  close(): Promise<void>;
}

export interface ElectionOptions {
  /** How often a standby tries for the lock (ms). */
  retryMs?: number;
  /** How often the holder checks that its session still holds the lock (ms). */
  checkMs?: number;
  /** The deadline of each statement on the election session (ms); past it the session is ended. */
  statementMs?: number;
}

/** An election on a real PostgreSQL server; null for an embedded database (one process, no one to elect among). */
export function electionFor(handle: DatabaseHandle, options: ElectionOptions = {}): IntegratorElection | null {
  if (handle.driver.kind !== "postgres") return null;
  return postgresElection(handle.driver.session, options);
}

function parseNotice(payload: string): LedgerNotice | null {
  if (payload === "flush") return "flush";
  return payload.startsWith("integrated:") ? "integrated" : null;
}

// eslint-disable-next-line max-lines-per-function -- one session's state and the few operations on it
function postgresElection(openSession: (events: SessionEvents) => Sql, options: ElectionOptions): IntegratorElection {
  const retryMs = options.retryMs ?? 500;
  const checkMs = options.checkMs ?? 1_000;
  const statementMs = options.statementMs ?? 3_000;
  let session: Sql | undefined;
  // Moves on whenever a session ends: a lock or LISTEN won on an older session is gone with it.
  let epoch = 0;
  let held = false;
  let listening = false;
  let triedAt = Number.NEGATIVE_INFINITY;
  let checkedAt = 0;
  let closed = false;
  const listeners: Array<(notice: LedgerNotice) => void> = [];

  const lost = (): void => {
    epoch += 1;
    held = false;
    listening = false;
  };
  /** A new session. Only the current one's close counts: one ended earlier may report its close after a newer one won the lock. */
  const open = (): Sql => {
    const events: SessionEvents = {
      onclose: () => {
        if (session === opened) lost();
      },
      onnotify(channel, payload) {
        const notice = channel === LEDGER_CHANNEL ? parseNotice(payload) : null;
        if (notice !== null) for (const listener of listeners) listener(notice);
      },
    };
    const opened = openSession(events);
    return opened;
  };

  /** Ends the session, and with it its lock and LISTEN; the next statement opens another. */
  const endSession = (): void => {
    const ending = session;
    session = undefined;
    lost();
    void ending?.end({ timeout: 0 }).catch(() => undefined);
  };

  /** One statement on the session. A failure or a missed deadline ends the session: whatever it held is not trusted. */
  const statement = async <T>(what: string, run: (s: Sql) => Promise<T>): Promise<T> => {
    if (closed) throw new Error("the integrator election is closed");
    const s = (session ??= open());
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer from the election session within ${statementMs} ms`)), statementMs);
    });
    try {
      return await Promise.race([run(s), deadline]);
    } catch (error) {
      if (session === s) endSession();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };

  const stillHeld = (s: Sql): Promise<{ held: boolean }[]> => s<{ held: boolean }[]>`
    select exists (select 1 from pg_locks where locktype = 'advisory' and granted and pid = pg_backend_pid()
                   and ((classid::bigint << 32) | objid::bigint) = ${INTEGRATOR_ELECTION_KEY} and objsubid = 1) as held`;

  /** The holder's periodic check. False when the lock is gone (the session was ended then, so a new one starts clean). */
  const checkHeld = async (): Promise<boolean> => {
    const began = epoch;
    const [row] = await statement("the integrator lock check", stillHeld).catch(() => [undefined]);
    if (row?.held === true && began === epoch) return true;
    if (session !== undefined && began === epoch) endSession();
    return false;
  };

  const tryForLock = async (): Promise<boolean> => {
    const began = epoch;
    try {
      if (!listening) {
        await statement("LISTEN", (s) => s`listen ${s(LEDGER_CHANNEL)}`);
        listening = began === epoch;
        // A batch announced before this LISTEN went unheard: listeners re-read as if it had been.
        if (listening) for (const listener of listeners) listener("integrated");
      }
      const [row] = await statement("the integrator lock", (s) => s<{ locked: boolean }[]>`select pg_try_advisory_lock(${INTEGRATOR_ELECTION_KEY}) as locked`);
      // Won on a session that has ended since (the epoch moved) is not held.
      held = row?.locked === true && began === epoch;
      checkedAt = Date.now();
    } catch {
      held = false;
    }
    return held;
  };

  return {
    async hold() {
      if (closed) return false;
      const now = Date.now();
      if (held) {
        if (now - checkedAt < checkMs) return true;
        checkedAt = now;
        if (await checkHeld()) return true;
      }
      if (now - triedAt < retryMs) return false;
      triedAt = now;
      return tryForLock();
    },
    async askForBatch() {
      // Without an answer the holder's own poll picks the entries up.
      await statement("the flush request", (s) => s`select pg_notify(${LEDGER_CHANNEL}, 'flush')`).catch(() => undefined);
    },
    onNotice(listener) {
      listeners.push(listener);
    },
    async close() {
      closed = true;
      const ending = session;
      session = undefined;
      lost();
      // Ending the session gives the lock and the LISTEN up (the driver destroys it after a second at most).
      await ending?.end({ timeout: 1 }).catch(() => undefined);
    },
  };
}
