/**
 * `npm run bench:ledger` — prints figures, asserts nothing.
 *
 * On a throwaway real PostgreSQL server (fsync on): append acknowledgements
 * per second and latency at 1, 8 and 32 concurrent writers, next to a plain
 * single-row INSERT into a comparable table measured in the same run;
 * checkpoint lag; export + offline verify of BENCH_ENTRIES entries (default
 * 200,000; set 1000000 for the full figure); inclusion proof generation and
 * verification from the database.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { applyMigrations, executeRows, openPostgres, type Database } from "../../db";
import { startTemporaryPostgres } from "../../../tools/lib/postgres.mjs";
import { decodeBase64Strict } from "../../trust/ledger/base64";
import { parseSignedCheckpoint } from "../../trust/ledger/checkpoint";
import { encodeEntry, digestOf, hashActor } from "../entry";
import { exportLedgerToFile } from "../export";
import { integrateOnce, startIntegrator } from "../integrate";
import { verifyInclusion } from "../../trust/ledger/proof";
import { proveInclusion } from "../prove";
import { runVerify } from "../verify-cli";
import { appendTestEntry, memoryLogKey } from "../test/fixtures";
import { reportBench, type BenchFigure } from "../../../tools/lib/bench-report";

const SECONDS_PER_RUN = Number(process.env.BENCH_SECONDS ?? 3);
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 200_000);

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function measure(writers: number, op: (w: number, i: number) => Promise<unknown>) {
  const latencies: number[] = [];
  const deadline = performance.now() + SECONDS_PER_RUN * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const t = performance.now();
        await op(w, i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99), n: latencies.length };
}

const fmt = (n: number, d = 1) => n.toFixed(d);

async function main() {
  const server = await startTemporaryPostgres();
  const admin = postgres(server.url, { max: 1, onnotice: () => undefined });
  await admin.unsafe("create database bench");
  await admin.end();
  const url = server.url.replace(/\/postgres$/, "/bench");
  const handle = await openPostgres(url, { max: 40 });
  const figures: BenchFigure[] = [];
  try {
    await applyMigrations(handle);
    const db = handle.db;
    await db.execute(sql`create table bench_plain (id bigserial primary key, body bytea not null, created_at timestamptz not null default now())`);
    const sample = encodeEntry({
      type: "admin/1",
      time: new Date(),
      action_id: null,
      actor: hashActor("system", "bench"),
      data: { operation: "bench.append", target_digest: digestOf("x"), settings_digest: null },
    });
    console.log(`ledger benchmark — PostgreSQL ${server.binDir.split("/").at(-2)} on loopback, fsync on, ${os.cpus().length} cores, ${SECONDS_PER_RUN} s per run`);
    console.log("\nappends (acknowledged = committed):");
    console.log("writers | ledger append/s  p50 ms  p99 ms | plain insert/s  p50 ms  p99 ms | ratio (append/plain)");
    for (const writers of [1, 8, 32]) {
      const plain = await measure(writers, () => db.execute(sql`insert into bench_plain (body) values (${Buffer.from(sample)})`));
      const ledger = await measure(writers, (w, i) => appendTestEntry(db, `bench-${writers}-${w}-${i}`));
      console.log(
        `${String(writers).padStart(7)} | ${fmt(ledger.perSecond, 0).padStart(15)} ${fmt(ledger.p50, 2).padStart(7)} ${fmt(ledger.p99, 2).padStart(7)} | ${fmt(plain.perSecond, 0).padStart(14)} ${fmt(plain.p50, 2).padStart(7)} ${fmt(plain.p99, 2).padStart(7)} | ${fmt(ledger.perSecond / plain.perSecond, 2)}`,
      );
      figures.push(
        { name: `ledger appends/s, ${writers} writers`, value: ledger.perSecond, unit: "appends/s", baseline: `plain single-row insert/s, ${writers} writers`, ratio: ledger.perSecond / plain.perSecond },
        { name: `ledger append p50, ${writers} writers`, value: ledger.p50, unit: "ms", baseline: `plain insert p50, ${writers} writers`, ratio: ledger.p50 / plain.p50 },
        { name: `ledger append p99, ${writers} writers`, value: ledger.p99, unit: "ms" },
      );
    }

    const key = memoryLogKey();
    // Integrate the backlog first so the lag below is steady-state, not catch-up.
    for (let r = await integrateOnce(db, key, { batchSize: 5000 }); r.kind === "integrated"; r = await integrateOnce(db, key, { batchSize: 5000 }));
    const integrator = startIntegrator(db, key, { pollMs: 200 });
    const lags: number[] = [];
    const lagDeadline = performance.now() + SECONDS_PER_RUN * 1000;
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; performance.now() < lagDeadline; i++) {
          const appendedAt = performance.now();
          const id = await appendTestEntry(db, `lag-${w}-${i}`);
          if (i % 10 !== 0) continue;
          for (;;) {
            const [row] = await executeRows<{ covered: boolean }>(
              db,
              sql`select e.leaf_index is not null and exists (select 1 from ledger_checkpoints c where c.tree_size > e.leaf_index) as covered from ledger_entries e where e.id = ${id}`,
            );
            if (row?.covered) break;
            await new Promise((r) => setTimeout(r, 5));
          }
          lags.push(performance.now() - appendedAt);
        }
      }),
    );
    await integrator.stop();
    lags.sort((a, b) => a - b);
    console.log(`\ncheckpoint lag (append → signed checkpoint covering it), 8 writers, 200 ms poll: p50 ${fmt(pct(lags, 50), 0)} ms, p99 ${fmt(pct(lags, 99), 0)} ms, max ${fmt(lags.at(-1) ?? NaN, 0)} ms (target ≤ 1000 ms; n=${lags.length})`);
    figures.push(
      { name: "checkpoint lag p50 (8 writers, 200 ms poll)", value: pct(lags, 50), unit: "ms", goal: "≤ 1000 ms" },
      { name: "checkpoint lag p99 (8 writers, 200 ms poll)", value: pct(lags, 99), unit: "ms", goal: "≤ 1000 ms" },
    );

    await fillTo(db, key, ENTRIES);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-bench-"));
    const file = path.join(dir, "ledger.export");
    let t = performance.now();
    const counts = await exportLedgerToFile(db, key, file);
    const exportMs = performance.now() - t;
    t = performance.now();
    let out = "";
    const code = await runVerify(file, key.verifier, { write: (s: string) => (out += s) });
    const verifyMs = performance.now() - t;
    // Baseline, same run, same data: the same paged reads with nothing done to the rows.
    t = performance.now();
    for (let start = 0; start < counts.entries; start += 5000) {
      await Promise.all([
        executeRows(db, sql`select leaf_index, body from ledger_entries where leaf_index >= ${start} and leaf_index < ${start + 5000} order by leaf_index`),
        executeRows(db, sql`select idx, hash from ledger_nodes where level = 0 and idx >= ${start} and idx < ${start + 5000}`),
      ]);
    }
    const readMs = performance.now() - t;
    console.log(
      `\nexport + verify of ${counts.entries} entries (${counts.checkpoints} checkpoints, ${fmt(fs.statSync(file).size / 2 ** 20, 0)} MiB): export ${fmt(exportMs / 1000, 2)} s (from the database), verify ${fmt(verifyMs / 1000, 2)} s, total ${fmt((exportMs + verifyMs) / 1000, 2)} s (target < 10 s), verdict exit ${code}; baseline: reading the same rows page by page alone ${fmt(readMs / 1000, 2)} s (export ÷ read ${fmt(exportMs / readMs, 2)})`,
    );
    figures.push(
      { name: `export from the database, ${counts.entries} entries`, value: exportMs / 1000, unit: "s", baseline: "reading the same rows page by page", ratio: exportMs / readMs },
      { name: `verify, ${counts.entries} entries`, value: verifyMs / 1000, unit: "s" },
      { name: `export + verify, ${counts.entries} entries`, value: (exportMs + verifyMs) / 1000, unit: "s", goal: "< 10 s (for 1,000,000 entries)" },
    );
    fs.rmSync(dir, { recursive: true, force: true });

    const size = counts.entries;
    const proofTimes: number[] = [];
    const verifyTimes: number[] = [];
    for (let i = 0; i < 500; i++) {
      const index = Math.floor(Math.random() * size);
      let t0 = performance.now();
      const p = await proveInclusion(db, index);
      proofTimes.push(performance.now() - t0);
      const cp = parseSignedCheckpoint(p.checkpoint);
      if (!cp.ok) throw new Error(cp.reason);
      t0 = performance.now();
      const ok = verifyInclusion(decodeBase64Strict(p.leaf_hash)!, index, p.tree_size, p.proof.map((x) => decodeBase64Strict(x)!), cp.checkpoint.root);
      verifyTimes.push(performance.now() - t0);
      if (!ok.ok) throw new Error(ok.reason);
    }
    proofTimes.sort((a, b) => a - b);
    verifyTimes.sort((a, b) => a - b);
    console.log(
      `inclusion proof at size ${size}: generate (database) p50 ${fmt(pct(proofTimes, 50), 2)} ms p99 ${fmt(pct(proofTimes, 99), 2)} ms; verify p50 ${fmt(pct(verifyTimes, 50) * 1000, 0)} µs p99 ${fmt(pct(verifyTimes, 99) * 1000, 0)} µs`,
    );
    figures.push(
      { name: "inclusion proof generation (database) p50", value: pct(proofTimes, 50), unit: "ms" },
      { name: "inclusion proof verification p50", value: pct(verifyTimes, 50) * 1000, unit: "µs" },
    );
    reportBench("ledger", { database: "postgres", seconds_per_run: SECONDS_PER_RUN, entries: ENTRIES, cores: os.cpus().length }, figures);
  } finally {
    await handle.close();
    server.stop();
  }
}

/** Bulk-loads entries (multi-row inserts) and integrates them, to reach `target`. */
async function fillTo(db: Database, key: ReturnType<typeof memoryLogKey>, target: number) {
  const [row] = await executeRows<{ n: string | number }>(db, sql`select count(*)::bigint as n from ledger_entries`);
  let have = Number(row?.n ?? 0);
  const t = performance.now();
  const time = new Date();
  while (have < target) {
    const n = Math.min(2000, target - have);
    const values = Array.from({ length: n }, (_, i) =>
      encodeEntry({
        type: "admin/1",
        time,
        action_id: null,
        actor: hashActor("system", "bench"),
        data: { operation: "bench.bulk", target_digest: digestOf(`bulk-${have + i}`), settings_digest: null },
      }),
    );
    await db.execute(sql`insert into ledger_entries (body) values ${sql.join(values.map((v) => sql`(${Buffer.from(v)})`), sql`, `)}`);
    have += n;
  }
  const loaded = performance.now();
  for (let r = await integrateOnce(db, key, { batchSize: 10_000 }); r.kind === "integrated"; r = await integrateOnce(db, key, { batchSize: 10_000 }));
  console.log(`\nloaded to ${target} entries in ${fmt((loaded - t) / 1000, 1)} s, integrated in ${fmt((performance.now() - loaded) / 1000, 1)} s`);
}

await main();
