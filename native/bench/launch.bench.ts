// Launch-to-exit of /bin/true through the sandbox, with same-run baselines:
// plain fork+exec (child_process.spawnSync) and bubblewrap --unshare-all with
// comparable binds. Prints figures only.  Run: npx tsx native/bench/launch.bench.ts
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { buildNative } from "../build.mjs";
import { launch, type SandboxPolicyInput } from "../index";
import { reportBench, type BenchFigure } from "../../tools/lib/bench-report";

buildNative({ quiet: true });
mkdirSync("/tmp/leasehold-bench", { recursive: true });
const wd = mkdtempSync("/tmp/leasehold-bench/wd-");
const N = Number(process.env.BENCH_N ?? 200);
const policy: SandboxPolicyInput = {
  argv: ["/bin/true"], workdir: wd, memory_bytes: 128 << 20, cpus: 1, pids_max: 32, timeout_ms: 10_000,
  env: { PATH: "/usr/bin:/bin" },
};

const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!; };
const fmt = (name: string, xs: number[]): number => {
  console.log(`${name.padEnd(44)} p50 ${pct(xs, 50).toFixed(2).padStart(7)} ms   p99 ${pct(xs, 99).toFixed(2).padStart(7)} ms   (n=${xs.length})`);
  return pct(xs, 50);
};

async function timeSandbox(n: number, p: SandboxPolicyInput = policy): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) { const t = performance.now(); await launch(p); out.push(performance.now() - t); }
  return out;
}
function timeSync(n: number, cmd: string, args: string[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) { const t = performance.now(); const r = spawnSync(cmd, args, { stdio: "ignore" }); if (r.status !== 0) throw new Error(`${cmd} failed`); out.push(performance.now() - t); }
  return out;
}
const bwrapArgs = (net: boolean) => [
  "--unshare-all", ...(net ? [] : ["--share-net"]), "--die-with-parent", "--new-session",
  "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
  "--symlink", "usr/sbin", "/sbin", "--bind", wd, "/work", "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev",
  "--chdir", "/work", "--cap-drop", "ALL", "/bin/true",
];

await timeSandbox(20); // warm-up
console.log(`leasehold native launcher benchmark — ${new Date().toISOString()}, ${N} runs each, node ${process.version}`);
const sandboxP50 = fmt("sandbox /bin/true (all namespaces incl. net)", await timeSandbox(N));
console.log(`${"sandbox without netns".padEnd(44)} not offered: the launcher enforces network "none" only (no weaker mode exists to measure)`);
const forkP50 = fmt("baseline: fork+exec /bin/true (spawnSync)", timeSync(N, "/bin/true", []));
const bwrapP50 = fmt("baseline: bwrap --unshare-all (with netns)", timeSync(N, "bwrap", bwrapArgs(true)));
const bwrapShareNetP50 = fmt("baseline: bwrap --unshare-all --share-net", timeSync(N, "bwrap", bwrapArgs(false)));
const figures: BenchFigure[] = [
  { name: "sandbox /bin/true p50", value: sandboxP50, unit: "ms", baseline: "bwrap --unshare-all (with netns) p50", ratio: sandboxP50 / bwrapP50 },
  { name: "sandbox /bin/true p50 vs fork+exec", value: sandboxP50, unit: "ms", baseline: "fork+exec /bin/true (spawnSync) p50", ratio: sandboxP50 / forkP50 },
  { name: "baseline: fork+exec /bin/true p50", value: forkP50, unit: "ms" },
  { name: "baseline: bwrap --unshare-all (with netns) p50", value: bwrapP50, unit: "ms" },
  { name: "baseline: bwrap --unshare-all --share-net p50", value: bwrapShareNetP50, unit: "ms" },
];

for (const conc of [1, 16]) {
  const total = conc === 1 ? 100 : 320;
  const t = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: conc }, async () => { while (next++ < total) await launch(policy); }));
  const rate = total / ((performance.now() - t) / 1000);
  console.log(`${`launches/s at ${conc} concurrent`.padEnd(44)} ${rate.toFixed(1)}`);
  figures.push({ name: `launches/s at ${conc} concurrent`, value: rate, unit: "launches/s" });
}

const ballast: Buffer[] = [];
function growRssTo(mib: number) {
  while (process.memoryUsage().rss < mib * 1024 * 1024) { const b = Buffer.alloc(16 << 20, 1); ballast.push(b); }
}
for (const mib of [50, 1024]) {
  growRssTo(mib);
  const rss = (process.memoryUsage().rss / 1048576).toFixed(0);
  const atRss = fmt(`sandbox at hub RSS ${rss} MiB`, await timeSandbox(100));
  const spawnAtRss = fmt(`  baseline spawnSync at RSS ${rss} MiB`, timeSync(50, "/bin/true", []));
  figures.push({ name: `sandbox p50 at hub RSS ${mib} MiB`, value: atRss, unit: "ms", baseline: `spawnSync /bin/true p50 at RSS ${mib} MiB`, ratio: atRss / spawnAtRss });
}
rmSync(wd, { recursive: true, force: true });
reportBench("launch", { runs: N, node: process.version }, figures);
