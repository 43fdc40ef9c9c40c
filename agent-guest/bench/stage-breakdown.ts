/**
 * Reads the stage trace (common/trace/stage.ts) a traced hub and its guest
 * wrote, joins it with the bench client's own send/receive timestamps, and
 * summarises each stage's delta from the one before it (p50/p99 over calls).
 * Every figure is a difference of two timestamps taken on the real path.
 */
import fs from "node:fs";

/** The order a completed auto-allowed call passes its stages in. */
export const STAGES = [
  "client.sent",
  "hub.start",
  "hub.assessed",
  "hub.decided",
  "hub.leased",
  "hub.dispatched",
  "hub.claimed",
  "guest.received",
  "hub.acked",
  "guest.launch",
  "guest.exited",
  "guest.ran",
  "hub.result_received",
  "hub.sealed",
  "hub.woken",
  "hub.receipt",
  "client.received",
] as const;

/** What each delta (this stage minus the previous one) covers, for the printed table. */
export const STAGE_MEANING: Record<string, string> = {
  "hub.start": "client → MCP transport, auth, session → pipeline entry",
  "hub.assessed": "scope, resolve, validate, readiness, prepare, assess",
  "hub.decided": "decide: action row + decision/1 committed",
  "hub.leased": "lease taken (lease/1)",
  "hub.dispatched": "job signed, dispatch/1 + job row committed, NOTIFY",
  "hub.claimed": "queued → offered to the guest's long-poll",
  "guest.received": "offer → guest (HTTP)",
  "hub.acked": "guest's acknowledgement → hub (job claimed)",
  "guest.launch": "ack answer → guest; verify job, ceiling, policy",
  "guest.exited": "sandbox launch → exit (the launch itself)",
  "guest.ran": "guest: scrub, evidence, sign",
  "hub.result_received": "output + result POST → hub",
  "hub.sealed": "verify evidence; evidence/1 + completion committed",
  "hub.woken": "waiting caller woken, reads its row",
  "hub.receipt": "output read, ledger integrated, inclusion proof",
  "client.received": "MCP result → client",
};

export interface TraceLine {
  id: string;
  stage: string;
  t: number;
  pid: number;
  counters?: { statements: number; transactions: number };
}

export function readTrace(file: string): TraceLine[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as TraceLine);
}

export interface StageRow {
  stage: string;
  meaning: string;
  p50: number;
  p99: number;
  n: number;
  /** Median hub statements sent since the previous hub stage (hub stages only). */
  statements: number | null;
}

function quantile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
}

/**
 * Per-stage deltas over the calls named in `clientTimes` (action id →
 * client send/receive). A stage recorded twice for one call (a retried
 * delivery) counts at its first time.
 */
export function breakdown(trace: TraceLine[], clientTimes: Map<string, { sent: number; received: number }>): StageRow[] {
  const byId = new Map<string, Map<string, number>>();
  const countersById = new Map<string, Map<string, number>>();
  for (const line of trace) {
    if (!clientTimes.has(line.id)) continue;
    const stages = byId.get(line.id) ?? new Map<string, number>();
    if (!stages.has(line.stage)) stages.set(line.stage, line.t);
    byId.set(line.id, stages);
    const counted = countersById.get(line.id) ?? new Map<string, number>();
    if (line.counters !== undefined && !counted.has(line.stage)) counted.set(line.stage, line.counters.statements);
    countersById.set(line.id, counted);
  }
  const statementDeltas = new Map<string, number[]>();
  for (const counted of countersById.values()) {
    let previous: number | undefined;
    for (const stage of STAGES) {
      const here = counted.get(stage);
      if (here === undefined) continue;
      if (previous !== undefined) {
        const list = statementDeltas.get(stage) ?? [];
        list.push(here - previous);
        statementDeltas.set(stage, list);
      }
      previous = here;
    }
  }
  const deltas = new Map<string, number[]>();
  for (const [id, times] of clientTimes) {
    const stages = byId.get(id) ?? new Map<string, number>();
    stages.set("client.sent", times.sent);
    stages.set("client.received", times.received);
    for (let i = 1; i < STAGES.length; i += 1) {
      const here = stages.get(STAGES[i]!);
      const before = stages.get(STAGES[i - 1]!);
      if (here === undefined || before === undefined) continue;
      const list = deltas.get(STAGES[i]!) ?? [];
      list.push(here - before);
      deltas.set(STAGES[i]!, list);
    }
  }
  return STAGES.slice(1).map((stage) => {
    const values = [...(deltas.get(stage) ?? [])].sort((a, b) => a - b);
    const counted = [...(statementDeltas.get(stage) ?? [])].sort((a, b) => a - b);
    return { stage, meaning: STAGE_MEANING[stage] ?? "", p50: quantile(values, 0.5), p99: quantile(values, 0.99), n: values.length, statements: counted.length === 0 ? null : quantile(counted, 0.5) };
  });
}

/** The hub process's database counters per call over `ids` (from its hub.receipt lines; one hub process). */
export function countersPerCall(trace: TraceLine[], ids: Set<string>): { statements: number; transactions: number } | null {
  const snapshots = trace.filter((l) => l.stage === "hub.receipt" && l.counters !== undefined && ids.has(l.id)).sort((a, b) => a.t - b.t);
  const first = snapshots[0];
  const last = snapshots[snapshots.length - 1];
  if (first === undefined || last === undefined || snapshots.length < 2) return null;
  const calls = snapshots.length - 1;
  return {
    statements: (last.counters!.statements - first.counters!.statements) / calls,
    transactions: (last.counters!.transactions - first.counters!.transactions) / calls,
  };
}

export function formatBreakdown(rows: StageRow[]): string {
  const width = Math.max(...rows.map((r) => r.stage.length));
  const total50 = rows.reduce((sum, r) => sum + (Number.isFinite(r.p50) ? r.p50 : 0), 0);
  const lines = rows.map(
    (r) => `    ${r.stage.padEnd(width)}  p50 ${r.p50.toFixed(2).padStart(7)} ms  p99 ${r.p99.toFixed(2).padStart(7)} ms  ${r.statements === null ? "        " : `${String(r.statements).padStart(3)} stmt`}  ${r.meaning}`,
  );
  lines.push(`    ${"sum of p50s".padEnd(width)}      ${total50.toFixed(2).padStart(7)} ms`);
  return lines.join("\n");
}
