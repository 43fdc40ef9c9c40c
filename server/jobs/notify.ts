/**
 * Cross-process wake-ups for host work: `NOTIFY leasehold_hosts, '<topic>'`
 * where a topic is `job:<host id>` (a job was queued for that host) or
 * `action:<action id>` (an action finished). Each hub process LISTENs once
 * per database handle and re-emits what it hears in-process (wake.ts) — a
 * payload carries the announcing process's tag, and a process ignores its own — so a
 * guest long-polling one replica hears about a job dispatched by another,
 * and a caller waiting on one replica hears its result stored by another.
 * Payloads carry only ids; waiters re-read the database, and poll anyway.
 * One more kind carries two counts: `progress:<action id>:<stdout bytes>:<stderr bytes>`,
 * a running job's output so far, for the callers waiting on that action
 * (advisory and never stored: a lost one is followed by the next heartbeat's).
 */
import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import type { Database, DatabaseHandle } from "../db";
import { emitProgress, wake, type OutputProgress } from "./wake";

export const HOSTS_CHANNEL = "leasehold_hosts";
const listening = new WeakMap<Database, Promise<void>>();

const ORIGIN_KEY = Symbol.for("leasehold.hosts.notify-origin");

/**
 * This process's tag on what it announces (`<topic>@<origin>`): it wakes its
 * own waiters directly, so the copy of its NOTIFY its LISTEN hears back is
 * dropped — the echo used to wake a second guest long-poll into a claim
 * that found nothing. Kept on globalThis: one per process, not per bundle.
 */
function processOrigin(): string {
  const g = globalThis as unknown as Record<symbol, string | undefined>;
  return (g[ORIGIN_KEY] ??= randomBytes(8).toString("hex"));
}

/** Starts relaying NOTIFY leasehold_hosts into in-process wake-ups (once per handle). */
export function listenForHostWakeups(handle: DatabaseHandle): Promise<void> {
  let started = listening.get(handle.db);
  if (started === undefined) {
    const deliver = (payload: string): void => {
      const topic = /^((?:job|action):[0-9a-f-]{36})(?:@([0-9a-f]{16}))?$/.exec(payload);
      if (topic !== null) {
        if (topic[2] !== processOrigin()) wake(topic[1]!);
        return;
      }
      const progress = /^progress:([0-9a-f-]{36}):([0-9]{1,15}):([0-9]{1,15})$/.exec(payload);
      if (progress !== null) emitProgress(progress[1]!, { stdout_bytes: Number(progress[2]), stderr_bytes: Number(progress[3]) });
    };
    started = (async () => {
      try {
        if (handle.driver.kind === "postgres") await handle.driver.client.listen(HOSTS_CHANNEL, deliver);
        else await handle.driver.client.listen(HOSTS_CHANNEL, deliver);
      } catch {
        // Polling still finds the work; LISTEN only makes it prompt.
      }
    })();
    listening.set(handle.db, started);
  }
  return started;
}

/**
 * True for an embedded PGlite database: only the process holding its data
 * directory lock (server/db/lock.ts) can open it, so there is no other hub
 * process to tell, and a NOTIFY would only be this process hearing itself.
 */
function singleProcess(db: Database): boolean {
  const client = (db as unknown as { $client?: unknown }).$client;
  return client instanceof PGlite;
}

/** Wakes `topic` here and, through NOTIFY, in every other hub process. */
export async function announce(db: Database, topic: string): Promise<void> {
  wake(topic);
  if (singleProcess(db)) return;
  try {
    await db.execute(sql`select pg_notify(${HOSTS_CHANNEL}, ${`${topic}@${processOrigin()}`})`);
  } catch {
    // Committed already; other processes' polling picks it up.
  }
}

/**
 * The cross-process half of `announce`, sent inside the caller's transaction.
 * PostgreSQL delivers a NOTIFY when its transaction commits and drops it on
 * rollback, so other processes hear only what committed. Sent after the
 * commit instead, a NOTIFY is a transaction of its own, and since NOTIFY
 * takes a transaction id, its commit record is one more WAL flush (two per
 * call: one per queued job and one per stored result). Unlike
 * `announce`, a failure here fails the caller's transaction; that only
 * happens when the notification queue is full (listeners stuck for a long
 * time), and the refused write is retried by whoever sent it. The caller
 * wakes this process's own waiters with `wake(topic)` after the commit.
 */
export async function notifyOthersAtCommit(db: Database, tx: Database, topic: string): Promise<void> {
  // `db` is the handle `tx` was opened on: only it tells an embedded database apart.
  if (singleProcess(db)) return;
  await tx.execute(sql`select pg_notify(${HOSTS_CHANNEL}, ${`${topic}@${processOrigin()}`})`);
}

/** Tells every hub process's waiters on `actionId` how much output its job has written so far. */
export async function announceProgress(db: Database, actionId: string, progress: OutputProgress): Promise<void> {
  emitProgress(actionId, progress);
  if (singleProcess(db)) return;
  try {
    await db.execute(sql`select pg_notify(${HOSTS_CHANNEL}, ${`progress:${actionId}:${progress.stdout_bytes}:${progress.stderr_bytes}`})`);
  } catch {
    // Advisory: the next heartbeat carries newer totals.
  }
}
