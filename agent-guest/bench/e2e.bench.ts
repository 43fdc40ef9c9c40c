/**
 * End-to-end latency of an auto-allowed `true`, beside the bare sandbox
 * launch measured in the same run:
 *
 *   launch        native launch() of /bin/true (the sandbox alone)
 *   pipeline ×1   submitAction → decision, lease, dispatch (signed job) →
 *                 guest long-poll → verify → ceiling → sandbox → scrub →
 *                 signed evidence → hub verifies, seals evidence/1 →
 *                 caller gets output + receipt (inclusion proof included)
 *   pipeline ×16  the same, 16 callers at once
 *
 * Needs root, the built web app (`node tools/build.mjs`) and a PostgreSQL
 * server: TEST_POSTGRES_URL (the test process calls the pipeline on the
 * hub's database, as the MCP endpoint does inside the hub).
 *   TEST_POSTGRES_URL=postgres://… npx tsx agent-guest/bench/e2e.bench.ts [calls]
 */
import os from "node:os";
import { measureBareLaunches, stats } from "./launch-baseline";
import { submitAction } from "../../server/actions";
import { openPostgres } from "../../server/db";
import { createScratchPostgresDatabase } from "../../test/support/databases";
import { startHub } from "../../test/support/hub-process";
import { insertToken } from "../../test/pipeline/support";
import { guestDeps, waitForHost } from "../../test/guest/support";
import { reportBench } from "../../tools/lib/bench-report";

const N = Number(process.argv[2] ?? 60);

function percentile(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
}

async function main(): Promise<void> {
  const bare = await measureBareLaunches(N);

  const scratch = await createScratchPostgresDatabase();
  const hub = await startHub({ DATABASE_URL: scratch.url });
  const handle = await openPostgres(scratch.url, { max: 20 });
  try {
    await waitForHost(handle.db, "local");
    const deps = guestDeps(handle, hub.dataDir);
    const caller = await insertToken(handle.db);
    const call = async () => {
      const t = performance.now();
      const outcome = await submitAction(deps, caller, { operation: "run_command", arguments: { host: "local", command: "true" }, channel: "mcp" }, { waitMs: 0 });
      if (outcome.result?.exit?.code !== 0 || outcome.result.receipt === null) throw new Error(`bench call did not complete with a receipt: ${JSON.stringify(outcome.result ?? null)}`);
      // `true` prints nothing: any output means something else ran.
      if (outcome.result.output.stdout !== "" || outcome.result.output.stderr !== "") throw new Error(`bench call's output is not that of \`true\`: ${JSON.stringify(outcome.result.output)}`);
      return performance.now() - t;
    };
    for (let i = 0; i < 5; i += 1) await call(); // warm-up
    const serial: number[] = [];
    const t1 = performance.now();
    for (let i = 0; i < N; i += 1) serial.push(await call());
    const serialRate = (N / (performance.now() - t1)) * 1000;
    const concurrent: number[] = [];
    const t16 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < N) {
          next += 1;
          concurrent.push(await call());
        }
      }),
    );
    const concurrentRate = (N / (performance.now() - t16)) * 1000;
    console.log(`e2e bench (${os.cpus().length} cores, hub on PostgreSQL, local guest, tier C sandbox)`);
    console.log(`  sandbox launch alone     ${stats(bare)}`);
    console.log(`  pipeline, 1 caller       ${stats(serial)}  ${serialRate.toFixed(1)} calls/s`);
    console.log(`  pipeline, 16 concurrent  ${stats(concurrent)}  ${concurrentRate.toFixed(1)} calls/s`);
    const bareP50 = percentile(bare, 0.5);
    const serialP50 = percentile(serial, 0.5);
    reportBench("e2e", { database: "postgres", calls: N, cores: os.cpus().length }, [
      { name: "sandbox launch alone p50", value: bareP50, unit: "ms" },
      { name: "pipeline, 1 caller p50", value: serialP50, unit: "ms", baseline: "sandbox launch alone p50", ratio: serialP50 / bareP50, goal: "≤ 5× the sandbox launch and ≤ 25 ms on PostgreSQL" },
      { name: "pipeline, 1 caller p99", value: percentile(serial, 0.99), unit: "ms" },
      { name: "pipeline, 1 caller rate", value: serialRate, unit: "calls/s" },
      { name: "pipeline, 16 concurrent p50", value: percentile(concurrent, 0.5), unit: "ms", baseline: "sandbox launch alone p50", ratio: percentile(concurrent, 0.5) / bareP50 },
      { name: "pipeline, 16 concurrent p99", value: percentile(concurrent, 0.99), unit: "ms", goal: "≤ 250 ms" },
      { name: "pipeline, 16 concurrent rate", value: concurrentRate, unit: "calls/s", goal: "≥ 150 calls/s on PostgreSQL" },
    ]);
  } finally {
    await handle.close();
    await hub.stop();
    await scratch.drop();
  }
}

await main();
