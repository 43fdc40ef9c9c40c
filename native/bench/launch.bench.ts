// Launch-to-exit of /bin/true through the sandbox, beside peers measured in
// the same run, round-robin (one launch of each per round, so a load spike
// lands on all of them alike):
//   fork+exec            child_process.spawnSync, no isolation
//   bwrap minimal        bwrap --unshare-all --ro-bind / / true
//   bwrap, our set       new user/pid/net/ipc/uts/cgroup/mount namespaces, read-only
//                        system binds, a bind-mounted workdir, tmpfs /tmp, fresh
//                        /proc and /dev, all capabilities dropped, unprivileged
//                        uid — no seccomp, no cgroup limits, no Landlock (bwrap
//                        has no flag for the last two; seccomp needs a compiled filter)
//   unshare              unshare -r -n -p -f --mount-proc true
//   srt                  Anthropic's sandbox runtime (@anthropic-ai/sandbox-runtime),
//                        installed into a temporary directory for this run only;
//                        a row that cannot run says why and is skipped visibly
// Every launch is checked (exit 0, no output, workdir owner restored): a
// launch or a peer that fails throws and the bench exits non-zero. Each
// launch in flight at once gets its own workdir.
//   Run: npx tsx native/bench/launch.bench.ts   (BENCH_N, default 200; BENCH_SRT_N, default 20)
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildNative } from "../build.mjs";
import { type SandboxPolicyInput } from "../index";
import { ensureDebianPackages } from "../../tools/lib/apt.mjs";
import { reportBench, type BenchFigure } from "../../tools/lib/bench-report";
import { benchWorkdir, checkedLaunchRate, removeWorkdir, timedCheckedLaunch } from "./checked-launch";

// The version measured: pinned so two runs compare the same peer.
const SRT_VERSION = "0.0.78";
const SRT_PACKAGE = `@anthropic-ai/sandbox-runtime@${SRT_VERSION}`;

buildNative({ quiet: true });
const loadAtStart = os.loadavg();
const N = Number(process.env.BENCH_N ?? 200);
const SRT_N = Math.min(N, Number(process.env.BENCH_SRT_N ?? 20));
const TRUE = "/bin/true";
const policy: Omit<SandboxPolicyInput, "workdir"> = {
  argv: [TRUE], memory_bytes: 128 << 20, cpus: 1, pids_max: 32, timeout_ms: 10_000,
  env: { PATH: "/usr/bin:/bin" },
};

const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!; };

/** A peer: one command per launch, checked for exit 0 and empty output. */
interface Peer {
  name: string;
  /** Samples to take (srt is slow: fewer). */
  n: number;
  /** argv for a launch in `workdir`. */
  argv: (workdir: string) => string[];
  env?: NodeJS.ProcessEnv;
}

function runPeerOnce(peer: Peer, workdir: string): number {
  const [cmd, ...args] = peer.argv(workdir);
  const t = performance.now();
  const r = spawnSync(cmd!, args, { encoding: "utf8", env: peer.env ?? process.env, timeout: 60_000 });
  const ms = performance.now() - t;
  if (r.error !== undefined || r.status !== 0 || r.stdout !== "" || r.stderr !== "") {
    const why = r.error?.message ?? `exit ${r.status ?? r.signal}, stdout ${JSON.stringify(r.stdout.slice(0, 200))}, stderr ${JSON.stringify(r.stderr.slice(0, 300))}`;
    throw new Error(`${peer.name}: ${[cmd, ...args].join(" ")} did not run as expected (${why}) — a failed launch is not a sample`);
  }
  return ms;
}

function runPeerAsync(peer: Peer, workdir: string): Promise<void> {
  const [cmd, ...args] = peer.argv(workdir);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, args, { env: peer.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => { out += b.toString(); });
    child.stderr.on("data", (b: Buffer) => { out += b.toString(); });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (code === 0 && out === "") resolve();
      else reject(new Error(`${peer.name}: exit ${code ?? signal}, output ${JSON.stringify(out.slice(0, 300))} — a failed launch is not a sample`));
    });
  });
}

const bwrapOurSet = (workdir: string) => [
  "bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--uid", "65534", "--gid", "65534", "--hostname", "sandbox",
  "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
  "--symlink", "usr/sbin", "/sbin", "--ro-bind", "/etc", "/etc", "--bind", workdir, "/work", "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev",
  "--chdir", "/work", "--cap-drop", "ALL", TRUE,
];

/** srt, installed into a temporary directory; a sentence when it cannot run here. */
function prepareSrt(): { peer: Peer; cleanUp: () => void } | { skipped: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "lh-bench-srt-"));
  const cleanUp = () => rmSync(dir, { recursive: true, force: true });
  try {
    // srt's Linux backend runs bubblewrap with socat (its network proxy bridge) and ripgrep (its path scan).
    ensureDebianPackages(["socat", "ripgrep"], { quiet: true });
  } catch (e) {
    cleanUp();
    return { skipped: `its Debian dependencies (socat, ripgrep) did not install: ${e instanceof Error ? e.message : String(e)}` };
  }
  const install = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--no-save", "--prefix", dir, SRT_PACKAGE], { encoding: "utf8", timeout: 300_000 });
  if (install.status !== 0) {
    cleanUp();
    return { skipped: `npm install ${SRT_PACKAGE} failed (${install.error?.message ?? `exit ${install.status}`}): ${install.stderr.trim().split("\n").slice(-3).join(" / ")}` };
  }
  // An explicit, empty policy file: srt refuses to run on built-in defaults, and ~/.srt-settings.json must not change what is measured.
  const settings = path.join(dir, "srt-settings.json");
  writeFileSync(settings, JSON.stringify({ network: { allowedDomains: [], deniedDomains: [] }, filesystem: { denyRead: [], allowWrite: [], denyWrite: [] } }));
  const peer: Peer = { name: `srt (sandbox-runtime ${SRT_VERSION})`, n: SRT_N, argv: () => [path.join(dir, "node_modules", ".bin", "srt"), "-s", settings, TRUE], env: { ...process.env, HOME: dir } };
  try {
    runPeerOnce(peer, dir);
  } catch (e) {
    cleanUp();
    return { skipped: `installed, but does not run here: ${e instanceof Error ? e.message : String(e)}` };
  }
  return { peer, cleanUp };
}

ensureDebianPackages(["bubblewrap", "util-linux"], { quiet: true });
const peers: Peer[] = [
  { name: "fork+exec /bin/true (spawnSync)", n: N, argv: () => [TRUE] },
  { name: "bwrap --unshare-all --ro-bind / / true", n: N, argv: () => ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"] },
  { name: "bwrap with our isolation set", n: N, argv: bwrapOurSet },
  { name: "unshare -r -n -p -f --mount-proc true", n: N, argv: () => ["unshare", "-r", "-n", "-p", "-f", "--mount-proc", "true"] },
];
const srt = prepareSrt();
if ("peer" in srt) peers.push(srt.peer);
else console.log(`srt: skipped — ${srt.skipped}`);

const OURS = "leasehold sandbox /bin/true";
const ours: number[] = [];
const samples = peers.map(() => [] as number[]);
try {
  // Warm-up: every launcher a few times, checked like the rest.
  for (let i = 0; i < 5; i++) {
    const wd = benchWorkdir();
    try {
      await timedCheckedLaunch(OURS, { ...policy, workdir: wd });
      for (const p of peers) if (i < 2 || p.n === N) runPeerOnce(p, wd);
    } finally { removeWorkdir(wd); }
  }
  for (let i = 0; i < N; i++) {
    const wd = benchWorkdir();
    try {
      ours.push(await timedCheckedLaunch(OURS, { ...policy, workdir: wd }));
      peers.forEach((p, k) => { if (samples[k]!.length < p.n) samples[k]!.push(runPeerOnce(p, wd)); });
    } finally { removeWorkdir(wd); }
  }
} finally {
  if ("cleanUp" in srt) srt.cleanUp();
}

const loads = (l: number[]) => l.map((x) => x.toFixed(2)).join(", ");
const bwrapVersion = spawnSync("bwrap", ["--version"], { encoding: "utf8" }).stdout.trim();
/** What this run prints, as markdown: `npm run bench -- --only launch --docs` puts it in docs/benchmarks.md. */
const md: string[] = [];
const say = (line: string) => { console.log(line); md.push(line); };
say(`Run ${new Date().toISOString()}: ${N} rounds (srt ${"peer" in srt ? SRT_N : 0}), ${os.cpus().length} cores, load average ${loads(loadAtStart)} at the start (1, 5, 15 min), kernel ${os.release()}, node ${process.version}, ${bwrapVersion}. Round-robin, every launch checked (exit 0, no output; our workdir's owner restored).`);
say("");
const oursP50 = pct(ours, 50);
const row = (name: string, xs: number[], ratio: string) =>
  `| ${name} | ${pct(xs, 50).toFixed(2)} | ${pct(xs, 95).toFixed(2)} | ${pct(xs, 99).toFixed(2)} | ${xs.length} | ${ratio} |`;
say("| launcher | p50 ms | p95 ms | p99 ms | n | ours p50 ÷ this p50 |");
say("|---|---:|---:|---:|---:|---:|");
say(row(OURS, ours, "1.00"));
peers.forEach((p, k) => say(row(p.name, samples[k]!, (oursP50 / pct(samples[k]!, 50)).toFixed(2))));
if ("skipped" in srt) say(`| srt (sandbox-runtime) | — | — | — | 0 | skipped: ${srt.skipped} |`);
say("");

const figures: BenchFigure[] = [
  { name: "sandbox /bin/true p50", value: oursP50, unit: "ms" },
  { name: "sandbox /bin/true p95", value: pct(ours, 95), unit: "ms" },
];
peers.forEach((p, k) => {
  const p50 = pct(samples[k]!, 50);
  figures.push({ name: `${p.name} p50`, value: p50, unit: "ms" });
  figures.push({ name: `${p.name} p95`, value: pct(samples[k]!, 95), unit: "ms" });
  figures.push({ name: `sandbox p50 ÷ ${p.name} p50`, value: oursP50, unit: "ms", baseline: `${p.name} p50`, ratio: oursP50 / p50 });
});

// Throughput: each launch its own workdir; the bwrap peer with our set alongside at the same concurrency.
for (const conc of [1, 16]) {
  const total = conc === 1 ? Math.min(N, 100) : Math.min(4 * N, 320);
  const rate = await checkedLaunchRate(`${OURS} (${conc} in flight)`, policy, total, conc);
  const dirs = Array.from({ length: total }, () => benchWorkdir());
  let next = 0;
  const t = performance.now();
  const bwrapPeer = peers[2]!;
  try {
    await Promise.all(Array.from({ length: conc }, async () => { while (next < total) await runPeerAsync(bwrapPeer, dirs[next++]!); }));
  } finally { for (const d of dirs) removeWorkdir(d); }
  const bwrapRate = total / ((performance.now() - t) / 1000);
  say(`- launches/s at ${conc} in flight (${total} launches, each its own workdir): ours ${rate.toFixed(1)}, bwrap with our set ${bwrapRate.toFixed(1)} (ours ÷ bwrap ${(rate / bwrapRate).toFixed(2)})`);
  figures.push({ name: `launches/s at ${conc} concurrent`, value: rate, unit: "launches/s", baseline: `bwrap with our isolation set, launches/s at ${conc} concurrent`, ratio: rate / bwrapRate });
  figures.push({ name: `bwrap with our isolation set, launches/s at ${conc} concurrent`, value: bwrapRate, unit: "launches/s" });
}

// Launch time as the hub's RSS grows (fork cost of a big parent), against spawnSync at the same RSS.
const ballast: Buffer[] = [];
function growRssTo(mib: number) {
  while (process.memoryUsage().rss < mib * 1024 * 1024) ballast.push(Buffer.alloc(16 << 20, 1));
}
for (const mib of [50, 1024]) {
  growRssTo(mib);
  const rss = (process.memoryUsage().rss / 1048576).toFixed(0);
  const atRss: number[] = [];
  const spawnAtRss: number[] = [];
  const wd = benchWorkdir();
  try {
    for (let i = 0; i < Math.min(N, 100); i++) {
      atRss.push(await timedCheckedLaunch(`${OURS} at RSS ${rss} MiB`, { ...policy, workdir: wd }));
      if (i < 50) spawnAtRss.push(runPeerOnce(peers[0]!, wd));
    }
  } finally { removeWorkdir(wd); }
  say(`- at a launching process RSS of ${rss} MiB: ours p50 ${pct(atRss, 50).toFixed(2)} ms; spawnSync /bin/true at the same RSS p50 ${pct(spawnAtRss, 50).toFixed(2)} ms`);
  figures.push({ name: `sandbox p50 at hub RSS ${mib} MiB`, value: pct(atRss, 50), unit: "ms", baseline: `spawnSync /bin/true p50 at RSS ${mib} MiB`, ratio: pct(atRss, 50) / pct(spawnAtRss, 50) });
}
ballast.length = 0;
say(`- load average at the end: ${loads(os.loadavg())}`);
reportBench("launch", {
  runs: N, srt_runs: "peer" in srt ? SRT_N : 0, srt: "skipped" in srt ? `skipped: ${srt.skipped}` : SRT_PACKAGE, node: process.version,
  loadavg_start: loadAtStart, loadavg_end: os.loadavg(), markdown: md.join("\n"),
}, figures);
