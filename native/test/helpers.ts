// Shared setup for the native tests: build once, compile the probe workload,
// make workdirs, run one probe op in a sandbox.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildNative } from "../build.mjs";
import { launch, type LaunchResult, type SandboxPolicyInput } from "../index";

const here = dirname(fileURLToPath(import.meta.url));
// Separate checkouts testing side by side on one machine each set their own.
export const TEST_ROOT = process.env["LEASEHOLD_NATIVE_TEST_ROOT"] ?? "/tmp/leasehold-native-test";
export const BIN_DIR = join(TEST_ROOT, "bin");
export const PROBE = join(BIN_DIR, "probe");

export function setupNative(): void {
  buildNative({ quiet: true });
  mkdirSync(BIN_DIR, { recursive: true });
  chmodSync(TEST_ROOT, 0o755);
  chmodSync(BIN_DIR, 0o755);
  // Two native files set up at once (the serial group runs two at a time on more than two cores):
  // each compiles its own copy and renames it into place, so neither execs a
  // probe the other is half-way through writing.
  const own = `${PROBE}.${process.pid}`;
  execFileSync("gcc", ["-O1", "-o", own, join(here, "workloads", "probe.c")]);
  renameSync(own, PROBE);
}

export function makeWorkdir(): string {
  mkdirSync(TEST_ROOT, { recursive: true });
  const d = mkdtempSync(join(TEST_ROOT, "wd-"));
  chmodSync(d, 0o755);
  return d;
}

export function removeWorkdir(d: string): void {
  rmSync(d, { recursive: true, force: true });
}

export const basePolicy = (workdir: string): SandboxPolicyInput => ({
  argv: ["/bin/true"],
  workdir,
  memory_bytes: 128 << 20,
  cpus: 1,
  pids_max: 32,
  timeout_ms: 10_000,
  tmpfs_tmp_bytes: 8 << 20,
  env: { PATH: "/usr/bin:/bin" },
  ro_binds: [BIN_DIR],
  exec_allow: ["/usr/bin", "/bin", BIN_DIR],
});

/** Lease ids of every probe run, so a test can check their cgroups are gone. */
export const seenLeases: string[] = [];

export async function probe(workdir: string, op: string, arg = "", extra: Partial<SandboxPolicyInput> = {}): Promise<LaunchResult> {
  const r = await launch({ ...basePolicy(workdir), argv: [PROBE, op, ...(arg ? [arg] : [])], ...extra });
  seenLeases.push(r.lease_id);
  return r;
}
