/**
 * What a launch returns: the addon's raw result and the helper's read-back
 * lines turned into the typed LaunchResult, with a `limitations` line for
 * every value that could not be read back.
 */
import { readlinkSync } from "node:fs";
import { counter, errnoName, num, signalNames, unenforceable, type NativeCgroup, type NativeCounterName, type NativeResult } from "./addon";
import { bpfDenial, bpfStatus, type BpfDenial } from "./bpf";
import type { SandboxPolicy } from "./policy";

export interface LaunchResult {
  lease_id: string;
  exit: {
    code: number | null;
    signal: string | null;
    timed_out: boolean;
    /** the run was stopped by its caller (LaunchOptions.signal): the lease's cgroup was killed; absent when not */
    cancelled?: true;
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
  /** Host paths bound at /host/<label>, each with the mount options read back from the lease's
   * mountinfo (the helper refuses to start a workload whose options lack what its mode needs).
   * Optional in the type only so results recorded before it existed still type-check. */
  host_paths?: Array<{ label: string; mode: "ro" | "rw"; options: string[] }>;
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

/** "K hp <label> <options>" lines, in the policy's order; a label not read back is not listed. */
function hostPathsOf(readback: string, policy: SandboxPolicy): NonNullable<LaunchResult["host_paths"]> {
  const read = new Map<string, string[]>();
  for (const line of readback.split("\n")) {
    const m = /^hp ([a-z][a-z0-9_-]{0,31}) (\S+)$/.exec(line);
    if (m) read.set(m[1] as string, (m[2] as string).split(","));
  }
  return policy.host_paths.flatMap((h) => {
    const options = read.get(h.label);
    return options === undefined ? [] : [{ label: h.label, mode: h.mode, options }];
  });
}

const hostNs = new Map<string, string>();
function hostNamespace(name: string): string {
  let v = hostNs.get(name);
  if (v === undefined) { v = readlinkSync(`/proc/self/ns/${name}`); hostNs.set(name, v); }
  return v;
}

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

/** What launch() knows of the run besides the addon's result. */
export interface LaunchRun {
  policy: SandboxPolicy;
  lease_id: string;
  started_at: Date;
  ended_at: Date;
  /** the RLIMIT_NOFILE the helper was asked to set */
  nofile: number;
  /** the lease ran under the BPF programs (egress or exec_kernel) */
  bpf_used: boolean;
}

/** The result of a launch whose containment held (native.failed is false). */
export function launchResult(native: NativeResult, run: LaunchRun): LaunchResult {
  const rb = parseReadback(native.readback);
  const cg = native.cgroup;
  const limitations: string[] = [];
  const memsw = num(cg.memswLimit);
  if (!memsw) limitations.push("memory+swap limit not available (no memsw accounting)");
  if (!cg.withdrawnEmpty) limitations.push("lease cgroup could not be verified empty");
  for (const u of cg.unread) limitations.push(unreadCounterLimitation(u, cg.hierarchy));
  const tmpBytes = rb.get("tmp_bytes");
  const tmpInodes = rb.get("tmp_inodes");
  const throwaway = tmpBytes !== undefined && tmpInodes !== undefined ? { tmp_bytes: Number(tmpBytes), tmp_inodes: Number(tmpInodes) } : null;
  if (!throwaway) limitations.push("throwaway writes (/tmp) not measured: the sandbox's PID 1 did not report them");
  const [nofileSoft, nofileHard] = (rb.get("nofile") ?? "").split(" ").map(Number);
  const nofileRead = nofileSoft !== undefined && nofileSoft > 0 && nofileSoft === nofileHard && nofileSoft <= run.nofile ? nofileSoft : null;
  if (nofileRead === null) limitations.push(`enforcement.nofile not read back within ${run.nofile} (read ${JSON.stringify(rb.get("nofile") ?? null)}): the workload's open-file limit is unknown`);
  const network = run.policy.network === "none" ? null : leaseNetwork(rb, run.policy.network.hosts ?? []);
  if (network && network.ipv6 && !network.forwarding.ipv6)
    limitations.push(`IPv6 reaches only the host end (${network.ipv6.gateway}): this kernel has no per-interface IPv6 forwarding (force_forwarding, Linux 6.17); beyond it needs the operator's net.ipv6.conf.all.forwarding=1`);
  const bst = bpfStatus();
  const bpfDenials = native.bpf.denials.map(bpfDenial);
  const bpfDropped = num(native.bpf.dropped);
  if (run.bpf_used && !native.bpf.withdrawn) limitations.push("BPF lease kept attached (its cgroup was not verified empty): its denials were not collected");
  if (bpfDropped > 0) limitations.push(`${bpfDropped} BPF denial record(s) lost (ring buffer full or per-lease bound reached)`);
  return {
    lease_id: run.lease_id,
    exit: exitOf(native),
    exec_error: native.execErrno ? errnoName(native.execErrno) : null,
    stdout: native.stdout,
    stderr: native.stderr,
    stdout_bytes: num(native.stdoutTotal),
    stderr_bytes: num(native.stderrTotal),
    stdout_truncated: num(native.stdoutTotal) > native.stdout.length,
    stderr_truncated: num(native.stderrTotal) > native.stderr.length,
    timing: {
      started_at: run.started_at.toISOString(),
      ended_at: run.ended_at.toISOString(),
      wall_ms: native.wallMs,
      setup_ms: native.setupMs,
      cpu_ms: Math.round(native.cpuUserMs + native.cpuSysMs),
    },
    enforcement: enforcementOf(rb, cg, memsw, nofileRead),
    host_paths: hostPathsOf(native.readback, run.policy),
    network,
    cgroup_stats: cgroupStatsOf(cg),
    withdrawal: { verified_empty: cg.withdrawnEmpty, removed: cg.withdrawnRemoved },
    throwaway_writes: throwaway,
    bpf: { tier: bst.tier, object_sha256: bst.object_sha256, enforced: native.bpf.enforced, denials: bpfDenials, denials_dropped: bpfDropped },
    limitations,
  };
}

function exitOf(native: NativeResult): LaunchResult["exit"] {
  const oomKill = counter(native.cgroup.oomKill);
  const pidsEventsMax = counter(native.cgroup.pidsEventsMax);
  return {
    code: native.reportedExit && native.termSignal === 0 ? native.exitCode : null,
    signal: native.termSignal ? (signalNames.get(native.termSignal) ?? `SIG${native.termSignal}`) : null,
    timed_out: native.timedOut,
    ...(native.cancelled ? { cancelled: true as const } : {}),
    oom_killed: oomKill === null ? null : oomKill > 0,
    pids_exhausted: pidsEventsMax === null ? null : pidsEventsMax > 0,
  };
}

/** The enforcement values read back: namespaces (those that differ from this process's), ids, limits, filters. */
function enforcementOf(rb: Map<string, string>, cg: NativeCgroup, memsw: number, nofile: number | null): LaunchResult["enforcement"] {
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
  const landlockAbi = Number(rb.get("landlock_abi") ?? "0");
  const netnsOwner = rb.get("netns_owner_init");
  return {
    namespaces,
    uid: idPair(rb.get("uid_map"), rb.get("Uid")),
    gid: idPair(rb.get("gid_map"), rb.get("Gid")),
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
    nofile,
  };
}

function cgroupStatsOf(cg: NativeCgroup): LaunchResult["cgroup_stats"] {
  const throttledNs = counter(cg.cpuThrottledNs);
  return {
    oom_kill: counter(cg.oomKill), memory_failcnt: counter(cg.memoryFailcnt), memory_max_usage: counter(cg.memoryMaxUsage),
    pids_events_max: counter(cg.pidsEventsMax), cpu_nr_periods: counter(cg.cpuNrPeriods), cpu_nr_throttled: counter(cg.cpuNrThrottled),
    cpu_throttled_ms: throttledNs === null ? null : Math.round(throttledNs / 1e6),
  };
}
