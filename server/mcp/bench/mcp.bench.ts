/**
 * MCP latency benchmark: `npx tsx server/mcp/bench/mcp.bench.ts [seconds-per-step=5]`.
 *
 * Prints `tools/call health` p50/p99 and requests/s at 1, 16 and 64
 * concurrent clients (each its own SDK Client + session) against a real hub
 * (PGlite, or DATABASE_URL), next to two baselines measured in the same run
 * with the same concurrency over fetch: the hub's own bare route
 * `GET /api/health`, which returns the same health JSON (same function,
 * same database reads) without MCP and, like `/api/mcp`, is answered by the
 * hub's server without Next.js (server/hub/direct-routes.ts), and a plain node:http server
 * in this process returning that JSON canned.
 * Also prints the hub process's own CPU time per request (from /proc; the
 * bench's clients share this machine's cores, and an SDK client costs more
 * CPU than fetch, so the server's share is printed apart — PostgreSQL's own
 * processes are not in it), the clients' CPU per request (this process: the
 * SDK's Client against fetch, a floor under the latency ratio that no hub
 * change moves) and the hub's memory per idle session (RSS delta
 * over 200 idle sessions). Figures are printed, never asserted; every call
 * and baseline request is checked (an error result, a non-2xx status or other
 * bytes ends the bench non-zero: a failure is not a sample).
 */
import fs from "node:fs";
import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { benchHub, rssKiB } from "./hub";
import { reportBench, type BenchFigure } from "../../../tools/lib/bench-report";

const stepSeconds = Number(process.argv[2] ?? 5);
const LEVELS = [1, 16, 64];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function measure(workers: number, call: (worker: number) => Promise<void>): Promise<{ p50: number; p99: number; rps: number; n: number }> {
  const latencies: number[] = [];
  const until = performance.now() + stepSeconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (performance.now() < until) {
        const t = performance.now();
        await call(w);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), rps: latencies.length / elapsed, n: latencies.length };
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the parenthesised command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * `measure` plus, over the same interval, the hub's CPU ms per request and
 * this process's (the clients': the SDK's Client for MCP, fetch for the route).
 */
async function measureWithCpu(pid: number, workers: number, call: (worker: number) => Promise<void>) {
  const cpuBefore = cpuMs(pid);
  const clientBefore = process.cpuUsage();
  const result = await measure(workers, call);
  const client = process.cpuUsage(clientBefore);
  return { ...result, cpuPerRequest: (cpuMs(pid) - cpuBefore) / result.n, clientCpuPerRequest: (client.user + client.system) / 1000 / result.n };
}

async function openClient(url: string, token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(transport);
  return client;
}

// Entry-point script: the database comes from the caller's environment, like the hub's.
const { hub, token } = await benchHub(process.env.DATABASE_URL, { LEASEHOLD_LOCAL_GUEST: "0", LEASEHOLD_MCP_RATE_PER_MINUTE: "10000000", LEASEHOLD_MCP_MAX_CONCURRENT_REQUESTS: "1000", LEASEHOLD_MCP_SESSIONS_PER_TOKEN: "1000" });
const clients: Client[] = [];
const figures: BenchFigure[] = [];
const database = process.env.DATABASE_URL ? "postgres" : "pglite";
try {
  const first = await openClient(hub.url, token);
  clients.push(first);
  const sample = await first.callTool({ name: "health", arguments: {} });
  // The baseline answers with the same bytes a tools/call health result carries (as JSON-RPC over plain JSON).
  const baselineBody = JSON.stringify({ jsonrpc: "2.0", id: 1, result: sample });
  const baseline = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(baselineBody);
    });
  });
  await new Promise<void>((resolve) => baseline.listen(0, "127.0.0.1", resolve));
  const baselineUrl = `http://127.0.0.1:${(baseline.address() as { port: number }).port}/`;
  const callBody = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "health", arguments: {} } });

  while (clients.length < Math.max(...LEVELS)) clients.push(await openClient(hub.url, token));
  // Warm both paths alike (JIT, prepared statements, pools) so the first step measured does not pay for it alone.
  for (let i = 0; i < 300; i++) {
    await first.callTool({ name: "health", arguments: {} });
    await (await fetch(`${hub.url}/api/health`)).arrayBuffer();
  }
  console.log(`tools/call health vs the bare route GET /api/health and a canned node:http JSON (${stepSeconds} s per step, ${hub.url}, database ${database})`);
  console.log("clients | MCP p50 ms | MCP p99 ms | MCP req/s | route p50 ms | route p99 ms | route req/s | route/MCP | canned p50 ms | canned req/s | hub CPU ms/req MCP | route | MCP/route | client CPU ms/req SDK | fetch");
  for (const level of LEVELS) {
    const hubPid = hub.process.pid!;
    const mcp = await measureWithCpu(hubPid, level, async (w) => {
      const r = await clients[w]!.callTool({ name: "health", arguments: {} });
      if (r.isError === true) throw new Error(`MCP health failed: ${JSON.stringify(r).slice(0, 300)}`);
    });
    const route = await measureWithCpu(hubPid, level, async () => {
      const res = await fetch(`${hub.url}/api/health`);
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`GET /api/health answered ${res.status}`);
    });
    const base = await measure(level, async () => {
      const res = await fetch(baselineUrl, { method: "POST", headers: { "content-type": "application/json" }, body: callBody });
      const body = await res.text();
      if (!res.ok || body !== baselineBody) throw new Error(`canned baseline answered ${res.status} with other bytes`);
    });
    console.log(
      `${String(level).padStart(7)} | ${mcp.p50.toFixed(2).padStart(10)} | ${mcp.p99.toFixed(2).padStart(10)} | ${mcp.rps.toFixed(0).padStart(9)} | ${route.p50.toFixed(2).padStart(12)} | ${route.p99.toFixed(2).padStart(12)} | ${route.rps.toFixed(0).padStart(11)} | ${(route.rps / mcp.rps).toFixed(1).padStart(8)}x | ${base.p50.toFixed(2).padStart(13)} | ${base.rps.toFixed(0).padStart(12)} | ${mcp.cpuPerRequest.toFixed(2).padStart(18)} | ${route.cpuPerRequest.toFixed(2).padStart(5)} | ${(mcp.cpuPerRequest / route.cpuPerRequest).toFixed(2).padStart(8)}x | ${mcp.clientCpuPerRequest.toFixed(2).padStart(21)} | ${route.clientCpuPerRequest.toFixed(2).padStart(5)}`,
    );
    const goal = level === 64 ? undefined : "≤ 1.3× the bare route";
    figures.push(
      { name: `MCP health p50, ${level} clients`, value: mcp.p50, unit: "ms", baseline: `GET /api/health p50, ${level} clients`, ratio: mcp.p50 / route.p50, ...(goal ? { goal } : {}) },
      { name: `MCP health throughput, ${level} clients (route req/s ÷ MCP req/s)`, value: mcp.rps, unit: "req/s", baseline: `GET /api/health req/s, ${level} clients`, ratio: route.rps / mcp.rps, ...(goal ? { goal } : {}) },
      { name: `MCP health p99, ${level} clients`, value: mcp.p99, unit: "ms", baseline: `GET /api/health p99, ${level} clients`, ratio: mcp.p99 / route.p99 },
      { name: `GET /api/health p50, ${level} clients`, value: route.p50, unit: "ms", baseline: `canned node:http JSON p50, ${level} clients`, ratio: route.p50 / base.p50 },
      { name: `GET /api/health req/s, ${level} clients`, value: route.rps, unit: "req/s" },
      { name: `canned node:http JSON req/s, ${level} clients`, value: base.rps, unit: "req/s" },
      // CPU is counted in 10 ms ticks: a step too short to see any gives no ratio rather than an infinite one.
      route.cpuPerRequest > 0
        ? { name: `hub CPU per MCP health call, ${level} clients`, value: mcp.cpuPerRequest, unit: "ms", baseline: `hub CPU per GET /api/health, ${level} clients`, ratio: mcp.cpuPerRequest / route.cpuPerRequest }
        : { name: `hub CPU per MCP health call, ${level} clients`, value: mcp.cpuPerRequest, unit: "ms" },
      // The latency ratio includes the client: the SDK's Client does more per call than a bare fetch.
      { name: `client CPU per MCP health call (SDK Client), ${level} clients`, value: mcp.clientCpuPerRequest, unit: "ms", baseline: `client CPU per GET /api/health (fetch), ${level} clients`, ratio: mcp.clientCpuPerRequest / route.clientCpuPerRequest },
    );
  }
  baseline.close();

  const idle = 200;
  const before = rssKiB(hub.process.pid!);
  const idleClients: Client[] = [];
  for (let i = 0; i < idle; i++) idleClients.push(await openClient(hub.url, token));
  await new Promise((r) => setTimeout(r, 1000));
  const after = rssKiB(hub.process.pid!);
  console.log(`memory per idle session: ${((after - before) / idle).toFixed(1)} KiB (hub RSS ${(before / 1024).toFixed(0)} -> ${(after / 1024).toFixed(0)} MiB over ${idle} sessions; includes each client's open GET stream)`);
  figures.push({ name: "hub memory per idle session", value: (after - before) / idle, unit: "KiB" });
  reportBench("mcp", { database, seconds_per_step: stepSeconds, levels: LEVELS }, figures);
  clients.push(...idleClients);
} finally {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await hub.stop();
}
