/**
 * End-to-end latency of an auto-allowed `true` through the MCP endpoint, the
 * way an agent calls it, beside the bare sandbox launch measured in the same
 * run:
 *
 *   launch       native launch() of /bin/true (the sandbox alone)
 *   mcp ×1       MCP SDK client → tools/call run_command over Streamable HTTP
 *                → bearer/session checks → pipeline (decision, lease, signed
 *                job) → local guest → sandbox → signed evidence → sealed
 *                evidence/1 → result with receipt
 *   1 session ×16  16 calls in flight on one session
 *   16 sessions  16 clients at once, each its own SDK client and MCP session
 *                (one token). `true` is assessed read_only, so each call takes
 *                a shared observe lease and no session waits for another's;
 *                a HOST_BUSY would be retried after 20–40 ms and counted
 *                (latency is first attempt → sealed result, retries included)
 *
 * Needs root and the built web app (`node tools/build.mjs`). The hub runs on
 * embedded PGlite (the default install) unless DATABASE_URL is set.
 *   npx tsx agent-guest/bench/mcp-e2e.bench.ts [calls]
 *   DATABASE_URL=postgres://… npx tsx agent-guest/bench/mcp-e2e.bench.ts [calls]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { measureBareLaunches, measureConcurrentLaunchRate, stats as stats_ } from "./launch-baseline";
import { reportBench, type BenchFigure } from "../../tools/lib/bench-report";
import { runCli, startHub } from "../../test/support/hub-process";
import { connectClient } from "../../test/mcp/support";
import { waitFor } from "../../test/guest/support";
import { epochMs } from "../../common/trace/stage";
import { processTreeCpu } from "./process-cpu";
import { breakdown, countersPerCall, formatBreakdown, readTrace, type StageRow } from "./stage-breakdown";

const N = Number(process.argv[2] ?? 200);
const CONCURRENCY = 16;

interface Timed {
  ms: number;
  busy: number;
  actionId: string;
  sent: number;
  received: number;
  textBytes: number;
}

/**
 * One run_command "true", timed from the first attempt to its sealed result.
 * A HOST_BUSY (a mutating holder on the host) is retried like a client
 * honouring `retryable`, and counted.
 */
async function timedCall(client: Client): Promise<Timed> {
  const t = performance.now();
  let busy = 0;
  for (;;) {
    const sent = epochMs();
    const result = (await client.callTool({ name: "run_command", arguments: { host: "local", command: "true" } }, CallToolResultSchema, { timeout: 60_000 })) as CallToolResult;
    const received = epochMs();
    const s = (result.structuredContent ?? {}) as { status?: string; action_id?: string; result?: { exit?: { code?: number } | null; output?: { stdout?: string; stderr?: string } }; receipt?: unknown; code?: string };
    if (s.code === "HOST_BUSY") {
      busy += 1;
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 20)); // back off like a client honouring retryable
      continue;
    }
    if (result.isError === true || s.status !== "completed" || s.result?.exit?.code !== 0 || s.receipt == null) {
      throw new Error(`bench call did not complete with a receipt: ${JSON.stringify(s)}`);
    }
    // `true` prints nothing: any output means something else ran.
    if (s.result.output?.stdout !== "" || s.result.output.stderr !== "") {
      throw new Error(`bench call's output is not that of \`true\`: ${JSON.stringify(s.result.output ?? null)}`);
    }
    const textBytes = result.content.reduce((n, c) => n + (c.type === "text" ? Buffer.byteLength(c.text) : 0), 0);
    return { ms: performance.now() - t, busy, actionId: s.action_id ?? "", sent, received, textBytes };
  }
}

interface PgStats {
  commits: number;
  walSyncs: number;
  walWrites: number;
  walRecords: number;
}

/** Server-wide counters of a real PostgreSQL (pg_stat_database, pg_stat_wal); null on PGlite. */
async function readPgStats(sql: postgres.Sql | null): Promise<PgStats | null> {
  if (sql === null) return null;
  // Backends flush their statistics at most once a second when idle.
  await new Promise((r) => setTimeout(r, 1_500));
  const [db] = await sql<Array<{ commits: string }>>`select sum(xact_commit)::text as commits from pg_stat_database`;
  const [wal] = await sql<Array<{ wal_sync: string; wal_write: string; wal_records: string }>>`select wal_sync::text, wal_write::text, wal_records::text from pg_stat_wal`;
  return { commits: Number(db?.commits ?? 0), walSyncs: Number(wal?.wal_sync ?? 0), walWrites: Number(wal?.wal_write ?? 0), walRecords: Number(wal?.wal_records ?? 0) };
}

function perCall(before: PgStats | null, after: PgStats | null, calls: number): PgStats | null {
  if (before === null || after === null) return null;
  return {
    commits: (after.commits - before.commits) / calls,
    walSyncs: (after.walSyncs - before.walSyncs) / calls,
    walWrites: (after.walWrites - before.walWrites) / calls,
    walRecords: (after.walRecords - before.walRecords) / calls,
  };
}

interface Phase {
  name: string;
  samples: Timed[];
  rate: number;
  pg: PgStats | null;
  /** CPU ms per call: the hub process, its local guest (with its finished sandboxes), this bench's client. */
  cpu: { hub: number; guest: number; client: number };
}

/** Runs `N` calls spread over `clients` (each client `inFlight` at a time), timing each. */
function guestCpu(tree: ReturnType<typeof processTreeCpu>): number {
  return [...tree.children].filter(([name]) => name.includes("leasehold-guest")).reduce((sum, [, ms]) => sum + ms, 0);
}

async function phase(name: string, clients: Client[], inFlight: number, pgStats: postgres.Sql | null, hubPid: number): Promise<Phase> {
  const before = await readPgStats(pgStats);
  const treeBefore = processTreeCpu(hubPid);
  const clientBefore = process.cpuUsage();
  const samples: Timed[] = [];
  let next = 0;
  const t = performance.now();
  await Promise.all(
    clients.flatMap((client) =>
      Array.from({ length: inFlight }, async () => {
        while (next < N) {
          next += 1;
          samples.push(await timedCall(client));
        }
      }),
    ),
  );
  const rate = (N / (performance.now() - t)) * 1000;
  const treeAfter = processTreeCpu(hubPid);
  const client = process.cpuUsage(clientBefore);
  const cpu = { hub: (treeAfter.self - treeBefore.self) / N, guest: (guestCpu(treeAfter) - guestCpu(treeBefore)) / N, client: (client.user + client.system) / 1000 / N };
  const after = await readPgStats(pgStats);
  return { name, samples, rate, pg: perCall(before, after, N), cpu };
}

function describePhase(p: Phase, traceFile: string): { line: string; stages: StageRow[]; counters: ReturnType<typeof countersPerCall> } {
  const ms = p.samples.map((x) => x.ms);
  const busy = p.samples.reduce((n, x) => n + x.busy, 0);
  const trace = readTrace(traceFile);
  const times = new Map(p.samples.map((x) => [x.actionId, { sent: x.sent, received: x.received }]));
  const counters = countersPerCall(trace, new Set(times.keys()));
  const line = `  MCP tools/call, ${p.name.padEnd(20)} ${stats_(ms)}  ${p.rate.toFixed(1)} calls/s${busy > 0 ? `  (${busy} HOST_BUSY retries)` : ""}`;
  return { line, stages: breakdown(trace, times), counters };
}

function describeCounts(p: Phase, counters: ReturnType<typeof countersPerCall>): string {
  const parts = [];
  if (counters !== null) parts.push(`hub → database: ${counters.statements.toFixed(1)} statements (round trips), ${counters.transactions.toFixed(1)} transactions`);
  if (p.pg !== null) parts.push(`server: ${p.pg.commits.toFixed(1)} commits, ${p.pg.walSyncs.toFixed(2)} WAL fsyncs, ${p.pg.walWrites.toFixed(2)} WAL writes, ${p.pg.walRecords.toFixed(0)} WAL records`);
  parts.push(`CPU: hub ${p.cpu.hub.toFixed(1)} ms, guest + sandboxes ${p.cpu.guest.toFixed(1)} ms, bench client ${p.cpu.client.toFixed(1)} ms`);
  return `    per call: ${parts.join("; ")}`;
}

async function main(): Promise<void> {
  const bare = await measureBareLaunches(N);
  const launcherRate = await measureConcurrentLaunchRate(N, CONCURRENCY);

  const databaseUrl = process.env.DATABASE_URL;
  const traceFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "lh-stage-")), "trace.jsonl");
  // Rate limits are per token; the bench uses one token for every client.
  const hub = await startHub({ DATABASE_URL: databaseUrl, LEASEHOLD_MCP_RATE_PER_MINUTE: "1000000", LEASEHOLD_STAGE_TRACE: traceFile });
  const cli = { LEASEHOLD_DATA_DIR: hub.dataDir, LEASEHOLD_PORT: String(hub.port), DATABASE_URL: databaseUrl };
  const stats = databaseUrl === undefined ? null : postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  const hubPid = hub.process.pid ?? 0;
  const clients: Client[] = [];
  try {
    const token = await runCli(["token", "create", "--name", "bench", "--expires", "1h"], cli);
    const secret = token.stdout.split("\n").find((line) => line.startsWith("lh_"));
    if (token.code !== 0 || secret === undefined) throw new Error(`token create failed: ${token.stderr}${token.stdout}`);
    for (let i = 0; i < CONCURRENCY; i += 1) clients.push((await connectClient(hub.url, secret)).client);
    const first = clients[0]!;
    await waitFor("host local online", async () => {
      const r = (await first.callTool({ name: "hosts_list", arguments: {} })) as CallToolResult;
      const hosts = (r.structuredContent as { hosts?: Array<{ name: string; online: boolean }> } | undefined)?.hosts ?? [];
      return hosts.some((h) => h.name === "local" && h.online);
    }, 60_000, 250);

    for (const client of clients) await timedCall(client); // warm-up: every session once
    for (let i = 0; i < 5; i += 1) await timedCall(first);

    const serial = await phase("1 client", [first], 1, stats, hubPid);
    // 16 calls in flight on ONE session.
    const oneSession = await phase(`1 session ×${CONCURRENCY}`, [first], CONCURRENCY, stats, hubPid);
    // 16 clients, each its own session, sharing the host through observe leases.
    const concurrent = await phase(`${CONCURRENCY} sessions`, clients, 1, stats, hubPid);

    const db = databaseUrl === undefined ? "embedded PGlite" : "PostgreSQL";
    const launchP50 = [...bare].sort((a, b) => a - b)[Math.floor(bare.length / 2)] ?? NaN;
    console.log(`mcp e2e bench (${os.cpus().length} cores, hub on ${db}, local guest, run_command "true")`);
    console.log(`  sandbox launch alone                 ${stats_(bare)}`);
    console.log(`  sandbox launches, ${CONCURRENCY} in flight        ${launcherRate.toFixed(1)} launches/s`);
    const figures: BenchFigure[] = [
      { name: "sandbox launch alone p50", value: launchP50, unit: "ms" },
      { name: `sandbox launches, ${CONCURRENCY} in flight`, value: launcherRate, unit: "launches/s" },
    ];
    for (const p of [serial, oneSession, concurrent]) {
      const d = describePhase(p, traceFile);
      console.log(d.line);
      console.log(describeCounts(p, d.counters));
      if (p === serial || p === concurrent) {
        console.log(`    stages (each: its timestamp minus the previous stage's, same clock, ${p.name}):`);
        console.log(formatBreakdown(d.stages));
      }
      const ms = p.samples.map((x) => x.ms).sort((a, b) => a - b);
      const p50 = ms[Math.floor(ms.length / 2)] ?? NaN;
      const p99 = ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))] ?? NaN;
      const serialPhase = p === serial;
      figures.push(
        { name: `${p.name} p50`, value: p50, unit: "ms", baseline: "sandbox launch alone p50", ratio: p50 / launchP50, ...(serialPhase ? { goal: "≤ 5× the launch and ≤ 25 ms on PostgreSQL; PGlite within 1.5× of PostgreSQL" } : {}) },
        { name: `${p.name} p99`, value: p99, unit: "ms", ...(p === concurrent ? { goal: "≤ 250 ms" } : {}) },
        {
          name: `${p.name} rate`,
          value: p.rate,
          unit: "calls/s",
          ...(p === concurrent ? { baseline: `sandbox launches, ${CONCURRENCY} in flight`, ratio: p.rate / launcherRate, goal: "≥ 150 calls/s and ≥ 0.5× the launcher on PostgreSQL; ≥ 60 calls/s on PGlite" } : {}),
        },
      );
      if (d.counters !== null) figures.push({ name: `${p.name} statements per call`, value: d.counters.statements, unit: "statements" }, { name: `${p.name} transactions per call`, value: d.counters.transactions, unit: "transactions" });
      figures.push({ name: `${p.name} hub CPU per call`, value: p.cpu.hub, unit: "ms" }, { name: `${p.name} guest CPU per call`, value: p.cpu.guest, unit: "ms" });
      if (p.pg !== null) figures.push({ name: `${p.name} commits per call`, value: p.pg.commits, unit: "commits" }, { name: `${p.name} WAL fsyncs per call`, value: p.pg.walSyncs, unit: "fsyncs" });
      if (serialPhase) for (const row of d.stages) if (Number.isFinite(row.p50)) figures.push({ name: `stage ${row.stage} p50 (${p.name})`, value: row.p50, unit: "ms" });
    }
    const serialP50 = [...serial.samples.map((x) => x.ms)].sort((a, b) => a - b)[Math.floor(N / 2)] ?? NaN;
    const textBytes = serial.samples[0]?.textBytes ?? 0;
    console.log(`  ratio 1-client p50 / launch p50: ${(serialP50 / launchP50).toFixed(1)}×  (goal ≤ 5×)`);
    console.log(`  ratio ${CONCURRENCY}-session rate / launcher rate at ${CONCURRENCY} in flight: ${(concurrent.rate / launcherRate).toFixed(2)}  (goal ≥ 0.5)`);
    console.log(`  text content of one completed run_command "true": ${textBytes} bytes`);
    figures.push({ name: "text bytes of a completed run_command", value: textBytes, unit: "bytes" });
    reportBench("mcp-e2e", { database: databaseUrl === undefined ? "pglite" : "postgres", calls: N, cores: os.cpus().length }, figures);
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await stats?.end({ timeout: 1 }).catch(() => undefined);
    await hub.stop();
  }
}

await main();
