import { sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";

/**
 * Failure counts within a fixed window, kept in the database so every hub
 * process counts into the same row (sign-in throttling: server/admins/throttle.ts).
 * A count is one atomic upsert; a window that has run out starts again from
 * 1 in the same statement, so concurrent failures from several processes
 * are all counted. `now` is the caller's clock: windows are minutes long,
 * so replicas' clocks seconds apart change nothing, and tests can move time.
 */

/** Seconds until `key` may try again, or undefined while it has failures left. */
export async function windowWaitSeconds(db: Database, key: string, allowed: number, now: Date): Promise<number | undefined> {
  const [row] = await executeRows<{ count: number; expires_at: Date | string }>(
    db,
    sql`select count, expires_at from limit_windows where key = ${key} and expires_at > ${now.toISOString()}::timestamptz`,
  );
  if (row === undefined || row.count < allowed) return undefined;
  return Math.max(1, Math.ceil((new Date(row.expires_at).getTime() - now.getTime()) / 1000));
}

/** Counts one failure in a window of `windowMs` starting at the first failure; returns the count within the window. */
export async function windowFail(db: Database, key: string, windowMs: number, now: Date): Promise<number> {
  const at = now.toISOString();
  const end = new Date(now.getTime() + windowMs).toISOString();
  const [row] = await executeRows<{ count: number }>(
    db,
    sql`insert into limit_windows (key, count, window_start, expires_at)
        values (${key}, 1, ${at}::timestamptz, ${end}::timestamptz)
        on conflict (key) do update set
          count = case when limit_windows.expires_at > ${at}::timestamptz then limit_windows.count + 1 else 1 end,
          window_start = case when limit_windows.expires_at > ${at}::timestamptz then limit_windows.window_start else ${at}::timestamptz end,
          expires_at = case when limit_windows.expires_at > ${at}::timestamptz then limit_windows.expires_at else ${end}::timestamptz end
        returning count`,
  );
  if (row === undefined) throw new Error("limit_windows upsert returned no row");
  return row.count;
}

export async function windowClear(db: Database, key: string): Promise<void> {
  await db.execute(sql`delete from limit_windows where key = ${key}`);
}

/** Records that `key` happened at `now`, remembered for `keepMs`. */
export async function markNow(db: Database, key: string, keepMs: number, now: Date): Promise<void> {
  const at = now.toISOString();
  const end = new Date(now.getTime() + keepMs).toISOString();
  await db.execute(
    sql`insert into limit_windows (key, count, window_start, expires_at)
        values (${key}, 1, ${at}::timestamptz, ${end}::timestamptz)
        on conflict (key) do update set window_start = excluded.window_start, expires_at = excluded.expires_at`,
  );
}

export async function isMarked(db: Database, key: string, now: Date): Promise<boolean> {
  const rows = await executeRows<{ one: number }>(db, sql`select 1 as one from limit_windows where key = ${key} and expires_at > ${now.toISOString()}::timestamptz`);
  return rows.length > 0;
}

/** Deletes windows and marks that have run out (by the database's clock). */
export async function pruneWindows(db: Database): Promise<void> {
  await db.execute(sql`delete from limit_windows where expires_at <= clock_timestamp() - interval '1 minute'`);
}
