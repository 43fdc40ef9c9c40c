// What an egress lease costs at launch, same run, alternating: /bin/true with
// network "none", with the BPF exec allow-list only (exec_kernel: the BPF
// lease without a network path), and with network egress (BPF lease + the
// veth pair, addresses, routes, forwarding sysctls, /etc/hosts). Egress minus
// exec_kernel is the network path's own share. Prints figures only; nothing
// is reached (the workload is /bin/true). Every launch is checked (exit 0,
// no output): one that fails ends the bench non-zero.
// Run: npx tsx native/bench/egress.bench.ts   (BENCH_N, default 50)
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { buildNative } from "../build.mjs";
import { bpfStatus, launch, type SandboxPolicyInput } from "../index";
import { reportBench } from "../../tools/lib/bench-report";
import { assertLaunched } from "./checked-launch";

buildNative({ quiet: true });
mkdirSync("/tmp/leasehold-bench", { recursive: true });
const wd = mkdtempSync("/tmp/leasehold-bench/wd-");
const N = Number(process.env.BENCH_N ?? 50);
const base: SandboxPolicyInput = {
  argv: ["/bin/true"], workdir: wd, memory_bytes: 128 << 20, cpus: 1, pids_max: 32, timeout_ms: 10_000,
  env: { PATH: "/usr/bin:/bin" },
};
const variants: [string, SandboxPolicyInput][] = [
  ["network none", base],
  ["exec_kernel (BPF lease, no network path)", { ...base, exec_kernel: true }],
  ["network egress (BPF lease + veth path)", {
    ...base, network: { egress: ["192.0.2.0/24:443"], hosts: [{ name: "api.example.test", addresses: ["192.0.2.10"] }] },
  }],
];
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!; };

try {
  const st = bpfStatus();
  if (st.tier === "C") throw new Error(`BPF tier C here (${st.detail}): egress leases cannot launch`);
  for (const [name, p] of variants) for (let i = 0; i < 5; i++) assertLaunched(name, await launch(p)); // warm-up
  const times = variants.map(() => [] as number[]);
  const setup = variants.map(() => [] as number[]);
  for (let i = 0; i < N; i++) {
    for (let v = 0; v < variants.length; v++) {
      const t = performance.now();
      const r = await launch(variants[v]![1]);
      times[v]!.push(performance.now() - t);
      assertLaunched(variants[v]![0], r);
      setup[v]!.push(r.timing.setup_ms);
    }
  }
  console.log(`egress launch cost — ${new Date().toISOString()}, BPF tier ${st.tier}, ${N} runs each, alternating, node ${process.version}`);
  variants.forEach(([name], v) => console.log(
    `${name.padEnd(44)} launch p50 ${pct(times[v]!, 50).toFixed(2).padStart(7)} ms  p90 ${pct(times[v]!, 90).toFixed(2).padStart(7)} ms   setup p50 ${pct(setup[v]!, 50).toFixed(2).padStart(6)} ms`));
  const p50 = (v: number) => pct(times[v]!, 50);
  console.log(`egress − none: +${(p50(2) - p50(0)).toFixed(2)} ms p50; egress − exec_kernel (the network path alone): +${(p50(2) - p50(1)).toFixed(2)} ms p50`);
  reportBench("egress", { runs: N, tier: st.tier, node: process.version }, [
    { name: "launch p50, network none", value: p50(0), unit: "ms" },
    { name: "launch p50, exec_kernel (BPF lease, no network path)", value: p50(1), unit: "ms", baseline: "launch p50, network none", ratio: p50(1) / p50(0) },
    { name: "launch p50, network egress", value: p50(2), unit: "ms", baseline: "launch p50, network none", ratio: p50(2) / p50(0) },
    { name: "network path alone (egress − exec_kernel) p50", value: p50(2) - p50(1), unit: "ms" },
  ]);
} finally {
  rmSync(wd, { recursive: true, force: true });
}
