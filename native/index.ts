/**
 * Leasehold's sandbox launcher, typed. Only `agent-guest/` may import this
 * (the Next app must never load the addon). Fail closed: a policy this host
 * cannot enforce is refused with UNENFORCEABLE and the reason — never run
 * weaker. Values under `enforcement` are read back from the kernel.
 */
import { closeSync, constants as fsConstants, existsSync, fchownSync, fstatSync, lstatSync, openSync, readFileSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { constants as osConstants } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { LeaseholdError } from "../server/trust";
import { parseEgressRule, type AddressEgressRule } from "../server/trust/egress";

/** An address rule (CIDR:port) in canonical text; a name rule is resolved by the guest before it reaches a sandbox. */
function parseAddressRule(text: string): AddressEgressRule | undefined {
  const rule = parseEgressRule(text);
  return rule?.kind === "address" ? rule : undefined;
}
import { addressText, BPF_DENIAL_KINDS, packEgressRules, packExecFiles } from "./bpf-abi";
import { projectPath } from "../common/paths/index";

// Found from the checkout root, not from this file: the guest also runs
// compiled into dist/, where a path relative to the module would miss.
const releaseDir = projectPath("native", "build", "Release");
export const HELPER_PATH = join(releaseDir, "leasehold-sandbox");

/** A post-run cgroup counter; null when it could not be read (then listed in `unread`). */
type NativeCounter = number | bigint | null;
type NativeCounterName = "oomKill" | "memoryFailcnt" | "memoryMaxUsage" | "pidsEventsMax" | "cpuNrPeriods" | "cpuNrThrottled" | "cpuThrottledNs";
interface NativeCgroup extends Record<NativeCounterName, NativeCounter> {
  memoryPath: string; pidsPath: string; cpuPath: string; v2Path: string; v2Id: number | bigint; hierarchy: "v1" | "v2";
  memoryLimit: number | bigint; memswLimit: number | bigint; pidsMax: number | bigint;
  cpuQuotaUs: number | bigint; cpuPeriodUs: number | bigint;
  /** the counters that could not be read: file, line (null: the whole file) and errno */
  unread: { counter: NativeCounterName; file: string; key: string | null; errno: number }[];
  withdrawnEmpty: boolean; withdrawnRemoved: boolean;
}
interface NativeResult {
  failed: boolean; failStage: string; failErrno: number; failMessage: string; execErrno: number;
  reportedExit: boolean; exitCode: number; termSignal: number; timedOut: boolean; helperStatus: number;
  stdout: Buffer; stdoutTotal: number; stderr: Buffer; stderrTotal: number; readback: string;
  bpf: { enforced: boolean; withdrawn: boolean; dropped: number | bigint; denials: NativeDenial[] };
  sandboxPid: number; wallMs: number; setupMs: number; cpuUserMs: number; cpuSysMs: number; cgroup: NativeCgroup;
}
interface NativeAddon {
  launch(req: {
    helper: string; leaseId: string; config: Buffer; stdin: Buffer; stdoutMax: number; stderrMax: number;
    timeoutMs: number; memoryBytes: number; pidsMax: number; cpuQuotaUs: number; cpuPeriodUs: number;
    onProgress?: (stdoutTotal: number | bigint, stderrTotal: number | bigint) => void; progressEveryMs: number;
    faultUnreadable?: string;
    netEgress: boolean;
    bpf?: { exec: Buffer; egress: Buffer; execEnforced: boolean; netEnforced: boolean };
  }): Promise<NativeResult>;
  bpfStatus(maxTier?: string): { tier: string; objectSha256: string; detail: string };
  bpfAbi(): { rule: number; file: number };
  bpfProgramStats(): { name: string; runCnt: number | bigint; runTimeNs: number | bigint }[];
  bpfLeaseAdd(spec: { cgroupPath: string; cgroupId: bigint; exec: Buffer; egress: Buffer; execEnforced: boolean; netEnforced: boolean }): object;
  bpfLeaseWithdraw(handle: object): { denials: NativeDenial[]; dropped: number | bigint };
  landlockAbi(): number;
  seccompAvailable(): boolean;
  sweepStaleLeases(): NativeSweep;
  leaseOwnerPrefix(): string;
  cgroupMode(): { mode: "v1" | "v2" | ""; why: string };
}
interface NativeDenial {
  kind: number; pid: number; family: number; proto: number; port: number; addr: Buffer;
  dev: number | bigint; ino: number | bigint; comm: string;
}
interface NativeSweep {
  removed: number; killed: number; liveOwn: number; liveOther: number; foreign: number;
  failures: { path: string; reason: string }[];
}

let addon: NativeAddon | undefined;
function loadAddon(): NativeAddon {
  if (!addon) {
    const file = join(releaseDir, "leasehold_native.node");
    if (!existsSync(file) || !existsSync(HELPER_PATH)) {
      throw new LeaseholdError("UNENFORCEABLE", "sandbox launcher is not built; run `node native/build.mjs`", {
        tier: "guest",
      });
    }
    addon = createRequire(import.meta.url)(file) as NativeAddon;
  }
  return addon;
}

const noNul = (s: string) => !s.includes("\0");
const absPath = z.string().min(1).max(4096).refine((s) => s.startsWith("/") && noNul(s) && !s.split("/").includes(".."), {
  message: "must be an absolute path without '..' or NUL",
});
const MiB = 1024 * 1024;

/** An address egress rule in its one canonical spelling (server/trust/egress.ts), e.g. "10.0.0.0/8:443".
 * Always with a prefix: a name rule is resolved by the guest before launch, never passed here. */
const egressRule = z.string().max(64).refine((s) => s.includes("/") && parseEgressRule(s)?.text === s, {
  message: "must be a canonical CIDR:port rule, e.g. 10.0.0.0/8:443 or [2001:db8::/32]:443 (names are resolved before launch)",
});
/** RFC 1123 host name, lower case (one spelling per name in the sandbox's /etc/hosts and the evidence). */
const hostName = z.string().max(253).regex(/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/, {
  message: "must be an RFC 1123 host name in lower case",
});
/** A single address in canonical text (dotted quad without leading zeros; RFC 5952 IPv6, hex groups
 * only — an IPv4-mapped address is written ::ffff:c000:201), the spelling of server/trust/egress.ts. */
export function canonicalHostAddress(text: string): string | undefined {
  const v6 = text.includes(":");
  const rule = v6 ? `[${text}/128]:1` : `${text}/32:1`;
  return parseEgressRule(rule)?.text === rule ? text : undefined;
}
const hostAddress = z.string().max(39).refine((s) => canonicalHostAddress(s) === s, {
  message: "must be one IPv4 or IPv6 address in canonical text",
});
/** Names the guest resolved (outside the sandbox, when the lease starts) → the sandbox's /etc/hosts. */
const hostsEntries = z
  .array(z.object({ name: hostName, addresses: z.array(hostAddress).min(1).max(32) }).strict())
  .max(64)
  .refine((h) => new Set(h.map((e) => e.name)).size === h.length, { message: "each name once" })
  .refine((h) => h.reduce((n, e) => n + e.addresses.length, 0) <= 256, { message: "at most 256 name/address pairs" });

/** A compiled sandbox policy (capability ∩ token scope ∩ request ∩ host ceiling). */
export const SandboxPolicy = z
  .object({
    argv: z.array(z.string().max(65536).refine(noNul)).min(1).max(256),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(65536).refine(noNul)).default({}),
    /** host path bound at /work inside; the lease uid owns it while an "rw" lease runs */
    workdir: absPath,
    /** "ro" (an observe lease): the workspace is a read-only bind (kernel MOUNT_ATTR_RDONLY) with a
     * read-only Landlock rule, so nothing the lease runs changes it; its writes go only to throwaway /tmp.
     * Absent means "rw" (optional rather than defaulted so policies compiled before it stay valid values). */
    workdir_access: z.enum(["rw", "ro"]).optional(),
    /** working directory: /work or a directory below it (the workspace is always bound at /work);
     * one that does not exist inside makes exec_error "ENOENT" */
    cwd: absPath.refine((s) => s === "/work" || s.startsWith("/work/"), { message: "must be /work or below it" }).default("/work"),
    stdin: z.union([z.string(), z.instanceof(Uint8Array)]).default(""),
    /** "none": a network namespace with loopback only. Egress: the same namespace plus one veth pair to the
     * host (native/README.md "Network path"); the allow-list is enforced by the BPF tier, and a lease whose
     * allow-list is not attached in the kernel never starts. `hosts` become the sandbox's /etc/hosts. */
    network: z
      .union([
        z.literal("none"),
        z.object({ egress: z.array(egressRule).min(1).max(256), hosts: hostsEntries.optional() }).strict(),
      ])
      .default("none"),
    /** exec allow-list enforced in the kernel too (BPF tier): only regular files that were below
     * `exec_allow` when the lease started may be exec'd, whatever Landlock allows. */
    exec_kernel: z.boolean().optional(),
    memory_bytes: z.number().int().min(8 * MiB).max(64 * 1024 * MiB),
    cpus: z.number().min(0.01).max(256),
    pids_max: z.number().int().min(2).max(65536),
    tmpfs_tmp_bytes: z.number().int().min(64 * 1024).max(16 * 1024 * MiB).default(64 * MiB),
    tmpfs_tmp_inodes: z.number().int().min(16).max(1_000_000).default(16384),
    timeout_ms: z.number().int().min(1).max(24 * 3600 * 1000),
    stdout_max_bytes: z.number().int().min(0).max(256 * MiB).default(MiB),
    stderr_max_bytes: z.number().int().min(0).max(256 * MiB).default(MiB),
    /** directories (inside paths) whose files may be executed; enforced by Landlock */
    exec_allow: z.array(absPath).max(64).default(["/usr/bin", "/bin"]),
    /** extra host paths bound read-only at the same path inside */
    ro_binds: z.array(absPath).max(64).default([]),
    landlock: z
      .object({
        required: z.boolean().default(true),
        min_abi: z.number().int().min(1).max(64).default(1),
        fs: z.array(z.object({ path: absPath, access: z.enum(["ro", "rw"]) }).strict()).max(64).default([]),
        tcp_connect: z.array(z.number().int().min(1).max(65535)).max(64).default([]),
        tcp_bind: z.array(z.number().int().min(1).max(65535)).max(64).default([]),
        /** signal + abstract unix socket scoping (ABI 6) */
        scope: z.boolean().default(true),
      })
      .strict()
      .default({ required: true, min_abi: 1, fs: [], tcp_connect: [], tcp_bind: [], scope: true }),
  })
  .strict();
export type SandboxPolicyInput = z.input<typeof SandboxPolicy>;
export type SandboxPolicy = z.output<typeof SandboxPolicy>;

export interface KernelProbe {
  landlock_abi: number;
  seccomp: boolean;
  user_namespaces: boolean;
  max_user_namespaces: number;
  cgroup: {
    v1_controllers: string[];
    v2_mount: string | null;
    v2_controllers: string[];
    /** where this launcher puts each limit: all three in the lease's v2 directory when this
     * process's cgroup2 directory offers memory, pids and cpu; else v1; null when neither */
    memory: "v1" | "v2" | null; pids: "v1" | "v2" | null; cpu: "v1" | "v2" | null;
    /** why the limits cannot be enforced here (when any of the above is null) */
    unavailable_reason: string | null;
  };
  root: boolean;
}

let probeCache: KernelProbe | undefined;
/** What this kernel offers, measured once (cached). */
export function probeKernel(): KernelProbe {
  if (probeCache) return probeCache;
  const a = loadAddon();
  const mountinfo = readFileSync("/proc/self/mountinfo", "utf8").split("\n");
  const v1 = new Set<string>();
  let v2: string | null = null;
  for (const line of mountinfo) {
    const [pre, post] = line.split(" - ");
    if (!pre || !post) continue;
    const mountPoint = pre.split(" ")[4] ?? "";
    const [fstype, , superOpts] = post.split(" ");
    if (fstype === "cgroup") {
      for (const o of (superOpts ?? "").split(",")) {
        if (["memory", "pids", "cpu", "cpuacct", "cpuset", "blkio", "devices", "freezer"].includes(o)) v1.add(o);
      }
    } else if (fstype === "cgroup2" && v2 === null) v2 = mountPoint;
  }
  const v2Controllers = v2 && existsSync(join(v2, "cgroup.controllers"))
    ? readFileSync(join(v2, "cgroup.controllers"), "utf8").trim().split(/\s+/).filter(Boolean)
    : [];
  let maxUserNs = 0;
  try { maxUserNs = Number(readFileSync("/proc/sys/user/max_user_namespaces", "utf8").trim()); } catch { /* absent */ }
  const mode = a.cgroupMode();
  const where = (c: string): "v1" | "v2" | null =>
    mode.mode === "v2" ? "v2" : mode.mode === "v1" && v1.has(c) && existsSync(`/sys/fs/cgroup/${c}`) ? "v1" : null;
  probeCache = {
    landlock_abi: a.landlockAbi(),
    seccomp: a.seccompAvailable(),
    user_namespaces: maxUserNs > 0,
    max_user_namespaces: maxUserNs,
    cgroup: {
      v1_controllers: [...v1].sort(),
      v2_mount: v2,
      v2_controllers: v2Controllers,
      memory: where("memory"),
      pids: where("pids"),
      cpu: where("cpu"),
      unavailable_reason: mode.mode ? null : mode.why,
    },
    root: process.getuid?.() === 0,
  };
  return probeCache;
}

function unenforceable(reason: string, details?: Record<string, unknown>): LeaseholdError {
  return new LeaseholdError("UNENFORCEABLE", `sandbox: ${reason}`, { tier: "guest", ...(details ? { details } : {}) });
}

/** Throws UNENFORCEABLE when any part of the policy cannot be enforced here. */
export function checkEnforceable(policy: SandboxPolicy, probe: KernelProbe = probeKernel(), bpf: () => BpfStatus = bpfStatus): void {
  if (!probe.root) throw unenforceable("the launcher must run as root to create namespaces and cgroups");
  if (needsBpf(policy)) {
    const st = bpf();
    if (st.tier === "C") {
      throw unenforceable(`${policy.network !== "none" ? "network egress allow-lists" : "a kernel exec allow-list (exec_kernel)"} need BPF tier A or B; this host is tier C: ${st.detail}`, { bpf_tier: "C" });
    }
  }
  if (!probe.seccomp) throw unenforceable("kernel has no seccomp filter support");
  if (!probe.user_namespaces) throw unenforceable("user namespaces are disabled (user.max_user_namespaces=0)");
  for (const c of ["memory", "pids", "cpu"] as const) {
    if (probe.cgroup[c] === null)
      throw unenforceable(`no cgroup ${c} controller this launcher can drive (${probe.cgroup.unavailable_reason ?? "v1 hierarchy missing"})`);
  }
  if (!probe.cgroup.v2_mount) throw unenforceable("no cgroup2 hierarchy for the lease's cgroup id");
  const ll = policy.landlock;
  const needsLandlock = ll.required || ll.fs.length > 0 || ll.tcp_connect.length > 0 || ll.tcp_bind.length > 0;
  if (needsLandlock && probe.landlock_abi < ll.min_abi)
    throw unenforceable(`Landlock ABI ${probe.landlock_abi} < required ${ll.min_abi}`);
  if ((ll.tcp_connect.length || ll.tcp_bind.length) && probe.landlock_abi < 4)
    throw unenforceable(`TCP port rules need Landlock ABI 4 (kernel has ${probe.landlock_abi})`);
  if (needsLandlock && ll.scope && probe.landlock_abi < 6)
    throw unenforceable(`signal/abstract-socket scoping needs Landlock ABI 6 (kernel has ${probe.landlock_abi})`);
}

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

function bpfDenial(d: NativeDenial): BpfDenial {
  const kind = BPF_DENIAL_KINDS[d.kind as keyof typeof BPF_DENIAL_KINDS] ?? "exec";
  const base = { kind, pid: d.pid, comm: d.comm };
  if (kind === "connect" || kind === "sendmsg") {
    const protocol = d.proto === 6 ? "tcp" as const : d.proto === 17 ? "udp" as const : undefined;
    return { ...base, address: addressText(d.family, d.addr), port: d.port, family: d.family, ...(protocol ? { protocol } : {}) };
  }
  if (kind === "socket") return { ...base, family: d.family, socket_type: d.proto, socket_protocol: d.port };
  return { ...base, dev: num(d.dev), ino: num(d.ino) };
}

export interface LaunchResult {
  lease_id: string;
  exit: {
    code: number | null;
    signal: string | null;
    timed_out: boolean;
    /** from the cgroup's OOM-kill counter; null when that counter could not be read (see `limitations`) — unknown, not "no" */
    oom_killed: boolean | null;
    /** from the cgroup's pids.events "max"; null when it could not be read (see `limitations`) */
    pids_exhausted: boolean | null;
  };
  /** errno name when execve of argv[0] failed inside the sandbox */
  exec_error: string | null;
  stdout: Buffer;
  stderr: Buffer;
  stdout_bytes: number;
  stderr_bytes: number;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  timing: { started_at: string; ended_at: string; wall_ms: number; setup_ms: number; cpu_ms: number };
  enforcement: {
    namespaces: string[];
    uid: { inside: number; host: number };
    gid: { inside: number; host: number };
    cgroup: {
      /** "v2": memory/pids/cpu written to the lease's cgroup2 directory; "v1": to v1 hierarchies */
      hierarchy: "v1" | "v2";
      memory_max: number;
      /** memory+swap: v1 memsw.limit_in_bytes, or v2 memory.max when memory.swap.max read back 0 */
      memsw_max: number | null;
      pids_max: number;
      cpu_quota_us: number;
      cpu_period_us: number;
      /** inode of the lease's cgroup v2 directory: the id bpf_get_current_cgroup_id() returns */
      cgroup_id: number;
    };
    seccomp: boolean;
    seccomp_filters: number;
    landlock_abi: number | null;
    no_new_privs: boolean;
    cap_effective: string;
    cap_bounding: string;
    /** the network namespace's owning user namespace is the host's (true before the lease netns had
     * its own owner; host uevents reach only such namespaces); null when not read back. Optional in the
     * type only so read-backs recorded before it existed still type-check; launch() always sets it. */
    netns_owner_init?: boolean | null;
    /** RLIMIT_NOFILE of the workload (soft = hard) read back, the lease's share of fs/file-max
     * (`leaseOpenFileLimit`); null when not read back. Optional in the type like the field above. */
    nofile?: number | null;
  };
  /** The lease's network path: null for network "none" (loopback only). Optional in the type only so
   * results recorded before it existed still type-check; launch() always sets it. */
  network?: LeaseNetwork | null;
  /** Counters read after the run; each null when it could not be read (a line in `limitations` names the file). */
  cgroup_stats: {
    oom_kill: number | null; memory_failcnt: number | null; memory_max_usage: number | null; pids_events_max: number | null;
    cpu_nr_periods: number | null; cpu_nr_throttled: number | null; cpu_throttled_ms: number | null;
  };
  withdrawal: { verified_empty: boolean; removed: boolean };
  /** What the workload left in its throwaway /tmp when it ended (discarded with the lease, nothing
   * of it reached the host); null when PID 1 could not measure it (e.g. killed at the deadline). */
  throwaway_writes: { tmp_bytes: number; tmp_inodes: number } | null;
  /** The host's BPF tier and, when this lease was under the programs (egress or exec_kernel), its denials. */
  bpf: {
    tier: "A" | "B" | "C";
    object_sha256: string | null;
    /** the lease's cgroup was guarded by the programs for the whole run */
    enforced: boolean;
    denials: BpfDenial[];
    /** denials lost: ring buffer full, beyond the per-lease bound, or not collected */
    denials_dropped: number;
  };
  limitations: string[];
}

/** An egress lease's network as the helper built and read it back (native/README.md "Network path"). */
export interface LeaseNetwork {
  /** who enforced the egress allow-list: "bpf" (the only value the helper is ever given) */
  guard: string;
  /** the host end of the lease's veth pair, lh<slot> (gone with the lease's network namespace) */
  host_interface: string;
  /** the sandbox's eth0 address with prefix, and its default gateway (the host end) */
  ipv4: { address: string; gateway: string };
  /** null when the host has no usable IPv6 (then the lease has none either) */
  ipv6: { address: string; gateway: string } | null;
  /** read back from the host end's sysctls: IPv4 forwarding on lh<slot> only; IPv6 per-interface
   * forwarding (force_forwarding, Linux >= 6.17) — false means IPv6 reaches only the host end unless the
   * operator enables global IPv6 forwarding */
  forwarding: { ipv4: boolean; ipv6: boolean };
  /** what the sandbox's /etc/hosts maps, besides localhost */
  hosts: { name: string; addresses: string[] }[];
}

export interface LaunchOptions {
  /** Chown the workdir (top directory only) to the lease uid for the run, restoring it after. Default true. */
  chownWorkdir?: boolean;
  /**
   * Called while the workload's output grows, at most every `progressEveryMs`
   * (default 1000), with the bytes written so far — counted before the
   * capture caps, so they can exceed what the result carries. Reports may be
   * dropped when this thread is busy; the result always has the final totals.
   */
  onProgress?: (progress: { stdout_bytes: number; stderr_bytes: number }) => void;
  progressEveryMs?: number;
  /**
   * Tests only: cgroup files (e.g. "memory.events") whose post-run counter
   * reads fail with EIO, to prove an unread counter is reported as unknown.
   * The addon refuses it unless LEASEHOLD_NATIVE_FAULT_INJECTION=1 was set in
   * the environment when it loaded (native/SECURITY.md).
   */
  testFaults?: { unreadable_cgroup_files: string[] };
}

const errnoNames = new Map<number, string>(Object.entries(osConstants.errno).map(([k, v]) => [v, k]));
const signalNames = new Map<number, string>(Object.entries(osConstants.signals).map(([k, v]) => [v, k]));
export const errnoName = (n: number): string => errnoNames.get(n) ?? `errno ${n}`;

/**
 * Every workload's environment, under the policy's own `env` (a name the
 * policy sets wins). HOME in the throwaway /tmp (git, pip and friends want
 * one); a UTF-8 locale (C.UTF-8 is built into glibc); Python that imports
 * nothing from the working directory or the script's directory
 * (PYTHONSAFEPATH, Python 3.11+) and writes no `__pycache__` into the
 * workspace: otherwise a `this.py` or `json.py` one job leaves in the
 * workspace runs inside every later `python3 -m this` / `-m json.tool` /
 * `-c` there. Nothing else reaches the workload — the helper executes it
 * with exactly this list — so the variables that make interpreters load code
 * (NODE_OPTIONS, NODE_PATH, PYTHONPATH, PYTHONSTARTUP, PYTHONHOME, PERL5LIB,
 * PERL5OPT, PERL_USE_UNSAFE_INC, RUBYLIB, RUBYOPT) are unset unless the
 * policy names them. Perl (5.26+) and Ruby keep `.` out of their search
 * paths by themselves; `node -e` resolves only what it is asked to require.
 */
export const SANDBOX_DEFAULT_ENV: Readonly<Record<string, string>> = Object.freeze({
  HOME: "/tmp",
  LANG: "C.UTF-8",
  PYTHONSAFEPATH: "1",
  PYTHONDONTWRITEBYTECODE: "1",
});

/**
 * The lease's RLIMIT_NOFILE. fs/file-max is one open-file table for the whole
 * host: once it is full every process without CAP_SYS_ADMIN gets ENFILE. A
 * lease holds at most RLIMIT_NOFILE × pids_max open files (each process its
 * own table; file descriptors in flight in Unix sockets count against the
 * same limit), and about 220 bytes of its memory cgroup each, so with the
 * agent's own limit (20,000 here) and pids_max ≥ 124 a 550 MB lease could
 * fill a 24 GB host's table. The limit keeps one lease within an eighth of
 * it. A pids_max so large that fewer than NOFILE_FLOOR files per process
 * would remain is refused: programs do not run with less.
 */
const LEASE_FILE_SHARE = 8;
export const NOFILE_FLOOR = 64;
export function leaseOpenFileLimit(pidsMax: number, fileMax: number = readFileMax()): number {
  const n = Math.floor(fileMax / (LEASE_FILE_SHARE * pidsMax));
  if (n < NOFILE_FLOOR) {
    throw unenforceable(`pids_max ${pidsMax} leaves fewer than ${NOFILE_FLOOR} open files per process within an eighth of this host's open-file table (fs/file-max ${fileMax}); lower pids_max`, { field: "pids_max", file_max: fileMax });
  }
  return n;
}
function readFileMax(): number {
  let text: string;
  try { text = readFileSync("/proc/sys/fs/file-max", "utf8"); } catch (e) {
    throw unenforceable(`cannot read fs/file-max to bound the lease's open files: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  // Often LONG_MAX (systemd's default), which a double rounds up: still far above any lease.
  const n = Number(text.trim());
  if (!Number.isFinite(n) || n <= 0) throw unenforceable(`fs/file-max is not a positive number: ${JSON.stringify(text.trim())}`);
  return n;
}

const LEASE_UID_BASE = 0x60000000;
const LEASE_UID_SLOTS = 1 << 24;
const uidsInUse = new Set<number>();
function allocateLeaseUid(): number {
  for (;;) {
    const uid = LEASE_UID_BASE + randomBytes(4).readUInt32BE(0) % LEASE_UID_SLOTS;
    if (!uidsInUse.has(uid)) { uidsInUse.add(uid); return uid; }
  }
}

function configBuffer(policy: SandboxPolicy, uid: number, nofile: number): Buffer {
  const parts: Buffer[] = [];
  const put = (k: string, v: string | number) => { parts.push(Buffer.from(`${k}\0${v}\0`)); };
  put("uid", uid); put("gid", uid);
  put("workdir", policy.workdir); put("cwd", policy.cwd); put("workdir_access", policy.workdir_access ?? "rw");
  put("net", policy.network === "none" ? "none" : "egress");
  if (policy.network !== "none") {
    for (const h of policy.network.hosts ?? []) for (const a of h.addresses) put("host", `${a} ${h.name}`);
  }
  put("tmp_bytes", policy.tmpfs_tmp_bytes); put("tmp_inodes", policy.tmpfs_tmp_inodes);
  put("nofile", nofile);
  const ll = policy.landlock;
  const useLandlock = ll.required || ll.fs.length > 0 || ll.tcp_connect.length > 0 || ll.tcp_bind.length > 0;
  put("landlock_abi", useLandlock ? ll.min_abi : 0);
  put("landlock_scope", useLandlock && ll.scope ? 1 : 0);
  // AF_INET/AF_INET6 only for a lease with egress or TCP ports (on its own loopback); else seccomp refuses them.
  put("sock_inet", policy.network !== "none" || ll.tcp_connect.length > 0 || ll.tcp_bind.length > 0 ? 1 : 0);
  for (const d of policy.exec_allow) put("ll_exec", d);
  for (const r of policy.ro_binds) put("ro", r);
  // /usr/local (the operator's own programs) is hidden in the lease unless the
  // policy names it: an exec_allow directory there, allowed by manifest and
  // host ceiling alike, is bound read-only on top of the empty /usr/local —
  // that directory only, not its neighbours.
  for (const d of policy.exec_allow) {
    if ((d === "/usr/local" || d.startsWith("/usr/local/")) && !policy.ro_binds.includes(d) && existsSync(d)) put("ro", d);
  }
  for (const r of ll.fs) put(r.access === "rw" ? "ll_rw" : "ll_ro", r.path);
  // An egress lease's helper leaves TCP connect to the BPF allow-list (landlock.c) and ignores these.
  for (const p of ll.tcp_connect) put("tcp_connect", p);
  for (const p of ll.tcp_bind) put("tcp_bind", p);
  for (const a of policy.argv) put("arg", a);
  for (const [k, v] of Object.entries({ ...SANDBOX_DEFAULT_ENV, ...policy.env })) put("env", `${k}=${v}`);
  return Buffer.concat(parts);
}

/** The egress path from the helper's read-back lines (`net_*`); every field must be there. */
function leaseNetwork(rb: Map<string, string>, hosts: { name: string; addresses: string[] }[]): LeaseNetwork {
  const pair = (v: string | undefined) => {
    const [address, gateway] = (v ?? "").split(" ");
    return address && gateway ? { address, gateway } : null;
  };
  const guard = rb.get("net_guard");
  const hostIf = rb.get("net_if");
  const ipv4 = pair(rb.get("net_ipv4"));
  if (!guard || !hostIf || !ipv4) throw unenforceable("egress lease ran but its network path was not read back");
  return {
    guard, host_interface: hostIf, ipv4, ipv6: pair(rb.get("net_ipv6")),
    forwarding: { ipv4: rb.get("net_forwarding4") === "1", ipv6: rb.get("net_forwarding6") === "1" },
    hosts: hosts.map((h) => ({ name: h.name, addresses: [...h.addresses] })),
  };
}

function parseReadback(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split("\n")) {
    const i = line.indexOf(" ");
    if (i > 0) m.set(line.slice(0, i), line.slice(i + 1).trim());
  }
  return m;
}

const hostNs = new Map<string, string>();
function hostNamespace(name: string): string {
  let v = hostNs.get(name);
  if (v === undefined) { v = readlinkSync(`/proc/self/ns/${name}`); hostNs.set(name, v); }
  return v;
}

const num = (v: number | bigint): number => (typeof v === "bigint" ? Number(v) : v);
const counter = (v: NativeCounter): number | null => (v === null ? null : num(v));

/** Each counter's field in `cgroup_stats`, and what its absence leaves unknown. */
const COUNTER_FIELDS: Record<NativeCounterName, { field: keyof LaunchResult["cgroup_stats"]; unknown?: string }> = {
  oomKill: { field: "oom_kill", unknown: "exit.oom_killed" },
  memoryFailcnt: { field: "memory_failcnt" },
  memoryMaxUsage: { field: "memory_max_usage" },
  pidsEventsMax: { field: "pids_events_max", unknown: "exit.pids_exhausted" },
  cpuNrPeriods: { field: "cpu_nr_periods" },
  cpuNrThrottled: { field: "cpu_nr_throttled" },
  cpuThrottledNs: { field: "cpu_throttled_ms" },
};
function unreadCounterLimitation(u: NativeCgroup["unread"][number], hierarchy: "v1" | "v2"): string {
  const f = COUNTER_FIELDS[u.counter];
  const what = u.key === null ? `cgroup ${hierarchy} ${u.file}` : `"${u.key}" from cgroup ${hierarchy} ${u.file}`;
  return `cgroup_stats.${f.field} not measured${f.unknown ? ` (${f.unknown} unknown)` : ""}: could not read ${what} (${errnoName(u.errno)})`;
}

export interface SweepResult {
  /** stale leases (left by dead launches) whose every cgroup directory was removed */
  removed: number;
  /** processes found inside stale leases and SIGKILLed */
  killed: number;
  /** leases left alone: live launches of this process, leases whose owner process is alive,
   * and `leasehold/` children not named by our scheme (or of another pid namespace) */
  untouched: { live_own: number; live_other: number; foreign: number };
  /** stale leases (or parts) that could not be emptied or removed, with the reason */
  failures: { path: string; reason: string }[];
}

/**
 * Finds lease cgroups left behind by launches whose process died (in every
 * hierarchy: v1 memory/pids/cpu and the cgroup2 mount), kills anything still
 * inside, verifies them empty and removes them. A lease directory is named
 * `lh.<pidns>.<pid>.<starttime>.<lease id>` under a `leasehold/` parent; only
 * those whose owner process is gone (or this process's own leftovers from a
 * failed withdrawal) are touched. Synchronous; runs once automatically before
 * this process's first launch.
 */
export function sweepStaleLeases(): SweepResult {
  const r = loadAddon().sweepStaleLeases();
  return {
    removed: r.removed,
    killed: r.killed,
    untouched: { live_own: r.liveOwn, live_other: r.liveOther, foreign: r.foreign },
    failures: r.failures,
  };
}

/** `lh.<pidns>.<pid>.<starttime>.`: the name prefix of every lease cgroup this process creates. */
export function leaseCgroupPrefix(): string {
  return loadAddon().leaseOwnerPrefix();
}

let startupSweep: SweepResult | undefined;
/** The sweep run before this process's first launch (undefined until then). */
export function startupSweepResult(): SweepResult | undefined {
  return startupSweep;
}

/**
 * Runs one workload in a fresh sandbox lease and withdraws the lease.
 * Rejects with INVALID_ARGUMENT for a malformed policy and UNENFORCEABLE when
 * any containment cannot be applied (then nothing of the workload ran).
 */
/** The addon's callback → the caller's; a throwing caller must not become an uncaught exception in the addon's callback. */
function progressRelay(onProgress: NonNullable<LaunchOptions["onProgress"]>): (out: number | bigint, err: number | bigint) => void {
  return (out, err) => {
    try {
      onProgress({ stdout_bytes: Number(out), stderr_bytes: Number(err) });
    } catch {
      // Progress is advisory; the launch and its result do not depend on it.
    }
  };
}

export async function launch(input: SandboxPolicyInput, options: LaunchOptions = {}): Promise<LaunchResult> {
  const parsed = SandboxPolicy.safeParse(input);
  if (!parsed.success) {
    throw new LeaseholdError("INVALID_ARGUMENT", `sandbox policy: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`, { tier: "guest" });
  }
  const policy = parsed.data;
  checkEnforceable(policy);
  const a = loadAddon();
  const useBpf = needsBpf(policy);
  const egress: AddressEgressRule[] = policy.network === "none" ? [] : policy.network.egress.map((r) => parseAddressRule(r) as AddressEgressRule);
  const bpfRequest = useBpf
    ? { exec: packExecFiles(compileExecAllowList(policy)), egress: packEgressRules(egress), execEnforced: true, netEnforced: policy.network !== "none" }
    : undefined;
  startupSweep ??= sweepStaleLeases();
  // Root changes the workdir's owner for the run and back: through a
  // descriptor opened without following a symlink, never by path, so a
  // workdir swapped for a link between the check and the chown is refused
  // instead of chowning whatever the link names.
  const nofile = leaseOpenFileLimit(policy.pids_max);
  let wdFd: number;
  try { wdFd = openSync(policy.workdir, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW); } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw unenforceable(code === "ENOENT" ? `workdir ${policy.workdir} does not exist` : `workdir ${policy.workdir} is not a directory (or is a symlink): ${code ?? "error"}`);
  }
  const wd = fstatSync(wdFd);

  const uid = allocateLeaseUid();
  const leaseId = `l${Date.now().toString(36)}${randomBytes(6).toString("hex")}`;
  // An observe lease writes nothing there: the workspace stays as it is, owner included.
  const chown = (options.chownWorkdir ?? true) && policy.workdir_access !== "ro";
  const startedAt = new Date();
  let native: NativeResult;
  try {
    if (chown) fchownSync(wdFd, uid, uid);
    const period = 100_000;
    native = await a.launch({
      helper: HELPER_PATH,
      leaseId,
      config: configBuffer(policy, uid, nofile),
      stdin: typeof policy.stdin === "string" ? Buffer.from(policy.stdin) : Buffer.from(policy.stdin),
      stdoutMax: policy.stdout_max_bytes,
      stderrMax: policy.stderr_max_bytes,
      timeoutMs: policy.timeout_ms,
      memoryBytes: policy.memory_bytes,
      pidsMax: policy.pids_max,
      cpuQuotaUs: Math.max(1000, Math.round(policy.cpus * period)),
      cpuPeriodUs: period,
      progressEveryMs: Math.max(10, Math.round(options.progressEveryMs ?? 1000)),
      ...(options.onProgress === undefined ? {} : { onProgress: progressRelay(options.onProgress) }),
      ...(options.testFaults === undefined ? {} : { faultUnreadable: options.testFaults.unreadable_cgroup_files.join(" ") }),
      netEgress: policy.network !== "none",
      ...(bpfRequest === undefined ? {} : { bpf: bpfRequest }),
    });
  } finally {
    if (chown) { try { fchownSync(wdFd, wd.uid, wd.gid); } catch { /* gone: nothing to restore */ } }
    closeSync(wdFd);
    uidsInUse.delete(uid);
  }
  const endedAt = new Date();
  if (native.failed) {
    throw unenforceable(`containment failed at ${native.failStage}: ${errnoName(native.failErrno)} (${native.failMessage})`, {
      stage: native.failStage, errno: errnoName(native.failErrno), lease_id: leaseId,
      withdrawn: native.cgroup.withdrawnEmpty && native.cgroup.withdrawnRemoved,
    });
  }
  const rb = parseReadback(native.readback);
  const limitations: string[] = [];
  const namespaces: string[] = [];
  for (const ns of ["user", "mnt", "pid", "net", "ipc", "uts", "cgroup"]) {
    const inside = rb.get(`ns_${ns}`);
    if (inside && inside !== hostNamespace(ns)) namespaces.push(ns);
  }
  const idPair = (map: string | undefined, status: string | undefined) => {
    const [inside, host] = (map ?? "").split(/\s+/).map(Number);
    const eff = Number((status ?? "").split(/\s+/)[1]);
    return { inside: Number.isFinite(eff) ? eff : -1, host: inside === eff && host !== undefined ? host : -1 };
  };
  const uidInfo = idPair(rb.get("uid_map"), rb.get("Uid"));
  const gidInfo = idPair(rb.get("gid_map"), rb.get("Gid"));
  const landlockAbi = Number(rb.get("landlock_abi") ?? "0");
  const cg = native.cgroup;
  const memsw = num(cg.memswLimit);
  if (!memsw) limitations.push("memory+swap limit not available (no memsw accounting)");
  if (!native.cgroup.withdrawnEmpty) limitations.push("lease cgroup could not be verified empty");
  for (const u of cg.unread) limitations.push(unreadCounterLimitation(u, cg.hierarchy));
  const oomKill = counter(cg.oomKill);
  const pidsEventsMax = counter(cg.pidsEventsMax);
  const throttledNs = counter(cg.cpuThrottledNs);
  const tmpBytes = rb.get("tmp_bytes");
  const tmpInodes = rb.get("tmp_inodes");
  const throwaway = tmpBytes !== undefined && tmpInodes !== undefined ? { tmp_bytes: Number(tmpBytes), tmp_inodes: Number(tmpInodes) } : null;
  if (!throwaway) limitations.push("throwaway writes (/tmp) not measured: the sandbox's PID 1 did not report them");
  const netnsOwner = rb.get("netns_owner_init");
  const [nofileSoft, nofileHard] = (rb.get("nofile") ?? "").split(" ").map(Number);
  const nofileRead = nofileSoft !== undefined && nofileSoft > 0 && nofileSoft === nofileHard && nofileSoft <= nofile ? nofileSoft : null;
  if (nofileRead === null) limitations.push(`enforcement.nofile not read back within ${nofile} (read ${JSON.stringify(rb.get("nofile") ?? null)}): the workload's open-file limit is unknown`);
  const network = policy.network === "none" ? null : leaseNetwork(rb, policy.network.hosts ?? []);
  if (network && network.ipv6 && !network.forwarding.ipv6)
    limitations.push(`IPv6 reaches only the host end (${network.ipv6.gateway}): this kernel has no per-interface IPv6 forwarding (force_forwarding, Linux 6.17); beyond it needs the operator's net.ipv6.conf.all.forwarding=1`);
  const bst = bpfStatus();
  const bpfDenials = native.bpf.denials.map(bpfDenial);
  const bpfDropped = num(native.bpf.dropped);
  if (useBpf && !native.bpf.withdrawn) limitations.push("BPF lease kept attached (its cgroup was not verified empty): its denials were not collected");
  if (bpfDropped > 0) limitations.push(`${bpfDropped} BPF denial record(s) lost (ring buffer full or per-lease bound reached)`);
  const signal = native.termSignal ? (signalNames.get(native.termSignal) ?? `SIG${native.termSignal}`) : null;
  return {
    lease_id: leaseId,
    exit: {
      code: native.reportedExit && native.termSignal === 0 ? native.exitCode : null,
      signal,
      timed_out: native.timedOut,
      oom_killed: oomKill === null ? null : oomKill > 0,
      pids_exhausted: pidsEventsMax === null ? null : pidsEventsMax > 0,
    },
    exec_error: native.execErrno ? errnoName(native.execErrno) : null,
    stdout: native.stdout,
    stderr: native.stderr,
    stdout_bytes: num(native.stdoutTotal),
    stderr_bytes: num(native.stderrTotal),
    stdout_truncated: num(native.stdoutTotal) > native.stdout.length,
    stderr_truncated: num(native.stderrTotal) > native.stderr.length,
    timing: {
      started_at: startedAt.toISOString(),
      ended_at: endedAt.toISOString(),
      wall_ms: native.wallMs,
      setup_ms: native.setupMs,
      cpu_ms: Math.round(native.cpuUserMs + native.cpuSysMs),
    },
    enforcement: {
      namespaces,
      uid: uidInfo,
      gid: gidInfo,
      cgroup: {
        hierarchy: cg.hierarchy,
        memory_max: num(cg.memoryLimit),
        memsw_max: memsw || null,
        pids_max: num(cg.pidsMax),
        cpu_quota_us: num(cg.cpuQuotaUs),
        cpu_period_us: num(cg.cpuPeriodUs),
        cgroup_id: num(cg.v2Id),
      },
      seccomp: rb.get("Seccomp") === "2",
      seccomp_filters: Number(rb.get("Seccomp_filters") ?? "0"),
      landlock_abi: landlockAbi > 0 ? landlockAbi : null,
      no_new_privs: rb.get("NoNewPrivs") === "1",
      cap_effective: rb.get("CapEff") ?? "",
      cap_bounding: rb.get("CapBnd") ?? "",
      netns_owner_init: netnsOwner === undefined ? null : netnsOwner === "1",
      nofile: nofileRead,
    },
    network,
    cgroup_stats: {
      oom_kill: oomKill, memory_failcnt: counter(cg.memoryFailcnt), memory_max_usage: counter(cg.memoryMaxUsage),
      pids_events_max: pidsEventsMax, cpu_nr_periods: counter(cg.cpuNrPeriods), cpu_nr_throttled: counter(cg.cpuNrThrottled),
      cpu_throttled_ms: throttledNs === null ? null : Math.round(throttledNs / 1e6),
    },
    withdrawal: { verified_empty: cg.withdrawnEmpty, removed: cg.withdrawnRemoved },
    throwaway_writes: throwaway,
    bpf: { tier: bst.tier, object_sha256: bst.object_sha256, enforced: native.bpf.enforced, denials: bpfDenials, denials_dropped: bpfDropped },
    limitations,
  };
}
