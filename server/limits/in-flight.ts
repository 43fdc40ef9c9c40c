import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";

/**
 * In-flight requests per key, counted across every hub process on one
 * database. One row per key holds the total and each process's share.
 * Taking a place is one INSERT … ON CONFLICT DO UPDATE … WHERE total < max:
 * PostgreSQL locks the row and re-checks the condition on its newest
 * version, so two processes can never both take the last place. Giving one
 * back is one UPDATE that never takes a share below zero.
 *
 * A process that dies cannot give its places back. Each process renews its
 * row in `limit_holders` every LEASE_MS / 3; any process's sweep gives back
 * the shares of holders not renewed for LEASE_MS (or never registered), so
 * a crash costs a token its places for at most that long. A process paused
 * past the lease whose shares were given back gives back nothing more.
 */
export const IN_FLIGHT_LEASE_MS = 30_000;

/** This process's name in `limit_holders` and in each row's shares. */
export const PROCESS_HOLDER = `${process.pid}-${randomUUID()}`;

const lease = sql`make_interval(secs => ${IN_FLIGHT_LEASE_MS / 1000})`;

/** Registers (or renews) this process as a holder; call before the first acquire. */
export async function renewHolder(db: Database): Promise<void> {
  await db.execute(
    sql`insert into limit_holders (holder, renewed_at) values (${PROCESS_HOLDER}, clock_timestamp())
        on conflict (holder) do update set renewed_at = excluded.renewed_at`,
  );
}

/** An idempotent release, or null when `key` already has `max` requests in flight. */
export async function acquireInFlight(db: Database, key: string, max: number): Promise<(() => Promise<void>) | null> {
  const rows = await executeRows<{ total: number }>(
    db,
    sql`insert into limit_in_flight (key, total, holders) values (${key}, 1, jsonb_build_object(${PROCESS_HOLDER}::text, 1))
        on conflict (key) do update set
          total = limit_in_flight.total + 1,
          holders = jsonb_set(limit_in_flight.holders, array[${PROCESS_HOLDER}::text], to_jsonb(coalesce((limit_in_flight.holders ->> ${PROCESS_HOLDER}::text)::int, 0) + 1))
        where limit_in_flight.total < ${max}
        returning total`,
  );
  if (rows.length === 0) return null;
  let released: Promise<void> | undefined;
  return () => {
    released ??= giveBack(db, key);
    return released;
  };
}

async function giveBack(db: Database, key: string): Promise<void> {
  await db.execute(
    sql`update limit_in_flight set
          total = total - 1,
          holders = jsonb_set(holders, array[${PROCESS_HOLDER}::text], to_jsonb((holders ->> ${PROCESS_HOLDER}::text)::int - 1))
        where key = ${key} and coalesce((holders ->> ${PROCESS_HOLDER}::text)::int, 0) > 0`,
  );
}

/** Renews this process and gives back the shares of holders that stopped renewing (they died). */
export async function renewInFlight(db: Database): Promise<void> {
  await renewHolder(db);
  const dead = await executeRows<{ key: string; holder: string }>(
    db,
    sql`select f.key, h.holder from limit_in_flight f, jsonb_object_keys(f.holders) as h(holder)
        where not exists (select 1 from limit_holders l where l.holder = h.holder and l.renewed_at > clock_timestamp() - ${lease})`,
  );
  for (const { key, holder } of dead) {
    await db.execute(
      sql`update limit_in_flight set total = greatest(0, total - coalesce((holders ->> ${holder})::int, 0)), holders = holders - ${holder}
          where key = ${key} and holders ? ${holder}`,
    );
  }
  await db.execute(sql`delete from limit_holders where renewed_at < clock_timestamp() - ${lease} - ${lease}`);
  // An acquire racing this sees either the row (and keeps it: total > 0 then) or a fresh insert.
  await db.execute(sql`delete from limit_in_flight where total = 0`);
}

/** How many requests `key` has in flight across all processes. */
export async function countInFlight(db: Database, key: string): Promise<number> {
  const [row] = await executeRows<{ total: number }>(db, sql`select total from limit_in_flight where key = ${key}`);
  return row?.total ?? 0;
}
