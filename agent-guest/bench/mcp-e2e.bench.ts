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
import os from "node:os";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { measureBareLaunches, stats } from "./launch-baseline";
import { runCli, startHub } from "../../test/support/hub-process";
import { connectClient } from "../../test/mcp/support";
import { waitFor } from "../../test/guest/support";

const N = Number(process.argv[2] ?? 200);
const CONCURRENCY = 16;

interface Timed {
  ms: number;
  busy: number;
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
    const result = (await client.callTool({ name: "run_command", arguments: { host: "local", command: "true" } }, CallToolResultSchema, { timeout: 60_000 })) as CallToolResult;
    const s = (result.structuredContent ?? {}) as { status?: string; result?: { exit?: { code?: number } | null }; receipt?: unknown; code?: string };
    if (s.code === "HOST_BUSY") {
      busy += 1;
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 20)); // back off like a client honouring retryable
      continue;
    }
    if (result.isError === true || s.status !== "completed" || s.result?.exit?.code !== 0 || s.receipt == null) {
      throw new Error(`bench call did not complete with a receipt: ${JSON.stringify(s)}`);
    }
    return { ms: performance.now() - t, busy };
  }
}

async function main(): Promise<void> {
  const bare = await measureBareLaunches(N);

  const databaseUrl = process.env.DATABASE_URL;
  // Rate limits are per token; the bench uses one token for every client.
  const hub = await startHub({ DATABASE_URL: databaseUrl, LEASEHOLD_MCP_RATE_PER_MINUTE: "1000000" });
  const cli = { LEASEHOLD_DATA_DIR: hub.dataDir, LEASEHOLD_PORT: String(hub.port), DATABASE_URL: databaseUrl };
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

    const serial: number[] = [];
    const t1 = performance.now();
    for (let i = 0; i < N; i += 1) serial.push((await timedCall(first)).ms);
    const serialRate = (N / (performance.now() - t1)) * 1000;

    // 16 calls in flight on ONE session.
    const oneSession: number[] = [];
    const tOne = performance.now();
    let nextOne = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (nextOne < N) {
          nextOne += 1;
          oneSession.push((await timedCall(first)).ms);
        }
      }),
    );
    const oneSessionRate = (N / (performance.now() - tOne)) * 1000;

    // 16 clients, each its own session, sharing the host through observe leases.
    const concurrent: number[] = [];
    let busy = 0;
    let next = 0;
    const t16 = performance.now();
    await Promise.all(
      clients.map(async (client) => {
        while (next < N) {
          next += 1;
          const r = await timedCall(client);
          concurrent.push(r.ms);
          busy += r.busy;
        }
      }),
    );
    const concurrentRate = (N / (performance.now() - t16)) * 1000;

    const db = databaseUrl === undefined ? "embedded PGlite" : "PostgreSQL";
    console.log(`mcp e2e bench (${os.cpus().length} cores, hub on ${db}, local guest, tier C sandbox, run_command "true")`);
    console.log(`  sandbox launch alone                 ${stats(bare)}`);
    console.log(`  MCP tools/call, 1 client             ${stats(serial)}  ${serialRate.toFixed(1)} calls/s`);
    console.log(`  MCP tools/call, 1 session ×${CONCURRENCY}       ${stats(oneSession)}  ${oneSessionRate.toFixed(1)} calls/s`);
    console.log(`  MCP tools/call, ${CONCURRENCY} sessions          ${stats(concurrent)}  ${concurrentRate.toFixed(1)} calls/s  (${busy} HOST_BUSY retries)`);
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await hub.stop();
  }
}

await main();
