/**
 * Hostile fuzz of /api/mcp: `npx tsx server/mcp/bench/fuzz.ts [count=100000] [concurrency=32] [seed=7]`.
 * Starts a real hub (PGlite, or DATABASE_URL), issues a valid token, a
 * revoked one and an expired one, then sends generated requests and prints
 * the counts. Exits non-zero on any 5xx, any 2xx without a valid token, or a
 * hub that stopped answering. Memory is the hub's RSS before and after.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runCli } from "../../../test/support/hub-process";
import { reportBench } from "../../../tools/lib/bench-report";
import { runFuzz } from "./fuzz-cases";
import { benchHub, rssKiB } from "./hub";

const count = Number(process.argv[2] ?? 100_000);
const concurrency = Number(process.argv[3] ?? 32);
const seed = Number(process.argv[4] ?? 7);

// Entry-point script: the database comes from the caller's environment, like the hub's.
const { hub, token, cliEnv } = await benchHub(process.env.DATABASE_URL, { LEASEHOLD_MCP_RATE_PER_MINUTE: "10000000" });
try {
  const issue = async (args: string[]) => (await runCli(["token", "create", ...args], cliEnv)).stdout;
  const revokedOut = await issue(["--name", "revoked", "--expires", "1d"]);
  const revoked = revokedOut.split("\n").find((l) => l.startsWith("lh_"))!;
  await runCli(["token", "revoke", /token ([0-9a-f-]{36})/.exec(revokedOut)![1]!], cliEnv);
  const expired = (await issue(["--name", "expired", "--expires", "1s"])).split("\n").find((l) => l.startsWith("lh_"))!;
  await new Promise((r) => setTimeout(r, 1100));

  const transport = new StreamableHTTPClientTransport(new URL(`${hub.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "fuzz", version: "1" });
  await client.connect(transport);

  const rssBefore = rssKiB(hub.process.pid!);
  const started = performance.now();
  const rssTrail: string[] = [];
  const counts = await runFuzz(
    { url: hub.url, validToken: token, refusedTokens: [revoked, expired], sessionId: transport.sessionId!, allowedOrigin: hub.url },
    { count, concurrency, seed, every: Math.max(1, Math.floor(count / 5)), onProgress: (sent) => rssTrail.push(`${sent}: ${(rssKiB(hub.process.pid!) / 1024).toFixed(0)} MiB`) },
  );
  const seconds = (performance.now() - started) / 1000;
  const alive = hub.process.exitCode === null && (await fetch(`${hub.url}/api/health`)).status === 200;
  const rssAfter = rssKiB(hub.process.pid!);
  await client.close();

  console.log(`requests:                       ${counts.requests} in ${seconds.toFixed(1)} s (${(counts.requests / seconds).toFixed(0)}/s, ${concurrency} in flight, seed ${seed})`);
  console.log(`responses by status:            ${JSON.stringify(counts.byStatus)}`);
  console.log(`5xx responses:                  ${counts.serverErrors}`);
  console.log(`2xx without a valid token:      ${counts.unauthenticatedSuccesses}`);
  console.log(`2xx with the valid token:       ${counts.authenticatedSuccesses}`);
  console.log(`transport errors (client side): ${counts.transportErrors}`);
  console.log(`hub crashed:                    ${alive ? 0 : 1}`);
  console.log(`hub RSS:                        ${(rssBefore / 1024).toFixed(0)} MiB -> ${(rssAfter / 1024).toFixed(0)} MiB (after n requests: ${rssTrail.join(", ")})`);
  for (const sample of counts.samples) console.log(`  sample: ${sample}`);
  reportBench("mcp-fuzz", { seed, concurrency, by_status: counts.byStatus, samples: counts.samples, hub_alive: alive }, [
    { name: "requests per second", value: counts.requests / seconds, unit: "req/s" },
    { name: "5xx responses", value: counts.serverErrors, unit: "responses" },
    { name: "2xx without a valid token", value: counts.unauthenticatedSuccesses, unit: "responses" },
    { name: "hub RSS growth", value: (rssAfter - rssBefore) / 1024, unit: "MiB" },
  ]);
  process.exitCode = counts.serverErrors === 0 && counts.unauthenticatedSuccesses === 0 && alive ? 0 : 1;
} finally {
  await hub.stop();
}
