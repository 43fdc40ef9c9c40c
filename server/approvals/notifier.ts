/**
 * Waking callers who wait for an approval decision.
 *
 * A decision is announced twice: to waiters in this process (an in-memory
 * emitter registered per open database) and to every other hub process
 * through PostgreSQL `NOTIFY leasehold_approval, '<approval id>'`. Each
 * process LISTENs once per database handle (postgres-js keeps a dedicated
 * connection for it; PGlite delivers to its own single connection).
 * Notifications carry only the approval id; a woken waiter re-reads the row,
 * so a forged or duplicate notification can do nothing but cause a read.
 * Waiters also poll at a slow interval, so a notification lost with a
 * dropped connection delays a wake-up but never loses it.
 */
import { EventEmitter } from "node:events";
import { sql } from "drizzle-orm";
import type { Database, DatabaseHandle } from "../db";

export const APPROVAL_CHANNEL = "leasehold_approval";

export interface ApprovalNotifier {
  /** Calls `fn` when `approvalId` may have changed. Returns the unsubscribe function. */
  subscribe(approvalId: string, fn: () => void): () => void;
  /** Resolves once LISTEN is active (or has failed and polling is the only path). */
  ready(): Promise<void>;
}

const local = new WeakMap<Database, EventEmitter>();
const notifiers = new WeakMap<Database, ApprovalNotifier>();

function emitterFor(db: Database): EventEmitter {
  let emitter = local.get(db);
  if (emitter === undefined) {
    emitter = new EventEmitter();
    emitter.setMaxListeners(0);
    local.set(db, emitter);
  }
  return emitter;
}

/** The notifier of one open database handle (created on first use). */
export function approvalNotifier(handle: DatabaseHandle): ApprovalNotifier {
  const existing = notifiers.get(handle.db);
  if (existing !== undefined) return existing;
  const emitter = emitterFor(handle.db);
  const deliver = (payload: string): void => {
    emitter.emit(payload);
  };
  let listening: Promise<void> | undefined;
  const startListening = (): Promise<void> => {
    listening ??= (async () => {
      try {
        if (handle.driver.kind === "postgres") await handle.driver.client.listen(APPROVAL_CHANNEL, deliver);
        else await handle.driver.client.listen(APPROVAL_CHANNEL, deliver);
      } catch {
        // Polling still finds the decision; LISTEN only makes it prompt.
      }
    })();
    return listening;
  };
  const notifier: ApprovalNotifier = {
    subscribe(approvalId, fn) {
      void startListening();
      emitter.on(approvalId, fn);
      return () => emitter.off(approvalId, fn);
    },
    ready: startListening,
  };
  notifiers.set(handle.db, notifier);
  return notifier;
}

/** Announces a decision on `approvalId` to this process and, via NOTIFY, to every other. */
export async function announceDecision(db: Database, approvalId: string): Promise<void> {
  emitterFor(db).emit(approvalId);
  try {
    await db.execute(sql`select pg_notify(${APPROVAL_CHANNEL}, ${approvalId})`);
  } catch {
    // The decision is committed; other processes' polling picks it up.
  }
}
