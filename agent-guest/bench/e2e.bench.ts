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

const N = Number(process.argv[2] ?? 60);

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
      if (outcome.result?.exit?.code !== 0 || outcome.result.receipt === null) throw new Error("bench call did not complete with a receipt");
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
  } finally {
    await handle.close();
    await hub.stop();
    await scratch.drop();
  }
}

await main();
