/**
 * Scale-out soak: `npm run soak` (`-- --minutes 60` for the hour run). Not
 * part of `npm test`: it runs for minutes and takes the machine.
 *
 * Three `leasehold start` processes behind HAProxy on a PostgreSQL server
 * of its own (tools/lib/postgres.mjs), as docs/deploy.md sets them up
 * (test/support/cluster.ts), and two phases:
 *
 * 1. clients: `--clients` (100) MCP clients at once, each on its own
 *    session, calling `health` through the balancer for `--client-seconds`
 *    (60). Prints p50/p99 latency and the error count.
 * 2. mixed: one real guest on loopback and `--workers` (8) clients calling
 *    `run_command` for `--minutes` (2): auto-allowed, held then approved by
 *    a test approver, held then denied, and refused (a host that does not
 *    exist), while a random hub process is SIGKILLed every `--kill-every`
 *    seconds (20) and started again. Checks that no acknowledged action is
 *    lost (completed, one job, one evidence row, in the ledger), none ran
 *    twice (one job per action), and that the log exported afterwards
 *    verifies from entry 0.
 *
 * Throughout, each hub process's RSS and open descriptors are sampled every
 * 5 s and printed, with each process's memory slope (MB/min, least squares).
 * Exits non-zero when a check fails. Loopback only.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { startTemporaryPostgres } from "../../../tools/lib/postgres.mjs";
import { enrolCode, startGuest, unmountLeftovers, writeCeiling, type RunningGuest } from "../../guest/support";
import { startCluster, type Cluster } from "../../support/cluster";
import { runCli, startHub, tempDir } from "../../support/hub-process";
import { mcpSession, mcpTool, outcome, structured, type McpAnswer } from "../../support/mcp-http";

const { values: args } = parseArgs({
  options: {
    minutes: { type: "string", default: "2" },
    clients: { type: "string", default: "100" },
    "client-seconds": { type: "string", default: "60" },
    workers: { type: "string", default: "8" },
    "kill-every": { type: "string", default: "20" },
    phase: { type: "string", default: "both" },
  },
});
const minutes = Number(args.minutes);
const clients = Number(args.clients);
const clientSeconds = Number(args["client-seconds"]);
const workers = Number(args.workers);
const killEvery = Number(args["kill-every"]);
const phase = args.phase;
if (![minutes, clients, clientSeconds, workers, killEvery].every((n) => Number.isFinite(n) && n > 0) || !["both", "clients", "mixed"].includes(phase ?? "")) {
  throw new Error("usage: npm run soak -- [--minutes 2] [--clients 100] [--client-seconds 60] [--workers 8] [--kill-every 20] [--phase both|clients|mixed]");
}

const log = (line: string) => console.log(`[soak] ${line}`);
const failures: string[] = [];

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

// --- process sampling ----------------------------------------------------------------------------
interface Sample {
  t: number;
  rssMb: number;
  fds: number;
}
const samples = new Map<number, { slot: number; points: Sample[] }>();
const began = Date.now();

function sample(cluster: Cluster): void {
  for (const [slot, hub] of cluster.hubs.entries()) {
    const pid = hub.process.pid;
    if (pid === undefined || hub.process.exitCode !== null || hub.process.signalCode !== null) continue;
    try {
      const rss = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      const fds = fs.readdirSync(`/proc/${pid}/fd`).length;
      const series = samples.get(pid) ?? { slot, points: [] };
      series.points.push({ t: (Date.now() - began) / 60_000, rssMb: Number(rss) / 1024, fds });
      samples.set(pid, series);
    } catch {
      // the process ended between the check and the read
    }
  }
}

/** Least-squares slope of RSS over time, MB per minute. */
function slope(points: Sample[]): number {
  const n = points.length;
  const mt = points.reduce((s, p) => s + p.t, 0) / n;
  const mr = points.reduce((s, p) => s + p.rssMb, 0) / n;
  const num = points.reduce((s, p) => s + (p.t - mt) * (p.rssMb - mr), 0);
  const den = points.reduce((s, p) => s + (p.t - mt) ** 2, 0);
  return den === 0 ? NaN : num / den;
}

function printSamples(): void {
  for (const [pid, { slot, points }] of samples) {
    const first = points[0]!;
    const last = points[points.length - 1]!;
    const maxFds = Math.max(...points.map((p) => p.fds));
    const series = points.map((p) => `${p.rssMb.toFixed(0)}/${p.fds}`).join(" ");
    log(`hub${slot} pid ${pid}: ${points.length} samples over ${((last.t - first.t) * 60).toFixed(0)} s, RSS ${first.rssMb.toFixed(0)} → ${last.rssMb.toFixed(0)} MB (slope ${points.length >= 3 ? slope(points).toFixed(2) : "n/a"} MB/min), fds ${first.fds} → ${last.fds} (max ${maxFds})`);
    log(`  RSS MB/fds every 5 s: ${series}`);
  }
}

// --- set-up ---------------------------------------------------------------------------------------
const server = await startTemporaryPostgres();
process.env.TEST_POSTGRES_URL = server.url;
let cluster: Cluster | undefined;
let guest: RunningGuest | undefined;
const guestDir = tempDir("lh-soak-guest-");
let sampler: ReturnType<typeof setInterval> | undefined;
try {
  cluster = await startCluster({ replicas: 3, trustProxy: true, env: { LEASEHOLD_MCP_RATE_PER_MINUTE: "1000000", LEASEHOLD_MCP_APPROVAL_WAIT_S: "15", LEASEHOLD_MCP_SESSIONS_PER_TOKEN: "1000", LEASEHOLD_MCP_MAX_CONCURRENT_REQUESTS: "1000" } });
  const c = cluster;
  const cliEnv = () => c.hubEnv({ LEASEHOLD_DATA_DIR: c.hubs[0]!.dataDir, LEASEHOLD_PORT: String(c.hubs[0]!.port) });
  const made = await runCli(["token", "create", "--name", "soak", "--expires", "1d"], cliEnv());
  const token = made.stdout.split("\n").find((line) => line.startsWith("lh_"));
  if (made.code !== 0 || token === undefined) throw new Error(`token create failed: ${made.stderr}${made.stdout}`);
  sample(c);
  sampler = setInterval(() => sample(c), 5_000);

  // --- phase 1: many clients -----------------------------------------------------------------------
  if (phase !== "mixed") {
    log(`phase clients: ${clients} MCP clients calling health through the balancer for ${clientSeconds} s`);
    const sessions = await Promise.all(Array.from({ length: clients }, () => mcpSession(c.url, token)));
    const latencies: number[] = [];
    const outcomes = new Map<string, number>();
    const until = Date.now() + clientSeconds * 1000;
    await Promise.all(
      sessions.map(async (session) => {
        while (Date.now() < until) {
          const answer = await mcpTool(c.url, token, session, "health", {}, 30_000);
          latencies.push(answer.ms);
          const what = outcome(answer);
          outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    const errors = [...outcomes].filter(([k]) => k !== "ok").reduce((s, [, v]) => s + v, 0);
    log(`phase clients: ${latencies.length} calls in ${clientSeconds} s (${(latencies.length / clientSeconds).toFixed(0)}/s), p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${latencies[latencies.length - 1]?.toFixed(0)} ms, errors ${errors} ${JSON.stringify(Object.fromEntries(outcomes))}`);
    if (errors > 0) failures.push(`phase clients: ${errors} calls failed`);
  }

  // --- phase 2: mixed load with SIGKILLs ---------------------------------------------------------------
  if (phase !== "clients") {
    const hostName = "soak";
    guest = startGuest({ hub: c.url, stateDir: path.join(guestDir, "state"), ceiling: writeCeiling(guestDir, path.join(guestDir, "ws")), code: await enrolCode(cliEnv(), hostName), insecureHttp: true });
    const sql = postgres(c.databaseUrl, { max: 2, onnotice: () => undefined });
    try {
      for (const until = Date.now() + 60_000; ; ) {
        const [row] = await sql<{ n: number }[]>`select count(*)::int as n from hosts where name = ${hostName} and last_seen_at is not null`;
        if ((row?.n ?? 0) > 0) break;
        if (Date.now() > until) throw new Error(`the guest did not come online:\n${guest.output()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const [admin] = await sql<{ id: string; username: string }[]>`insert into admin_users (username, password_hash) values (${`soak-approver-${process.pid}`}, 'soak') returning id, username`;
      const { openPostgres } = await import("../../../server/db");
      const { approve, deny } = await import("../../../server/approvals");
      const handle = await openPostgres(c.databaseUrl, { max: 2 });
      const decided = new Set<string>();
      let approving = true;
      // The test approver: approves what says approve-, denies what says deny-.
      const approver = (async () => {
        while (approving) {
          const pending = await sql<{ id: string; prepared: string }[]>`select a.id, x.prepared::text as prepared from approvals a join actions x on x.id = a.action_id where a.state = 'pending'`.catch(() => []);
          for (const p of pending) {
            if (decided.has(p.id)) continue;
            decided.add(p.id);
            const decision = p.prepared.includes("deny-") ? deny(handle.db, p.id, admin!, "soak: denied by the test approver") : approve(handle.db, p.id, admin!);
            await decision.catch((error: unknown) => {
              decided.delete(p.id);
              log(`approver: ${String(error).split("\n")[0]}`);
            });
          }
          await new Promise((r) => setTimeout(r, 200));
        }
      })();

      const kinds = ["auto", "approve", "deny", "refused"] as const;
      const tally = new Map<string, number>();
      const acknowledged: Array<{ id: string; kind: string }> = [];
      const notRunIds: string[] = [];
      const latencies: number[] = [];
      let seq = 0;
      let kills = 0;
      const until = Date.now() + minutes * 60_000;
      const killer = (async () => {
        while (Date.now() + killEvery * 1000 < until) {
          await new Promise((r) => setTimeout(r, killEvery * 1000));
          const slot = Math.floor(Math.random() * c.hubs.length);
          const victim = c.hubs[slot]!;
          victim.process.kill("SIGKILL");
          await victim.stop();
          kills += 1;
          log(`SIGKILL hub${slot} (pid ${victim.process.pid}) at ${((Date.now() - began) / 1000).toFixed(0)} s`);
          c.hubs[slot] = await startHub(c.hubEnv({ LEASEHOLD_PORT: String(victim.port), LEASEHOLD_DATA_DIR: victim.dataDir }));
        }
      })();
      await Promise.all(
        Array.from({ length: workers }, async () => {
          let session = await mcpSession(c.url, token);
          while (Date.now() < until) {
            const n = seq++;
            const kind = kinds[n % kinds.length]!;
            const marker = `${kind}-${n}`;
            const call: [string, Record<string, unknown>] =
              kind === "auto"
                ? ["run_command", { host: hostName, command: `echo ${marker}` }]
                : kind === "refused"
                  ? ["run_command", { host: "no-such-host", command: `echo ${marker}` }]
                  : ["run_command", { host: hostName, command: `echo ${marker} >> soak.log` }];
            const answer: McpAnswer = await mcpTool(c.url, token, session, call[0], call[1], 60_000);
            latencies.push(answer.ms);
            let what = outcome(answer);
            if (what === "HOST_UNAVAILABLE") {
              // Two answers share this code: a job no guest claimed (retryable: nothing ran, checked below to have no
              // evidence) and a job whose host stopped answering while it held it (not retryable: unknown, a failure here).
              const body = structured<{ retryable?: boolean; action_id?: string }>(answer);
              const notRun = body.retryable === true;
              what = notRun ? "HOST_UNAVAILABLE nothing ran" : "HOST_UNAVAILABLE unknown";
              if (notRun && body.action_id !== undefined) notRunIds.push(body.action_id);
            }
            tally.set(`${kind} ${what}`, (tally.get(`${kind} ${what}`) ?? 0) + 1);
            if (what === "ok") {
              const body = structured<{ action_id?: string; status?: string }>(answer);
              if (body.status === "completed" && body.action_id !== undefined) acknowledged.push({ id: body.action_id, kind });
            } else if (answer.status === 0 || answer.status === 404) {
              // The process holding the session was killed, or the session is gone: a client opens a new one.
              session = await mcpSession(c.url, token).catch(() => session);
            }
          }
        }),
      );
      await killer;
      approving = false;
      await approver;
      latencies.sort((a, b) => a - b);
      log(`phase mixed: ${latencies.length} calls in ${minutes} min with ${kills} SIGKILLs; p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms`);
      log(`phase mixed: outcomes ${JSON.stringify(Object.fromEntries([...tally].sort()))}`);
      const unexpected = [...tally].filter(([k]) => {
        const space = k.indexOf(" ");
        const kind = k.slice(0, space);
        const what = k.slice(space + 1);
        // A write waits for the host while another holds it: HOST_BUSY (retryable) is the hub's answer, not a failure.
        // A job no guest claimed in time (the guest's poll was on a killed process, or starved) is not run and says so: retryable.
        const expected = kind === "refused" ? ["NOT_FOUND"] : kind === "deny" ? ["APPROVAL_DENIED", "HOST_BUSY"] : kind === "approve" ? ["ok", "HOST_BUSY", "HOST_UNAVAILABLE nothing ran"] : ["ok", "HOST_UNAVAILABLE nothing ran"];
        // A call whose process was killed under it has no answer (the client's socket closed) or the balancer's 502/503.
        return !expected.includes(what) && !what.startsWith("no answer") && what !== "http 503" && what !== "http 502";
      });
      if (unexpected.length > 0) failures.push(`phase mixed: unexpected outcomes ${JSON.stringify(Object.fromEntries(unexpected))}`);

      // Acknowledged actions: completed, one job, one evidence row, in the ledger.
      const ids = acknowledged.map((a) => a.id);
      const rows = await sql<{ id: string; state: string; jobs: number; evidence: number }[]>`
        select a.id, a.state, (select count(*)::int from jobs j where j.action_id = a.id) as jobs, (select count(*)::int from evidence e where e.action_id = a.id) as evidence
        from actions a where a.id = any(${ids}::uuid[])`;
      const inLedger = new Set((await sql<{ id: string }[]>`select distinct convert_from(body, 'UTF8')::jsonb ->> 'action_id' as id from ledger_entries`).map((r) => r.id));
      const lost = ids.filter((id) => !rows.some((r) => r.id === id && r.state === "completed") || !inLedger.has(id));
      const [twice] = await sql<{ n: number }[]>`select count(*)::int as n from (select action_id from jobs group by action_id having count(*) > 1) d`;
      const badRows = rows.filter((r) => r.jobs !== 1 || r.evidence !== 1);
      log(`phase mixed: ${acknowledged.length} acknowledged actions (${["auto", "approve"].map((k) => `${k} ${acknowledged.filter((a) => a.kind === k).length}`).join(", ")}); lost ${lost.length}; actions with more than one job ${twice?.n ?? "?"}; acknowledged without exactly one job and one evidence row ${badRows.length}`);
      if (lost.length > 0) failures.push(`${lost.length} acknowledged actions lost: ${lost.slice(0, 5).join(", ")}`);
      if ((twice?.n ?? 1) !== 0) failures.push(`${twice?.n} actions ran more than once`);
      if (badRows.length > 0) failures.push(`${badRows.length} acknowledged actions without exactly one job and one evidence row`);

      // "Nothing ran" is a promise: no evidence and no job that a guest claimed.
      if (notRunIds.length > 0) {
        const ran = await sql<{ id: string }[]>`
          select a.id from actions a where a.id = any(${notRunIds}::uuid[])
            and (exists (select 1 from evidence e where e.action_id = a.id) or exists (select 1 from jobs j where j.action_id = a.id and j.claimed_at is not null))`;
        log(`phase mixed: ${notRunIds.length} answered HOST_UNAVAILABLE "nothing ran"; of those with evidence or a claimed job: ${ran.length}`);
        if (ran.length > 0) failures.push(`${ran.length} actions answered "nothing ran" had run: ${ran.slice(0, 5).map((r) => r.id).join(", ")}`);
      }

      // The ledger verifies from entry 0.
      await handle.close();
      for (const stopAt = Date.now() + 30_000; Date.now() < stopAt; ) {
        const [row] = await sql<{ n: number }[]>`select count(*)::int as n from ledger_entries where leaf_index is null`;
        if (row?.n === 0) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      const out = path.join(tempDir("lh-soak-export-"), "log.export");
      const exported = await runCli(["export", "--out", out], cliEnv());
      const key = (await runCli(["ledger", "key"], cliEnv())).stdout.trim();
      const verified = await runCli(["verify", out, "--key", key]);
      const [entries] = await sql<{ n: number }[]>`select count(*)::int as n from ledger_entries`;
      log(`ledger: ${entries?.n} entries, export ${exported.code === 0 ? "ok" : "FAILED"}, verify from entry 0 ${verified.code === 0 ? "ok" : "FAILED"}${verified.code === 0 ? "" : `: ${verified.stdout}${verified.stderr}`}`);
      if (exported.code !== 0 || verified.code !== 0) failures.push("the ledger did not export or verify");
    } finally {
      await sql.end({ timeout: 5 });
    }
  }
} finally {
  if (sampler !== undefined) clearInterval(sampler);
  printSamples();
  await guest?.kill();
  await cluster?.stop();
  unmountLeftovers([guestDir]);
  server.stop();
}
if (failures.length > 0) {
  for (const f of failures) log(`FAILED: ${f}`);
  process.exit(1);
}
log("passed");
