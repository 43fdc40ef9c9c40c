/**
 * Launches a bench times, checked: a sample counts only when the workload
 * really ran. A launch whose workload exited non-zero, was killed, failed to
 * exec, printed something unexpected, or left its workdir with another owner
 * throws, so the bench exits non-zero instead of timing a failure (a /bin/true
 * that exits 127 is faster than one that runs).
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { launch, type LaunchOptions, type LaunchResult, type SandboxPolicyInput } from "../index";

const BENCH_DIR = "/tmp/leasehold-bench";

/** A fresh root-owned 0700 workdir; each concurrent launch needs its own (launch() chowns it to its lease uid for the run). */
export function benchWorkdir(): string {
  mkdirSync(BENCH_DIR, { recursive: true });
  return mkdtempSync(`${BENCH_DIR}/wd-`);
}

export function removeWorkdir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface Expected {
  /** Default 0. */
  exitCode?: number;
  /** Exact stdout; default empty. */
  stdout?: string;
  /** Exact stderr; default empty. */
  stderr?: string;
}

/** Throws naming `what` when `r` is not the expected run. */
export function assertLaunched(what: string, r: LaunchResult, expected: Expected = {}): void {
  const problems: string[] = [];
  if (r.exec_error !== null) problems.push(`exec failed: ${r.exec_error}`);
  if (r.exit.code !== (expected.exitCode ?? 0) || r.exit.signal !== null || r.exit.timed_out) problems.push(`exit ${JSON.stringify(r.exit)}`);
  const out = r.stdout.toString("utf8");
  const err = r.stderr.toString("utf8");
  if (out !== (expected.stdout ?? "")) problems.push(`stdout ${JSON.stringify(out.slice(0, 200))}`);
  if (err !== (expected.stderr ?? "")) problems.push(`stderr ${JSON.stringify(err.slice(0, 200))}`);
  if (problems.length > 0) throw new Error(`${what}: the workload did not run as expected (${problems.join("; ")}) — a failed launch is not a sample`);
}

/**
 * One checked launch of `policy`, timed launch() call to result; the workdir's
 * owner is checked back to what it was before (launch() restores it).
 */
export async function timedCheckedLaunch(what: string, policy: SandboxPolicyInput, options?: LaunchOptions, expected?: Expected): Promise<number> {
  const before = statSync(policy.workdir);
  const t = performance.now();
  const r = await launch(policy, options);
  const ms = performance.now() - t;
  assertLaunched(what, r, expected);
  const after = statSync(policy.workdir);
  if (after.uid !== before.uid || after.gid !== before.gid) {
    throw new Error(`${what}: workdir ${policy.workdir} left owned by ${after.uid}:${after.gid} (was ${before.uid}:${before.gid})`);
  }
  return ms;
}

/** `total` checked launches, `inFlight` at a time, each in its own workdir: launches per second. */
export async function checkedLaunchRate(what: string, policy: Omit<SandboxPolicyInput, "workdir">, total: number, inFlight: number, options?: LaunchOptions): Promise<number> {
  const dirs = Array.from({ length: total }, () => benchWorkdir());
  let next = 0;
  const t = performance.now();
  try {
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (next < total) {
        const dir = dirs[next++]!;
        await timedCheckedLaunch(what, { ...policy, workdir: dir }, options);
      }
    }));
    return total / ((performance.now() - t) / 1000);
  } finally {
    for (const d of dirs) removeWorkdir(d);
  }
}
