/**
 * "This host's guest was heard from just now" — `hosts.last_seen_at`, which
 * the job sweep reads to tell an offline host from an idle or busy one (its
 * windows are at least 6 s) and the hosts list shows. Written at most once
 * per `everyMs` per host and hub process: writing it on every signed guest request
 * would cost a WAL commit per request that nothing could tell apart from one
 * a second.
 */
import { eq, sql } from "drizzle-orm";
import type { Database } from "../db";
import { hosts } from "../db/schema";

export const LAST_SEEN_EVERY_MS = 1_000;

const KEY = Symbol.for("leasehold.hosts.last-seen");

function touchedAt(): Map<string, number> {
  const g = globalThis as unknown as Record<symbol, Map<string, number> | undefined>;
  return (g[KEY] ??= new Map());
}

export async function touchHostLastSeen(db: Database, hostId: string, everyMs = LAST_SEEN_EVERY_MS): Promise<void> {
  const now = Date.now();
  const touched = touchedAt();
  if (now - (touched.get(hostId) ?? 0) < everyMs) return;
  touched.set(hostId, now);
  await db.update(hosts).set({ lastSeenAt: sql`now()` }).where(eq(hosts.id, hostId));
}
