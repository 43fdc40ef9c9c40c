/**
 * The BPF tier (bpf/): which tier this process enforces, the exec allow-list
 * compiled from a policy, leases the caller manages put under the programs,
 * and the denials the programs report.
 */
import { lstatSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { LeaseholdError } from "../server/trust";
import { errnoName, loadAddon, num, unenforceable, type NativeDenial } from "./addon";
import { addressText, BPF_DENIAL_KINDS, packEgressRules, packExecFiles } from "./bpf-abi";
import { parseAddressRule, type SandboxPolicy } from "./policy";

export interface BpfStatus {
  /** "A": BPF-LSM hooks; "B": cgroup socket hooks + exec kill; "C": neither (Landlock + seccomp + empty netns) */
  tier: "A" | "B" | "C";
  /** SHA-256 of the BPF object that enforces the tier (null for C) */
  object_sha256: string | null;
  /** what was tried and why a stronger tier was refused */
  detail: string;
}

let bpfCache: BpfStatus | undefined;
/**
 * The BPF tier this process enforces, detected once (cached): tier A only when `bpf` is an active
 * LSM, the LSM programs load and a self-test in a throwaway cgroup is really denied; else tier B
 * when its programs load and the same self-test passes; else C. The first call loads the programs
 * (~0.4 s); nothing is pinned, everything goes when the process exits. `LEASEHOLD_BPF_TIER`
 * ("B" or "C") caps the tier for the whole process (read at that first call).
 */
export function bpfStatus(): BpfStatus {
  if (bpfCache) return bpfCache;
  // An operator (or a test) may cap the tier, never raise it: a weaker tier only refuses more.
  const cap = process.env["LEASEHOLD_BPF_TIER"];
  const r = loadAddon().bpfStatus(cap === "A" || cap === "B" || cap === "C" ? cap : undefined);
  const tier = r.tier === "A" || r.tier === "B" ? r.tier : "C";
  bpfCache = { tier, object_sha256: tier === "C" || !r.objectSha256 ? null : r.objectSha256, detail: r.detail };
  return bpfCache;
}

/** A policy the BPF programs must guard: egress (exec + network) or exec_kernel (exec only). */
export function needsBpf(policy: SandboxPolicy): boolean {
  return policy.network !== "none" || policy.exec_kernel === true;
}

export const MAX_EXEC_ALLOW_FILES = 65_536;
/** Where an inside path of `exec_allow` is on the host: the workspace is bound at /work, `ro_binds`
 * at their own path (also below /tmp), the rest of the sandbox's /tmp is a fresh tmpfs (nothing there
 * when the lease starts), system directories at the same path. */
function hostPathOf(policy: SandboxPolicy, inside: string): string | null {
  const within = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
  if (within(inside, "/work")) return policy.workdir + inside.slice("/work".length);
  if (policy.ro_binds.some((r) => within(inside, r))) return inside;
  if (within(inside, "/tmp")) return null;
  return inside;
}

/**
 * Every regular file below the policy's exec_allow directories, recursively, as (st_dev, ino):
 * the kernel allow-list. Symbolic links inside are not followed (their targets are judged by
 * their own place). More than MAX_EXEC_ALLOW_FILES files: UNENFORCEABLE (the map is bounded).
 */
export function compileExecAllowList(policy: SandboxPolicy): { dev: bigint; ino: bigint }[] {
  const seen = new Map<string, { dev: bigint; ino: bigint }>();
  const visitedDirs = new Set<string>();
  const walk = (dir: string, depth: number) => {
    if (depth > 64) return;
    let st;
    try { st = statSync(dir, { bigint: true }); } catch { return; }
    const key = `${st.dev}:${st.ino}`;
    if (!st.isDirectory() || visitedDirs.has(key)) return;
    visitedDirs.add(key);
    let names: string[];
    try { names = readdirSync(dir); } catch { return; }
    for (const name of names) {
      const p = join(dir, name);
      let l;
      try { l = lstatSync(p, { bigint: true }); } catch { continue; }
      if (l.isDirectory()) walk(p, depth + 1);
      else if (l.isFile()) {
        seen.set(`${l.dev}:${l.ino}`, { dev: l.dev, ino: l.ino });
        if (seen.size > MAX_EXEC_ALLOW_FILES)
          throw unenforceable(`exec_allow holds more than ${MAX_EXEC_ALLOW_FILES} files (at ${dir}); the kernel allow-list is bounded`, { stage: "bpf" });
      }
    }
  };
  for (const d of policy.exec_allow) {
    const host = hostPathOf(policy, d);
    if (host !== null) walk(host, 0);
  }
  return [...seen.values()];
}

/** The addon's record sizes for the packed lh_bpf_rule / lh_bpf_file (bpf/lease_abi.test.ts compares them). */
export function bpfAbiSizes(): { rule: number; file: number } {
  return loadAddon().bpfAbi();
}

/** Run count and total run time of each enforcing program (they grow only while kernel.bpf_stats_enabled is 1). */
export function bpfProgramStats(): { name: string; run_cnt: number; run_time_ns: number }[] {
  return loadAddon().bpfProgramStats().map((p) => ({ name: p.name, run_cnt: num(p.runCnt), run_time_ns: num(p.runTimeNs) }));
}

export interface BpfLeaseHandle {
  /** Only once the cgroup holds no process: detaches, deletes the entries, returns the denials. */
  withdraw(): { denials: BpfDenial[]; dropped: number };
}

/**
 * Puts a cgroup v2 directory the caller manages (tests, benchmarks) under the lease programs,
 * exactly as launch() does for its own leases. `exec`: the allowed files (exec enforced when
 * given); `egress`: the allowed destinations (network enforced when given). Needs tier A or B.
 */
export function addBpfLease(cgroupPath: string, opts: { exec?: { dev: bigint; ino: bigint }[]; egress?: readonly string[] }): BpfLeaseHandle {
  const a = loadAddon();
  if (bpfStatus().tier === "C") throw unenforceable(`BPF lease on tier C: ${bpfStatus().detail}`);
  const rules = (opts.egress ?? []).map((t) => {
    const r = parseAddressRule(t);
    if (!r) throw new LeaseholdError("INVALID_ARGUMENT", `not a canonical egress rule: ${t}`, { tier: "guest" });
    return r;
  });
  let handle: object | null;
  try {
    handle = a.bpfLeaseAdd({
      cgroupPath, cgroupId: statSync(cgroupPath, { bigint: true }).ino,
      exec: packExecFiles(opts.exec ?? []), egress: packEgressRules(rules),
      execEnforced: opts.exec !== undefined, netEnforced: opts.egress !== undefined,
    });
  } catch (e) {
    throw unenforceable((e as Error).message, { stage: "bpf", errno: errnoName(Number((e as { errno?: number }).errno ?? 0)) });
  }
  return {
    withdraw() {
      if (handle === null) throw new Error("BPF lease already withdrawn");
      const r = a.bpfLeaseWithdraw(handle);
      handle = null;
      return { denials: r.denials.map(bpfDenial), dropped: num(r.dropped) };
    },
  };
}

/** One denial the lease's BPF programs made, from the ring buffer. */
export interface BpfDenial {
  kind: "exec" | "connect" | "sendmsg" | "socket" | "file";
  pid: number;
  comm: string;
  /** connect/sendmsg: canonical text of the destination */
  address?: string;
  port?: number;
  protocol?: "tcp" | "udp";
  /** connect/sendmsg: 4 or 6; socket: the AF_* number */
  family?: number;
  /** socket: the SOCK_* type and protocol number that were refused */
  socket_type?: number;
  socket_protocol?: number;
  /** exec/file: the image's device (stat() encoding) and inode */
  dev?: number;
  ino?: number;
}

export function bpfDenial(d: NativeDenial): BpfDenial {
  const kind = BPF_DENIAL_KINDS[d.kind as keyof typeof BPF_DENIAL_KINDS] ?? "exec";
  const base = { kind, pid: d.pid, comm: d.comm };
  if (kind === "connect" || kind === "sendmsg") {
    const protocol = d.proto === 6 ? "tcp" as const : d.proto === 17 ? "udp" as const : undefined;
    return { ...base, address: addressText(d.family, d.addr), port: d.port, family: d.family, ...(protocol ? { protocol } : {}) };
  }
  if (kind === "socket") return { ...base, family: d.family, socket_type: d.proto, socket_protocol: d.port };
  return { ...base, dev: num(d.dev), ino: num(d.ino) };
}
