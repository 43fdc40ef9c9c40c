// What the lease programs cost: exec, open, connect and UDP send loops run
// by the same binary inside a lease cgroup (exec allow-list + egress rule)
// and outside it, alternating, in one run; printed as ns/op and ratios. Where
// kernel.bpf_stats_enabled exists it is switched on for the run (and put back)
// and each of this process's programs' mean run time is printed.
// Run (root): npx tsx native/bench/bpf.bench.ts      (BENCH_ROUNDS, BENCH_N)
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { reportBench, type BenchFigure } from "../../tools/lib/bench-report";
import { buildNative } from "../build.mjs";
import { addBpfLease, bpfProgramStats, bpfStatus } from "../index";
import { makeTestCgroup } from "../test/bpf-helpers";

const here = dirname(fileURLToPath(import.meta.url));
buildNative({ quiet: true });
const st = bpfStatus();
if (st.tier === "C") throw new Error(`tier C: nothing to measure (${st.detail})`);
mkdirSync("/tmp/leasehold-bench", { recursive: true });
const LOOP = "/tmp/leasehold-bench/bpf_loop";
execFileSync("gcc", ["-O2", "-o", LOOP, join(here, "bpf_loop.c")]);
const PORT = 47_000 + (process.pid % 1000);
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 5);
const N: Record<string, number> = { exec: Number(process.env["BENCH_N"] ?? 300), open: 200_000, connect: 5_000, sendto: 100_000 };

const STATS = "/proc/sys/kernel/bpf_stats_enabled";
const statsBefore = existsSync(STATS) ? readFileSync(STATS, "utf8").trim() : null;
if (statsBefore !== null) writeFileSync(STATS, "1");

const cg = makeTestCgroup("bench");
const file = (p: string) => { const s = statSync(p, { bigint: true }); return { dev: s.dev, ino: s.ino }; };
const lease = addBpfLease(cg.lease, { exec: [file("/bin/true"), file(LOOP), file("/bin/sh")], egress: [`127.0.0.1/32:${PORT}`] });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const figures: BenchFigure[] = [];
try {
  console.log(`tier ${st.tier}, object ${st.object_sha256?.slice(0, 16)}…, ${ROUNDS} rounds alternating outside/inside`);
  for (const op of ["exec", "open", "connect", "sendto"]) {
    const outside: number[] = [], inside: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const args = `${op} ${N[op]} ${PORT}`;
      outside.push(Number(execFileSync("/bin/sh", ["-c", `exec ${LOOP} ${args}`], { encoding: "utf8" })));
      inside.push(Number(execFileSync("/bin/sh", ["-c", `echo 0 > ${cg.lease}/cgroup.procs && exec ${LOOP} ${args}`], { encoding: "utf8" })));
    }
    const o = median(outside), i = median(inside);
    console.log(`${op.padEnd(8)} outside ${o.toFixed(0).padStart(8)} ns/op   inside ${i.toFixed(0).padStart(8)} ns/op   ratio ${(i / o).toFixed(3)}`);
    figures.push({ name: `${op} inside a lease`, value: i, unit: "ns/op", baseline: `${op} outside a lease`, ratio: i / o });
  }
  if (statsBefore !== null) {
    for (const p of bpfProgramStats()) {
      console.log(`program ${p.name.padEnd(18)} runs ${String(p.run_cnt).padStart(9)}   mean ${p.run_cnt ? (p.run_time_ns / p.run_cnt).toFixed(0) : "-"} ns`);
      if (p.run_cnt) figures.push({ name: `program ${p.name} mean run time`, value: p.run_time_ns / p.run_cnt, unit: "ns" });
    }
  } else {
    console.log("per-program run time: kernel.bpf_stats_enabled not available on this kernel");
  }
} finally {
  const w = lease.withdraw();
  cg.remove();
  if (statsBefore !== null) writeFileSync(STATS, statsBefore);
  if (w.denials.length) console.log(`unexpected denials: ${JSON.stringify(w.denials)}`);
}
reportBench("bpf", { tier: st.tier, rounds: ROUNDS, n: N }, figures);
