/**
 * What both end-to-end benches print beside their figures: the sandbox
 * launch alone, measured in the same run, and one way to summarise samples.
 * Every launch is checked (native/bench/checked-launch.ts): a baseline whose
 * /bin/true did not run throws, so the bench exits non-zero instead of
 * dividing by the time of a failure.
 */
import type { SandboxPolicyInput } from "../../native/index";
import { benchWorkdir, checkedLaunchRate, removeWorkdir, timedCheckedLaunch } from "../../native/bench/checked-launch";

export function stats(samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
  return `p50 ${q(0.5).toFixed(1)} ms  p99 ${q(0.99).toFixed(1)} ms  (n=${s.length})`;
}

const TRUE_POLICY: Omit<SandboxPolicyInput, "workdir"> = { argv: ["/bin/true"], memory_bytes: 512 << 20, cpus: 1, pids_max: 128, timeout_ms: 10_000 };

/** `n` checked launches of /bin/true, one after another in a throwaway workdir; milliseconds each. */
export async function measureBareLaunches(n: number): Promise<number[]> {
  const ws = benchWorkdir();
  try {
    const bare: number[] = [];
    for (let i = 0; i < n; i += 1) bare.push(await timedCheckedLaunch("sandbox launch baseline (/bin/true)", { ...TRUE_POLICY, workdir: ws }));
    return bare;
  } finally {
    removeWorkdir(ws);
  }
}

/** `n` checked launches of /bin/true, `inFlight` at a time, each in its own workdir: the launcher's own rate (launches/s). */
export function measureConcurrentLaunchRate(n: number, inFlight: number): Promise<number> {
  return checkedLaunchRate(`sandbox launch baseline (/bin/true, ${inFlight} in flight)`, TRUE_POLICY, n, inFlight);
}
