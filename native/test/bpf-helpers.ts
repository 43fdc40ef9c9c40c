// Shared by the BPF tests: the tier probe (a test FAILS on tier C unless the
// kernel really lacks the program types, then its title names the skip) and
// throwaway cgroup v2 directories for processes placed in a lease directly.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { bpfStatus, type BpfStatus } from "../index";
import { setupNative } from "./helpers";

/** What the kernel lacks for tier B, per bpftool's probe; "" when nothing is missing. */
function missingProgramTypes(): string {
  let out = "";
  try { out = execFileSync("bpftool", ["feature", "probe", "kernel"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }); } catch { return ""; }
  const missing = ["cgroup_sock_addr", "cgroup_sock", "tracing"].filter((t) => new RegExp(`program_type ${t} is NOT available`).test(out));
  return missing.length ? `kernel lacks BPF program types ${missing.join(", ")}` : "";
}

export interface TierProbe { status: BpfStatus; skip: string }
/** Builds, detects once; `skip` is non-empty only when the kernel itself cannot run tier B. */
export function probeTier(): TierProbe {
  setupNative();
  const status = bpfStatus();
  return { status, skip: status.tier === "C" ? missingProgramTypes() : "" };
}

/** The cgroup2 mount, from mountinfo. */
export function cgroup2Mount(): string {
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [pre, post] = line.split(" - ");
    if (pre && post?.startsWith("cgroup2 ")) return pre.split(" ")[4] ?? "";
  }
  throw new Error("no cgroup2 mount");
}

/** A throwaway lease directory two levels below the cgroup2 mount (a parent, then the lease). */
export function makeTestCgroup(tag: string): { parent: string; lease: string; remove(): void } {
  const parent = join(cgroup2Mount(), `leasehold-bpftest.${process.pid}.${tag}`);
  const lease = join(parent, "lease");
  mkdirSync(lease, { recursive: true });
  return {
    parent, lease,
    remove() {
      for (const d of [join(lease, "nested"), lease, parent]) { try { rmdirSync(d); } catch { /* absent */ } }
    },
  };
}
