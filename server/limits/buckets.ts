import { sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";

/**
 * Token buckets kept in the database, so every hub process on one database
 * takes from the same bucket: N replicas allow what one allows.
 *
 * One statement per take: the INSERT … ON CONFLICT DO UPDATE locks the row,
 * and PostgreSQL re-reads it after any concurrent writer commits, so two
 * processes can never both spend the last token. Elapsed time is the
 * database's clock (`clock_timestamp()`), never a process's, so replicas
 * with skewed clocks refill alike. PGlite runs the same statement.
 */
export interface BucketShape {
  ratePerMinute: number;
  /** Bucket size; default a quarter of a minute's allowance, at least 10. */
  burst?: number;
}

export type RateDecision = { ok: true } | { ok: false; retryAfterS: number };

export function bucketSize(shape: BucketShape): number {
  return shape.burst ?? Math.max(10, Math.ceil(shape.ratePerMinute / 4));
}

export async function takeToken(db: Database, key: string, shape: BucketShape): Promise<RateDecision> {
  const burst = bucketSize(shape);
  const perSecond = shape.ratePerMinute / 60;
  // `refill`: the tokens the row holds now, before this take.
  const refill = sql`least(${burst}::float8, limit_buckets.tokens + greatest(0, extract(epoch from clock_timestamp() - limit_buckets.refilled_at)::float8) * ${perSecond}::float8)`;
  const [row] = await executeRows<{ tokens: number | string; taken: boolean }>(
    db,
    sql`insert into limit_buckets (key, tokens, refilled_at, taken)
        values (${key}, ${burst - 1}::float8, clock_timestamp(), true)
        on conflict (key) do update set
          tokens = case when ${refill} >= 1 then ${refill} - 1 else ${refill} end,
          taken = ${refill} >= 1,
          refilled_at = clock_timestamp()
        returning tokens, taken`,
  );
  if (row === undefined) throw new Error("limit_buckets upsert returned no row");
  if (row.taken) return { ok: true };
  const tokens = Number(row.tokens);
  return { ok: false, retryAfterS: Math.max(1, Math.ceil((1 - tokens) / perSecond)) };
}

/** Drops buckets that have had time to refill completely (they hold no information). */
export async function pruneBuckets(db: Database, fullAfterMs: number): Promise<void> {
  await db.execute(sql`delete from limit_buckets where refilled_at < clock_timestamp() - make_interval(secs => ${fullAfterMs / 1000})`);
}
