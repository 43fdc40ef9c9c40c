import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";

/**
 * In-flight requests per key, counted across every hub process on one
 * database. Each request holds a row; the count and the insert run under a
 * transaction-scoped advisory lock on the key, so two processes cannot both
 * take the last place (each statement after the lock reads what the other
 * committed). A process renews its rows every LEASE_MS / 3; the rows of a
 * process that died stop counting once not renewed for LEASE_MS, so a crash
 * costs a token its places for at most that long.
 */
export const IN_FLIGHT_LEASE_MS = 30_000;

/** This process's name in `limit_in_flight.holder`. */
export const PROCESS_HOLDER = `${process.pid}-${randomUUID()}`;

/** An idempotent release, or null when `key` already has `max` requests in flight. */
export async function acquireInFlight(db: Database, key: string, max: number): Promise<(() => Promise<void>) | null> {
  const id = randomUUID();
  const got = await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`leasehold-in-flight:${key}`}))`);
    const rows = await executeRows<{ id: string }>(
      tx as unknown as Database,
      sql`insert into limit_in_flight (id, key, holder, renewed_at)
          select ${id}::uuid, ${key}, ${PROCESS_HOLDER}, clock_timestamp()
          where (select count(*) from limit_in_flight
                 where key = ${key} and renewed_at > clock_timestamp() - make_interval(secs => ${IN_FLIGHT_LEASE_MS / 1000})) < ${max}
          returning id`,
    );
    return rows.length === 1;
  });
  if (!got) return null;
  let released: Promise<void> | undefined;
  return () => {
    released ??= db.execute(sql`delete from limit_in_flight where id = ${id}::uuid`).then(() => undefined);
    return released;
  };
}

/** Keeps this process's rows counting and drops rows nobody renewed (their process died). */
export async function renewInFlight(db: Database): Promise<void> {
  await db.execute(sql`update limit_in_flight set renewed_at = clock_timestamp() where holder = ${PROCESS_HOLDER}`);
  await db.execute(sql`delete from limit_in_flight where renewed_at < clock_timestamp() - make_interval(secs => ${IN_FLIGHT_LEASE_MS / 1000})`);
}

/** How many requests `key` has in flight across all processes. */
export async function countInFlight(db: Database, key: string): Promise<number> {
  const [row] = await executeRows<{ n: number | string }>(
    db,
    sql`select count(*) as n from limit_in_flight where key = ${key} and renewed_at > clock_timestamp() - make_interval(secs => ${IN_FLIGHT_LEASE_MS / 1000})`,
  );
  return Number(row?.n ?? 0);
}
