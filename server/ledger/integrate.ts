import { sql } from "drizzle-orm";
import { executeRows, type Database, type DatabaseHandle } from "../db";
import { electionFor, LEDGER_CHANNEL, type ElectionOptions, type IntegratorElection } from "./election";
import { signCheckpoint } from "../trust/ledger/checkpoint";
import { hashLeaf } from "../trust/ledger/hash";
import type { LogKey } from "./log-key";
import { ledgerCounters } from "./metrics";
import { recentBatches, type CommittedBatch, type RecentReceipt } from "./recent-batches";
import { databaseNodeReader, toBytes } from "./node-store";
import { extendTree, frontierFromStore, type Frontier } from "../trust/ledger/tree";

/**
 * Arbitrary constant: one batch at a time per database, across hub processes.
 * Which process runs the batches is elected separately (election.ts); this
 * lock only makes a batch exclusive should two processes both believe they
 * were elected (one's session lost without its knowing yet).
 */
export const INTEGRATOR_LOCK_KEY = 7_245_010_002;
export { INTEGRATOR_ELECTION_KEY } from "./election";
export const DEFAULT_BATCH_SIZE = 1000;

export type IntegrateOutcome =
  | { kind: "integrated"; count: number; size: number; note: string; batch: CommittedBatch }
  | { kind: "idle"; size: number }
  | { kind: "busy" }
  | { kind: "key_mismatch"; pinned: string };

/**
 * Integrates one batch of waiting entries: assigns the next contiguous leaf
 * indices, stores every perfect subtree the batch completes, and signs a
 * checkpoint over the new size — all in ONE transaction, so a crash at any
 * point leaves either the whole batch integrated or none of it.
 *
 * Exclusivity comes from a transaction-scoped advisory lock: a second
 * integrator (another hub process) finds it taken and reports `busy`.
 * `cache` keeps the compact range between batches; it is checked against
 * the stored size and rebuilt from the node store whenever they differ.
 */
export async function integrateOnce(
  db: Database,
  key: LogKey,
  options: { batchSize?: number; cache?: { frontier?: Frontier }; announce?: boolean } = {},
): Promise<IntegrateOutcome> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  return db.transaction(async (tx) => {
    const q = tx as unknown as Database;
    const [lock] = await executeRows<{ locked: boolean }>(q, sql`select pg_try_advisory_xact_lock(${INTEGRATOR_LOCK_KEY}) as locked`);
    if (!lock?.locked) return { kind: "busy" };

    // One round trip for the pinned key and the signed size (read after the lock, so no other integrator moves it).
    const [head] = await executeRows<{ verifier_key: string | null; size: string | number | null }>(
      q,
      sql`select (select verifier_key from ledger_log where id = 1) as verifier_key, (select max(tree_size) from ledger_checkpoints) as size`,
    );
    if (head?.verifier_key == null) {
      await tx.execute(sql`insert into ledger_log (id, origin, verifier_key) values (1, ${key.origin}, ${key.verifier})`);
    } else if (head.verifier_key !== key.verifier) {
      return { kind: "key_mismatch", pinned: head.verifier_key };
    }
    const size = Number(head?.size ?? 0);
    const pending = await executeRows<{ id: string | number | bigint; body: Uint8Array }>(
      q,
      sql`select id, body from ledger_entries where leaf_index is null order by id limit ${batchSize}`,
    );
    if (pending.length === 0) return { kind: "idle", size };

    let frontier = options.cache?.frontier;
    if (!frontier || frontier.size !== size) frontier = await frontierFromStore(size, databaseNodeReader(q));
    const leafHashes = pending.map((row) => hashLeaf(toBytes(row.body)));
    const extended = extendTree(frontier, leafHashes);

    const entryIds = pending.map((row) => BigInt(String(row.id)));
    const assignments = sql.join(
      entryIds.map((id, i) => sql`(${id}::bigint, ${BigInt(size + i)}::bigint)`),
      sql`, `,
    );
    const nodeRows = (chunk: readonly { level: number; index: number; hash: Uint8Array }[]) =>
      sql.join(
        chunk.map((n) => sql`(${n.level}::smallint, ${BigInt(n.index)}::bigint, ${Buffer.from(n.hash)}::bytea)`),
        sql`, `,
      );
    // Node rows beyond the last 2000 go first in chunks (bounded statement size); the leaf indices,
    // the last chunk and the checkpoint go in one statement (data-modifying CTEs all run): one
    // round trip where a batch used to pay three.
    const lastChunk = Math.max(0, extended.newNodes.length - 2000);
    for (let start = 0; start < lastChunk; start += 2000) {
      await tx.execute(sql`insert into ledger_nodes (level, idx, hash) values ${nodeRows(extended.newNodes.slice(start, Math.min(start + 2000, lastChunk)))}`);
    }
    const note = signCheckpoint({ origin: key.origin, size: extended.size, root: extended.root, extensions: [] }, key.signer);
    await tx.execute(
      sql`with leaves as (update ledger_entries as e set leaf_index = v.leaf_index from (values ${assignments}) as v(id, leaf_index) where e.id = v.id),
               nodes as (insert into ledger_nodes (level, idx, hash) values ${nodeRows(extended.newNodes.slice(lastChunk))})
          insert into ledger_checkpoints (tree_size, root_hash, note) values (${BigInt(extended.size)}, ${Buffer.from(extended.root)}::bytea, ${note})`,
    );
    // Standby processes waiting for this batch hear of it at commit (and not at all on rollback).
    if (options.announce === true) await tx.execute(sql`select pg_notify(${LEDGER_CHANNEL}, ${`integrated:${extended.size}`})`);
    if (options.cache) options.cache.frontier = extended.frontier;
    const batch: CommittedBatch = { before: frontier, entryIds, newNodes: extended.newNodes, size: extended.size, note };
    return { kind: "integrated", count: pending.length, size: extended.size, note, batch };
  });
}

/**
 * `work`, or a failure naming `what` once `ms` have passed. The integrator's
 * loop awaits nothing without one: a statement the pool never answers (a
 * connection left wedged by a database restart) must fail that round, not
 * stall integration — and the hub's shutdown, which waits for the loop —
 * for good. A batch abandoned this way still ends on its own: it commits or
 * rolls back as one transaction, and the next batch reads the stored size.
 */
async function bounded<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** True when some entry waits for a leaf index (one read of the pending index, no transaction). */
async function entriesWaiting(db: Database): Promise<boolean> {
  const [row] = await executeRows<{ waiting: boolean }>(db, sql`select exists (select 1 from ledger_entries where leaf_index is null) as waiting`);
  return row?.waiting === true;
}

export interface IntegratorStatus {
  state: "running" | "standby" | "key_mismatch" | "stopped" | "failing";
  size: number;
  lastCheckpointAt: string | null;
  detail: string | null;
}

export interface RunningIntegrator {
  wake(): void;
  /** Resolves once everything appended so far is integrated (or rejects after `timeoutMs`). */
  flush(timeoutMs?: number): Promise<number>;
  /**
   * A receipt for an entry one of this integrator's batches integrated, from
   * what it remembers of them (recent-batches.ts): no reads when the entry is
   * recent; null when it does not know the entry (read the database then).
   */
  receipt(entryId: bigint): Promise<RecentReceipt | null>;
  status(): IntegratorStatus;
  stop(): Promise<void>;
}

/** True when an entry at or below `target` still waits (a standby's question: is what its caller appended integrated?). */
async function waitingUpTo(db: Database, target: bigint): Promise<{ waiting: boolean; size: number }> {
  const [row] = await executeRows<{ waiting: boolean; size: string | number | null }>(
    db,
    sql`select exists (select 1 from ledger_entries where leaf_index is null and id <= ${target}) as waiting, (select max(tree_size) from ledger_checkpoints) as size`,
  );
  return { waiting: row?.waiting === true, size: Number(row?.size ?? 0) };
}

/** The newest entry waiting for a leaf index, or null when none waits. */
async function lastWaiting(db: Database): Promise<bigint | null> {
  const [row] = await executeRows<{ id: string | number | bigint | null }>(db, sql`select max(id) as id from ledger_entries where leaf_index is null`);
  return row?.id === null || row?.id === undefined ? null : BigInt(String(row.id));
}

/**
 * The background integrator: runs batches back to back while entries wait,
 * then sleeps until a `flush` wakes it or `pollMs` passes. Target: a
 * checkpoint covering an append within 1 s.
 *
 * Appends do not wake it. An append usually sits in a transaction
 * that has not committed yet, and a batch per append made every action pay
 * two or three integration transactions of its own. Whoever needs an entry
 * integrated now — a caller waiting for its receipt — asks with `flush`, and
 * everyone who asked while no batch was running shares the next one (group
 * commit). Each batch reads the entries committed when it starts, so a flush
 * is answered by the first batch that STARTS after it was asked and takes
 * fewer than `batchSize` entries (what was left then is all integrated).
 *
 * Several hub processes on one PostgreSQL database elect one integrator
 * (`electOn`, election.ts). The others stand by: their flushes ask the
 * elected one for a batch (NOTIFY) and are answered once every entry that
 * waited when they asked has a leaf index, so a call served by any process
 * shares the one integrator's group commit — three processes write about as
 * many checkpoints per call as one. A waiting standby re-reads when the
 * integrator announces a batch (`integrated`), and at least every
 * `standbyPollMs` (1 s) in case a notice was missed. A standby tries for the
 * lock every half second and takes over when the integrator's session is
 * gone — also after a database restart, when every session is gone and the
 * first process back takes the lock.
 *
 * Every step has a deadline (`stepMs`, 15 s): a round that does not finish
 * in time counts as a failure, and the loop goes on.
 */
// eslint-disable-next-line max-lines-per-function -- the integrator's loop, its election and its wake-ups share the loop's state
export function startIntegrator(
  db: Database,
  key: LogKey,
  options: {
    pollMs?: number;
    standbyPollMs?: number;
    stepMs?: number;
    batchSize?: number;
    onError?: (error: unknown) => void;
    electOn?: DatabaseHandle;
    election?: ElectionOptions;
  } = {},
): RunningIntegrator {
  const pollMs = options.pollMs ?? 200;
  const standbyPollMs = options.standbyPollMs ?? 1_000;
  const stepMs = options.stepMs ?? 15_000;
  const counters = ledgerCounters();
  const cache: { frontier?: Frontier } = {};
  const recent = recentBatches();
  const status: IntegratorStatus = { state: "running", size: 0, lastCheckpointAt: null, detail: null };
  const election: IntegratorElection | null = options.electOn === undefined ? null : electionFor(options.electOn, options.election);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wakeSleep: (() => void) | undefined;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const idleWaiters: Array<() => void> = [];
  let lastWasIdle = false;
  // A standby asked for a batch since the last one started.
  let asked = false;
  // Batches the integrator has announced: a standby that saw this move while it read does not sleep.
  let announced = 0;
  election?.onNotice((notice) => {
    if (notice === "flush") asked = true;
    else announced += 1;
    wakeSleep?.();
  });

  const sleep = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      wakeSleep = resolve;
      timer = setTimeout(resolve, ms);
    }).then(() => {
      wakeSleep = undefined;
    });

  /** A standby's turn: answers the waiters once the elected integrator has integrated what waited when they asked. */
  const standBy = async (covered: Array<() => void>): Promise<void> => {
    Object.assign(status, { state: "standby", detail: "another hub process is integrating" });
    cache.frontier = undefined;
    if (covered.length === 0) return sleep(pollMs);
    const target = await bounded("reading the newest waiting entry", stepMs, lastWaiting(db));
    if (target !== null) {
      await election?.askForBatch();
      while (!stopped) {
        const seen = announced;
        const check = await bounded("reading whether the entries are integrated", stepMs, waitingUpTo(db, target));
        status.size = check.size;
        if (!check.waiting) break;
        // The integrator may have died: try for the lock (hold() paces itself).
        if ((await election?.hold()) === true) {
          idleWaiters.unshift(...covered);
          return;
        }
        // Woken by the integrator's next batch; the poll covers a notice that never came.
        if (announced === seen) await sleep(standbyPollMs);
      }
    }
    for (const resolve of covered) resolve();
  };

  const loop = (async () => {
    while (!stopped) {
      // The waiters this batch answers: asked before it started.
      const covered = idleWaiters.splice(0);
      let outcome: IntegrateOutcome | undefined;
      try {
        if (election !== null && !(await election.hold())) {
          await standBy(covered);
          continue;
        }
        const askedNow = asked;
        asked = false;
        // An idle poll with nobody waiting asks one cheap question (the pending index) instead of
        // running an empty batch transaction of five statements, five times a second.
        const quiet: boolean =
          covered.length === 0 && !askedNow && status.state === "running" && lastWasIdle && !(await bounded("reading whether entries wait", stepMs, entriesWaiting(db)));
        outcome = quiet
          ? { kind: "idle", size: status.size }
          : await bounded("a ledger batch", stepMs, integrateOnce(db, key, { batchSize, cache, announce: election !== null }));
      } catch (error) {
        counters.integrationFailures += 1;
        counters.lastIntegrationError = error instanceof Error ? error.message.split("\n")[0] ?? "" : String(error);
        status.state = "failing";
        status.detail = counters.lastIntegrationError;
        cache.frontier = undefined;
        options.onError?.(error);
      }
      lastWasIdle = outcome?.kind === "idle";
      if (outcome?.kind === "integrated") {
        counters.batchesIntegrated += 1;
        recent.remember(outcome.batch);
        Object.assign(status, { state: "running", size: outcome.size, lastCheckpointAt: new Date().toISOString(), detail: null });
        if (outcome.count >= batchSize) {
          // A full batch: more may wait. Its waiters wait for the batch that drains them.
          idleWaiters.unshift(...covered);
          continue;
        }
        for (const resolve of covered) resolve();
        if (idleWaiters.length > 0 || asked) continue;
      } else if (outcome?.kind === "idle") {
        Object.assign(status, { state: "running", size: outcome.size, detail: null });
        for (const resolve of covered) resolve();
        if (idleWaiters.length > 0 || asked) continue;
      } else {
        idleWaiters.unshift(...covered);
      }
      if (outcome?.kind === "busy") {
        Object.assign(status, { state: "standby", detail: "another hub process is integrating" });
      } else if (outcome?.kind === "key_mismatch") {
        Object.assign(status, { state: "key_mismatch", detail: `the log is pinned to ${outcome.pinned}; this process holds another key` });
      }
      await sleep(pollMs);
    }
  })();

  return {
    wake: () => wakeSleep?.(),
    async flush(timeoutMs = 10_000) {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`ledger not integrated within ${timeoutMs} ms (${status.state}: ${status.detail ?? ""})`)), timeoutMs);
        idleWaiters.push(() => {
          clearTimeout(t);
          resolve();
        });
        wakeSleep?.();
      });
      return status.size;
    },
    receipt: (entryId) => recent.receipt(entryId, databaseNodeReader(db)),
    status: () => ({ ...status }),
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      wakeSleep?.();
      await loop;
      await election?.close();
      status.state = "stopped";
    },
  };
}
