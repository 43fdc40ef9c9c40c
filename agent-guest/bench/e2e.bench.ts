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
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launch } from "../../native/index";
import { submitAction } from "../../server/actions";
import { openPostgres } from "../../server/db";
import { createScratchPostgresDatabase } from "../../test/support/databases";
import { startHub } from "../../test/support/hub-process";
import { insertToken } from "../../test/pipeline/support";
import { guestDeps, waitForHost } from "../../test/guest/support";

const N = Number(process.argv[2] ?? 60);

function stats(samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
  return `p50 ${q(0.5).toFixed(1)} ms  p99 ${q(0.99).toFixed(1)} ms  (n=${s.length})`;
}

async function main(): Promise<void> {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "lh-bench-"));
  const bare: number[] = [];
  for (let i = 0; i < N; i += 1) {
    const t = performance.now();
    await launch({ argv: ["/bin/true"], workdir: ws, memory_bytes: 512 << 20, cpus: 1, pids_max: 128, timeout_ms: 10_000 }, { chownWorkdir: false });
    bare.push(performance.now() - t);
  }

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
    fs.rmSync(ws, { recursive: true, force: true });
  }
}

await main();
