/**
 * The dashboard's charts, aggregated in SQL (the same statements on PGlite
 * and PostgreSQL; dashboard.test.ts runs them on both):
 *
 * - actions per hour by decision, the last 24 hours (hour buckets in UTC,
 *   the current hour last; hours without actions are zeros, not gaps);
 * - approval response time: a held action's approval from created to
 *   decided by a person (approved or denied; expiries are not responses);
 * - end-to-end latency: an action from created to its result stored (the
 *   job's completion), split by whether a person was in the path.
 *
 * Durations come as a histogram over fixed bounds plus count, p50, p95 and
 * max. Only rows that exist are counted: a window with no data is empty,
 * never a made-up figure.
 */
import { sql, type SQL } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import { DECISION_SQL, type ActionDecision } from "../action-records/list";

export const HOUR_MS = 3_600_000;
export const WINDOW_HOURS = 24;
export const DECISIONS: readonly ActionDecision[] = ["auto_allow", "observe_scope", "grant", "approved", "denied", "expired", "pending", "none"];

/** Upper bounds (ms) of the duration buckets; the last bucket is "at least the last bound". */
export const DURATION_BOUNDS_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 300_000] as const;

export interface HourBucket {
  /** Start of the hour, ISO UTC. */
  hour: string;
  counts: Record<ActionDecision, number>;
  total: number;
}

export interface DurationStats {
  count: number;
  p50_ms: number | null;
  p95_ms: number | null;
  max_ms: number | null;
  /** One count per bucket, DURATION_BOUNDS_MS.length + 1 buckets. */
  buckets: number[];
}

export interface DashboardCharts {
  since: string;
  until: string;
  actions_per_hour: HourBucket[];
  approval_response: DurationStats;
  latency: { without_person: DurationStats; with_person: DurationStats };
}

/** Human labels for the duration buckets ("<1 s", "1–2 s", …, "≥5 min"). */
export function bucketLabels(): string[] {
  const say = (ms: number) => (ms >= 60_000 ? `${ms / 60_000} min` : `${ms / 1000} s`);
  const labels = [`<${say(DURATION_BOUNDS_MS[0])}`];
  for (let i = 1; i < DURATION_BOUNDS_MS.length; i++) labels.push(`${say(DURATION_BOUNDS_MS[i - 1]!)}–${say(DURATION_BOUNDS_MS[i]!)}`);
  labels.push(`≥${say(DURATION_BOUNDS_MS[DURATION_BOUNDS_MS.length - 1]!)}`);
  return labels;
}

const BOUNDS = sql.raw(`array[${DURATION_BOUNDS_MS.map((b) => `${b}::float8`).join(", ")}]`);
/** A timestamp parameter both drivers accept (postgres.js refuses a Date in raw SQL). */
const ts = (d: Date): SQL => sql`${d.toISOString()}::timestamptz`;
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** Stats over `ms` (a SQL expression) of the rows `from` selects. */
async function durationStats(db: Database, ms: SQL, from: SQL): Promise<DurationStats> {
  const [stats] = await executeRows<{ n: number | string; p50: unknown; p95: unknown; max: unknown }>(
    db,
    sql`select count(*)::int as n, percentile_cont(0.5) within group (order by d.ms) as p50,
          percentile_cont(0.95) within group (order by d.ms) as p95, max(d.ms) as max
        from (select (${ms})::float8 as ms ${from}) d`,
  );
  const rows = await executeRows<{ bucket: number | string; n: number | string }>(
    db,
    sql`select width_bucket(d.ms, ${BOUNDS}) as bucket, count(*)::int as n from (select (${ms})::float8 as ms ${from}) d group by 1`,
  );
  const buckets = new Array<number>(DURATION_BOUNDS_MS.length + 1).fill(0);
  for (const r of rows) buckets[Number(r.bucket)] = Number(r.n);
  const count = Number(stats?.n ?? 0);
  const round = (v: unknown) => (num(v) === null ? null : Math.round(num(v)!));
  return { count, p50_ms: count === 0 ? null : round(stats?.p50), p95_ms: count === 0 ? null : round(stats?.p95), max_ms: count === 0 ? null : round(stats?.max), buckets };
}

export async function dashboardCharts(db: Database, now = Date.now()): Promise<DashboardCharts> {
  const firstHour = Math.floor(now / HOUR_MS) - (WINDOW_HOURS - 1);
  const since = new Date(firstHour * HOUR_MS);
  const until = new Date(now);

  const perHour = await executeRows<{ hour: number | string; decision: ActionDecision; n: number | string }>(
    db,
    sql`select floor(extract(epoch from a.created_at) / 3600)::bigint as hour, ${DECISION_SQL} as decision, count(*)::int as n
        from actions a left join approvals ap on ap.action_id = a.id
        where a.created_at >= ${ts(since)} and a.created_at <= ${ts(until)} group by 1, 2`,
  );
  const hours: HourBucket[] = Array.from({ length: WINDOW_HOURS }, (_, i) => ({
    hour: new Date((firstHour + i) * HOUR_MS).toISOString(),
    counts: Object.fromEntries(DECISIONS.map((d) => [d, 0])) as Record<ActionDecision, number>,
    total: 0,
  }));
  for (const r of perHour) {
    const bucket = hours[Number(r.hour) - firstHour];
    if (bucket === undefined) continue;
    bucket.counts[r.decision] = (bucket.counts[r.decision] ?? 0) + Number(r.n);
    bucket.total += Number(r.n);
  }

  const approval_response = await durationStats(
    db,
    sql`extract(epoch from (ap.decided_at - ap.created_at)) * 1000`,
    sql`from approvals ap where ap.state in ('approved', 'denied') and ap.decided_at is not null and ap.decided_at >= ${ts(since)} and ap.decided_at <= ${ts(until)}`,
  );
  const latencyFrom = (person: boolean) =>
    sql`from actions a join jobs j on j.action_id = a.id
        where j.completed_at is not null and j.state in ('completed', 'failed') and j.completed_at >= ${ts(since)} and j.completed_at <= ${ts(until)}
          and ${person ? sql`a.result->>'decision' = 'hold'` : sql`coalesce(a.result->>'decision', '') <> 'hold'`}`;
  const latencyMs = sql`extract(epoch from (j.completed_at - a.created_at)) * 1000`;
  return {
    since: since.toISOString(),
    until: until.toISOString(),
    actions_per_hour: hours,
    approval_response,
    latency: { without_person: await durationStats(db, latencyMs, latencyFrom(false)), with_person: await durationStats(db, latencyMs, latencyFrom(true)) },
  };
}
