/**
 * HTTP soak: `npx tsx test/hub/bench/http-soak.bench.ts` (or `npm run bench -- --only http-soak`).
 *
 * The long forms of two checks test/hub/http-hardening.test.ts makes short,
 * against a real hub (`leasehold start`, PGlite, no local guest) at its
 * default settings:
 *  - keep-alive: the official SDK client calls `health` on one session with
 *    gaps of 3, 4, 4.5, 5, 5.5, 6 and 8 s (BENCH_GAPS_S overrides), across
 *    Node's default 5 s keep-alive timeout and the client pools' own;
 *  - session clean-up: `tools/mcp-call.mjs` run BENCH_CALLS (40) times in a
 *    row under the default per-token cap of 32 sessions.
 * Prints each outcome and the time per shell-client call; exits non-zero on
 * any failed call.
 */
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { reportBench } from "../../../tools/lib/bench-report";
import { ROOT, runCli, runProcess, startHub } from "../../support/hub-process";

const gaps = (process.env.BENCH_GAPS_S ?? "3,4,4.5,5,5.5,6,8").split(",").map(Number);
const calls = Number(process.env.BENCH_CALLS ?? 40);
if (gaps.some((g) => !(g >= 0)) || !Number.isSafeInteger(calls) || calls < 1) throw new Error("BENCH_GAPS_S must be a comma-separated list of seconds and BENCH_CALLS a whole number ≥ 1");

const hub = await startHub({ LEASEHOLD_LOCAL_GUEST: "0" });
const failures: string[] = [];
let perCallMs: number | undefined;
try {
  const made = await runCli(["token", "create", "--name", "soak", "--expires", "1d"], { LEASEHOLD_DATA_DIR: hub.dataDir });
  const token = made.stdout.split("\n").find((line) => line.startsWith("lh_"));
  if (made.code !== 0 || token === undefined) throw new Error(`token create failed: ${made.stderr}`);

  const transport = new StreamableHTTPClientTransport(new URL(`${hub.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "soak", version: "1.0.0" });
  await client.connect(transport);
  try {
    for (const gapS of gaps) {
      await new Promise((r) => setTimeout(r, gapS * 1000));
      try {
        const result = await client.callTool({ name: "health", arguments: {} });
        console.log(`keep-alive: call after ${gapS} s: ${result.isError ? "error result" : "ok"}`);
        if (result.isError) failures.push(`keep-alive after ${gapS} s: error result`);
      } catch (error) {
        console.log(`keep-alive: call after ${gapS} s: ${(error as Error).message}`);
        failures.push(`keep-alive after ${gapS} s: ${(error as Error).message}`);
      }
    }
  } finally {
    await transport.terminateSession().catch(() => undefined);
    await client.close();
  }

  const started = performance.now();
  for (let i = 0; i < calls; i++) {
    const r = await runProcess(process.execPath, [path.join(ROOT, "tools", "mcp-call.mjs"), "--url", hub.url, "health"], {
      env: { ...(process.env as Record<string, string>), MCP_TOKEN: token },
      label: `mcp-call #${i + 1}`,
    });
    if (r.code !== 0) failures.push(`mcp-call #${i + 1} exited ${r.code}: ${r.stderr.trim()}`);
  }
  perCallMs = (performance.now() - started) / calls;
  console.log(`mcp-call.mjs: ${calls} calls in a row under the default session cap, ${perCallMs.toFixed(0)} ms each`);
} finally {
  await hub.stop();
}
for (const failure of failures) console.log(`FAILED: ${failure}`);
reportBench("http-soak", { gaps_s: gaps, calls, failures }, [
  { name: "keep-alive gaps without a failure", value: gaps.length - failures.filter((f) => f.startsWith("keep-alive")).length, unit: "calls" },
  { name: "mcp-call.mjs time per call", value: perCallMs ?? Number.NaN, unit: "ms" },
]);
process.exitCode = failures.length === 0 ? 0 : 1;
