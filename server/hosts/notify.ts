/**
 * Cross-process wake-ups for host work: `NOTIFY leasehold_hosts, '<topic>'`
 * where a topic is `job:<host id>` (a job was queued for that host) or
 * `action:<action id>` (an action finished). Each hub process LISTENs once
 * per database handle and re-emits what it hears in-process (wake.ts), so a
 * guest long-polling one replica hears about a job dispatched by another,
 * and a caller waiting on one replica hears its result stored by another.
 * Payloads carry only ids; waiters re-read the database, and poll anyway.
 */
import { sql } from "drizzle-orm";
import type { Database, DatabaseHandle } from "../db";
import { wake } from "./wake";

export const HOSTS_CHANNEL = "leasehold_hosts";
const listening = new WeakMap<Database, Promise<void>>();

/** Starts relaying NOTIFY leasehold_hosts into in-process wake-ups (once per handle). */
export function listenForHostWakeups(handle: DatabaseHandle): Promise<void> {
  let started = listening.get(handle.db);
  if (started === undefined) {
    const deliver = (payload: string): void => {
      if (/^(job|action):[0-9a-f-]{36}$/.test(payload)) wake(payload);
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

/** Wakes `topic` here and, through NOTIFY, in every other hub process. */
export async function announce(db: Database, topic: string): Promise<void> {
  wake(topic);
  try {
    await db.execute(sql`select pg_notify(${HOSTS_CHANNEL}, ${topic})`);
  } catch {
    // Committed already; other processes' polling picks it up.
  }
}
