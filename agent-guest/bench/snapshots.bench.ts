// Host path snapshots and the launch cost of host paths, same run.
//
// 1. A tree of BENCH_FILES files totalling BENCH_MB MiB (default 10,000 and
//    1024) in 100 directories; each round, alternating: `cp -a` of the tree
//    (the baseline, exit status checked), then the label's steps as the guest
//    takes them (docs/design.md#snapshots):
//    - the label's first snapshot (descriptor walk, digest, every file's
//      bytes stored as a blob by FICLONE or a bounded copy): the guest takes
//      it as the label's baseline when it starts, before it takes a job, so
//      no approved job waits for it; printed on its own row;
//    - the snapshot before a job when nothing changed since (every file
//      known by its stamp: one lstat each, nothing opened or linked);
//    - what a job does (a tenth of the files rewritten, a tenth deleted),
//      the digest after that job (evidence's tree_after), which reads the
//      rewritten files and stores them as blobs, timed on its own row, then
//      the snapshot before the next job (every file known by its stamp);
//    - what a host write does between jobs (the same tenth rewritten again,
//      no digest after it), then the snapshot before the next job, which
//      reads and stores the rewritten files itself;
//    - a restore of the first snapshot, timed to its result (tree built
//      beside the label, swapped in, checked by stamp), and the removal of
//      the tree it swapped out, which the guest runs after the result is
//      delivered, timed on its own; the restored tree is checked
//      byte-identical by a full re-read outside the timing.
//    Goal: the snapshot before a job ≤ 0.2× `cp -a`, restore ≤ 0.5×.
// 2. /bin/true launched through the native sandbox with no host path, one
//    "ro" label and one "rw" label (idmapped), alternating, each checked
//    (exit 0, no output).
// Run: npx tsx agent-guest/bench/snapshots.bench.ts  (BENCH_MB, BENCH_FILES, BENCH_ROUNDS, BENCH_N)
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildNative } from "../../native/build.mjs";
import { launch, probeIdmappedMount, type SandboxPolicyInput } from "../../native/index";
import { assertLaunched } from "../../native/bench/checked-launch";
import { reportBench } from "../../tools/lib/bench-report";
import { digestAfterJob, manifestEntries, openDirNoFollow, readManifest, restoreSnapshot, storeReflinks, takeSnapshot, walkTree } from "../snapshots/index";

buildNative({ quiet: true });
const loadAtStart = os.loadavg();
const MB = Number(process.env.BENCH_MB ?? 1024);
const FILES = Number(process.env.BENCH_FILES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const N = Number(process.env.BENCH_N ?? 30);
const DIRS = 100;

fs.mkdirSync("/tmp/leasehold-bench", { recursive: true, mode: 0o755 });
const base = fs.mkdtempSync("/tmp/leasehold-bench/snap-");
fs.chmodSync(base, 0o755);
const tree = path.join(base, "app");
const store = path.join(base, "store");
fs.mkdirSync(store, { mode: 0o700 });
const budget = { max_bytes: MB * 1024 * 1024 + 1, max_inodes: FILES + DIRS + 1 };
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] as number; };
const p50 = (xs: number[]) => median(xs);

function timed(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

/** `cp -a`, its exit status checked: a copy that failed is not a sample. */
function cpA(from: string, to: string): void {
  const r = spawnSync("cp", ["-a", from, to], { stdio: ["ignore", "ignore", "pipe"] });
  if (r.status !== 0) throw new Error(`cp -a ${from} ${to} exited ${r.status ?? r.signal}: ${r.stderr.toString().slice(0, 300)}`);
}

function digestOf(dir: string): string {
  const fd = openDirNoFollow(dir);
  try {
    return walkTree(fd, budget).digest;
  } finally {
    fs.closeSync(fd);
  }
}

try {
  // The tree: FILES files of equal size in DIRS directories, incompressible bytes.
  const each = Math.floor((MB * 1024 * 1024) / FILES);
  fs.mkdirSync(tree, { mode: 0o755 });
  for (let d = 0; d < DIRS; d++) fs.mkdirSync(path.join(tree, `d${d}`));
  const chunk = randomBytes(each + 4096);
  for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(tree, `d${i % DIRS}`, `f${i}.bin`), chunk.subarray(i % 4096, (i % 4096) + each));
  const original = digestOf(tree);

  const cp: number[] = [];
  const snap: number[] = [];
  const unchanged: number[] = [];
  const digestAfter: number[] = [];
  const incremental: number[] = [];
  const hostChanged: number[] = [];
  const restore: number[] = [];
  const removal: number[] = [];
  const reread: number[] = [];
  const other = randomBytes(each);
  for (let r = 0; r < ROUNDS; r++) {
    const copy = path.join(base, `copy-${r}`);
    cp.push(timed(() => cpA(tree, copy)));
    fs.rmSync(copy, { recursive: true, force: true });
    let id = "";
    snap.push(timed(() => { id = takeSnapshot(store, "app", tree, budget).id; }));
    // The snapshot before a job when nothing changed since the baseline.
    let same: ReturnType<typeof takeSnapshot> | undefined;
    unchanged.push(timed(() => { same = takeSnapshot(store, "app", tree, budget); }));
    // What a job does: rewrites a tenth of the files and deletes another tenth; the digest after it stores what changed.
    for (let i = 0; i < FILES; i += 10) fs.writeFileSync(path.join(tree, `d${i % DIRS}`, `f${i}.bin`), other);
    for (let i = 5; i < FILES; i += 10) fs.rmSync(path.join(tree, `d${i % DIRS}`, `f${i}.bin`));
    let after = "";
    digestAfter.push(timed(() => { after = digestAfterJob(store, "app", tree, budget, manifestEntries(same as ReturnType<typeof takeSnapshot>)); }));
    let next: ReturnType<typeof takeSnapshot> | undefined;
    incremental.push(timed(() => { next = takeSnapshot(store, "app", tree, budget); }));
    if (next?.tree_digest !== after) throw new Error("the snapshot after the digest saw another tree: not a sample");
    // A host write between jobs, no digest after it: the same tenth rewritten again (so the restore below
    // undoes the same changes as before: a tenth rewritten, a tenth deleted).
    const third = randomBytes(each);
    for (let i = 0; i < FILES; i += 10) fs.writeFileSync(path.join(tree, `d${i % DIRS}`, `f${i}.bin`), third);
    hostChanged.push(timed(() => void takeSnapshot(store, "app", tree, budget)));
    let result: ReturnType<typeof restoreSnapshot> | undefined;
    let removeOld: (() => void) | undefined;
    restore.push(timed(() => { result = restoreSnapshot(store, readManifest(store, id), tree, budget, { deferRemoval: (remove) => (removeOld = remove) }); }));
    if (removeOld === undefined) throw new Error("the restore was not a swap (atomic): not a sample");
    removal.push(timed(() => (removeOld as () => void)()));
    if (result?.identical !== true || digestOf(tree) !== original) throw new Error("restore was not byte-identical: not a sample");
    reread.push(result.checked.read);
    // Each round starts from an empty store: snapshots, known stamps and blobs.
    fs.rmSync(store, { recursive: true, force: true });
    fs.mkdirSync(store, { mode: 0o700 });
  }
  const method = storeReflinks(store) ? "reflink (FICLONE)" : "copy (no FICLONE on this file system)";

  // Launch overhead of host paths.
  const wd = fs.mkdtempSync("/tmp/leasehold-bench/wd-");
  const logs = path.join(base, "logs");
  fs.mkdirSync(logs, { mode: 0o755 });
  fs.writeFileSync(path.join(logs, "a.log"), "x\n");
  const pol: SandboxPolicyInput = { argv: ["/bin/true"], workdir: wd, memory_bytes: 128 << 20, cpus: 1, pids_max: 32, timeout_ms: 10_000, env: { PATH: "/usr/bin:/bin" } };
  const idmap = probeIdmappedMount(logs);
  const variants: Array<[string, SandboxPolicyInput]> = [
    ["no host path", pol],
    ["one ro label", { ...pol, host_paths: [{ label: "logs", path: logs, mode: "ro" }] }],
    ...(idmap.ok ? [["one rw label (idmapped)", { ...pol, host_paths: [{ label: "app", path: logs, mode: "rw" }] }] as [string, SandboxPolicyInput]] : []),
  ];
  for (const [name, p] of variants) for (let i = 0; i < 3; i++) assertLaunched(name, await launch(p));
  const times = variants.map(() => [] as number[]);
  for (let i = 0; i < N; i++) {
    for (let v = 0; v < variants.length; v++) {
      const t = performance.now();
      const res = await launch((variants[v] as [string, SandboxPolicyInput])[1]);
      (times[v] as number[]).push(performance.now() - t);
      assertLaunched((variants[v] as [string, SandboxPolicyInput])[0], res);
    }
  }
  fs.rmSync(wd, { recursive: true, force: true });

  const c = median(cp), s = median(snap), same = median(unchanged), dg = median(digestAfter), inc = median(incremental), host = median(hostChanged), rs = median(restore), rm = median(removal);
  const lines = [
    `host path snapshots — ${new Date().toISOString()}, ${FILES} files, ${MB} MiB in ${DIRS} directories, ${ROUNDS} rounds (medians), store: ${method}; ${os.cpus().length} cores, load average (1 / 5 / 15 min) ${loadAtStart.map((l) => l.toFixed(2)).join(" / ")} at the start, ${os.loadavg().map((l) => l.toFixed(2)).join(" / ")} at the end, kernel ${os.release()}`,
    "",
    "| step | median | ÷ `cp -a` | goal |",
    "|---|---|---|---|",
    `| \`cp -a\` of the tree (baseline) | ${c.toFixed(0)} ms | 1.00 | — |`,
    `| the label's first snapshot (walk + digest + every file stored as a blob): its baseline, taken when the guest starts, before it takes a job | ${s.toFixed(0)} ms | ${(s / c).toFixed(2)} | — (off a job's path) |`,
    `| snapshot before a job, nothing changed since the last one (every file known by stamp: one lstat each) | ${same.toFixed(0)} ms | ${(same / c).toFixed(2)} | ≤ 0.2 |`,
    `| digest after a job, storing what changed (a job rewrote a tenth and deleted a tenth: the rewritten read, hashed and stored as blobs; evidence's tree_after) | ${dg.toFixed(0)} ms | ${(dg / c).toFixed(2)} | — (the job's own cost, after it ran) |`,
    `| snapshot before the next job, after that job and its digest (every file known by stamp) | ${inc.toFixed(0)} ms | ${(inc / c).toFixed(2)} | ≤ 0.2 |`,
    `| snapshot before a job after a host write with no digest between (the same tenth rewritten again: read, hashed and stored here) | ${host.toFixed(0)} ms | ${(host / c).toFixed(2)} | — |`,
    `| restore of the first snapshot over that, to its result (built beside, swapped in, checked by stamp: ${median(reread)} files re-read) | ${rs.toFixed(0)} ms | ${(rs / c).toFixed(2)} | ≤ 0.5 |`,
    `| removal of the tree the restore swapped out (run after the result is delivered) | ${rm.toFixed(0)} ms | ${(rm / c).toFixed(2)} | — |`,
    "",
    `launch of /bin/true, ${N} runs each, alternating${idmap.ok ? "" : ` (rw not measured: ${idmap.reason})`}:`,
    "",
    "| variant | p50 | p90 | − none p50 |",
    "|---|---|---|---|",
    ...variants.map(([name], v) => {
      const xs = times[v] as number[];
      const sorted = [...xs].sort((a, b) => a - b);
      return `| ${name} | ${p50(xs).toFixed(2)} ms | ${(sorted[Math.floor(0.9 * sorted.length)] as number).toFixed(2)} ms | ${v === 0 ? "—" : `+${(p50(xs) - p50(times[0] as number[])).toFixed(2)} ms`} |`;
    }),
  ];
  console.log(lines.join("\n"));
  reportBench("snapshots", { files: FILES, mib: MB, rounds: ROUNDS, runs: N, method, markdown: lines.join("\n") }, [
    { name: "cp -a of the tree, median", value: c, unit: "ms" },
    { name: "first snapshot (the label's baseline, at guest start), median", value: s, unit: "ms", baseline: "cp -a of the tree, median", ratio: s / c },
    { name: "snapshot before a job, nothing changed, median", value: same, unit: "ms", baseline: "cp -a of the tree, median", ratio: same / c, goal: "≤ 0.2× cp -a" },
    { name: "digest after a job, storing what changed (a fifth changed), median", value: dg, unit: "ms", baseline: "cp -a of the tree, median", ratio: dg / c },
    { name: "incremental snapshot (a fifth changed), median", value: inc, unit: "ms", baseline: "cp -a of the tree, median", ratio: inc / c, goal: "≤ 0.2× cp -a" },
    { name: "snapshot after a host write with no digest between (a tenth rewritten), median", value: host, unit: "ms", baseline: "cp -a of the tree, median", ratio: host / c },
    { name: "restore to its result, median", value: rs, unit: "ms", baseline: "cp -a of the tree, median", ratio: rs / c, goal: "≤ 0.5× cp -a" },
    { name: "removal of the swapped-out tree (after delivery), median", value: rm, unit: "ms", baseline: "cp -a of the tree, median", ratio: rm / c },
    ...variants.map(([name], v) => ({ name: `launch p50, ${name}`, value: p50(times[v] as number[]), unit: "ms", ...(v === 0 ? {} : { baseline: "launch p50, no host path", ratio: p50(times[v] as number[]) / p50(times[0] as number[]) }) })),
  ]);
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}
