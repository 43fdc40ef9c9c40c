/**
 * Which hub process integrates (docs/design.md#ledger): the one whose
 * database session holds a session-level advisory lock. Every process tries
 * for it; the others stand by. A process that dies takes its session with
 * it, and PostgreSQL releases the lock at once; a standby asks again every
 * `retryMs`, so one takes over within that.
 *
 * The lock lives on one reserved connection. A reserved connection that
 * fails may be reopened by the driver on a new session that holds nothing,
 * so the holder checks, at most every `checkMs` and before integrating,
 * that its own session still holds the lock (`pg_locks` for
 * `pg_backend_pid()`), and steps down when it does not.
 *
 * Also the channel between them: a standby whose caller needs an entry
 * integrated asks the holder (`NOTIFY leasehold_ledger, 'flush'`), and the
 * holder's batch announces each new size (`integrated:<size>`, sent inside
 * the batch's transaction, so only a committed checkpoint is announced).
 */
import type { ReservedSql, Sql } from "postgres";
import type { DatabaseHandle } from "../db";
import { isDatabaseUnavailable } from "../db/unavailable";

/** Arbitrary constant, distinct from the per-batch transaction lock (integrate.ts INTEGRATOR_LOCK_KEY). */
export const INTEGRATOR_ELECTION_KEY = 7_245_010_003;
export const LEDGER_CHANNEL = "leasehold_ledger";

export interface IntegratorElection {
  /** True while this process holds the integrator lock (trying for it when due). */
  hold(): Promise<boolean>;
  /** A standby asks the holder for a batch. */
  askForBatch(): Promise<void>;
  /** Called when the holder asks for a batch (`flush`) or announces one (`integrated`). */
  onNotice(listener: (notice: "flush" | "integrated") => void): void;
  /** Gives the lock up (a clean stop) and stops listening. */
  close(): Promise<void>;
}

/** An election on a real PostgreSQL server; null for an embedded database (one process, no one to elect among). */
export function electionFor(handle: DatabaseHandle, options: { retryMs?: number; checkMs?: number } = {}): IntegratorElection | null {
  if (handle.driver.kind !== "postgres") return null;
  return postgresElection(handle.driver.client, options);
}

function postgresElection(client: Sql, options: { retryMs?: number; checkMs?: number }): IntegratorElection {
  const retryMs = options.retryMs ?? 500;
  const checkMs = options.checkMs ?? 1_000;
  let reserved: ReservedSql | undefined;
  let held = false;
  let triedAt = 0;
  let checkedAt = 0;
  let closed = false;
  const listeners: Array<(notice: "flush" | "integrated") => void> = [];
  let listening: Promise<unknown> | undefined;

  const drop = (failure?: unknown): void => {
    held = false;
    const r = reserved;
    reserved = undefined;
    if (r !== undefined) giveUp(r, failure);
  };

  const stillHeld = async (r: ReservedSql): Promise<boolean> => {
    const [row] = await r<{ held: boolean }[]>`
      select exists (select 1 from pg_locks where locktype = 'advisory' and granted and pid = pg_backend_pid()
                     and ((classid::bigint << 32) | objid::bigint) = ${INTEGRATOR_ELECTION_KEY} and objsubid = 1) as held`;
    return row?.held === true;
  };

  const listen = (): void => {
    listening ??= Promise.resolve(
      client.listen(LEDGER_CHANNEL, (payload) => {
        const notice = payload === "flush" ? "flush" : payload.startsWith("integrated:") ? "integrated" : null;
        if (notice !== null) for (const listener of listeners) listener(notice);
      }),
    ).catch(() => {
      // Without LISTEN the integrator's poll and the standby's own polling still answer.
      listening = undefined;
    });
  };

  return {
    async hold() {
      if (closed) return false;
      listen();
      const now = Date.now();
      if (held && reserved !== undefined) {
        if (now - checkedAt < checkMs) return true;
        checkedAt = now;
        // A failure: the session is gone, and so is the lock.
        const failure = await stillHeld(reserved).then((still) => (still ? true : undefined), (error: unknown) => error ?? new Error("lost"));
        if (failure === true) return true;
        drop(failure);
      }
      if (now - triedAt < retryMs) return false;
      triedAt = now;
      let failure: unknown;
      try {
        reserved ??= await client.reserve();
        const [row] = await reserved<{ locked: boolean }[]>`select pg_try_advisory_lock(${INTEGRATOR_ELECTION_KEY}) as locked`;
        [held, checkedAt] = [row?.locked === true, Date.now()];
      } catch (error) {
        [held, failure] = [false, error];
      }
      if (!held) drop(failure);
      return held;
    },
    async askForBatch() {
      try {
        await client`select pg_notify(${LEDGER_CHANNEL}, 'flush')`;
      } catch {
        // The holder's own poll picks the entries up.
      }
    },
    onNotice(listener) {
      listeners.push(listener);
      listen();
    },
    async close() {
      closed = true;
      const r = reserved;
      if (held && r !== undefined) await r`select pg_advisory_unlock(${INTEGRATOR_ELECTION_KEY})`.catch(() => undefined);
      drop();
      const request = (await listening?.catch(() => undefined)) as { unlisten?: () => Promise<void> } | undefined;
      await request?.unlisten?.().catch(() => undefined);
    },
  };
}

/**
 * Gives a reserved connection up. Released to the pool only while its
 * session is alive: one whose session died (`isDatabaseUnavailable`) the
 * driver has already filed as closed, and releasing it would file it as
 * open again with no socket — every statement the pool gave it afterwards
 * would fail, and after a database restart the integrator's own queries
 * would keep landing there.
 */
function giveUp(reserved: ReservedSql, failure: unknown): void {
  if (failure === undefined || !isDatabaseUnavailable(failure)) reserved.release();
}
