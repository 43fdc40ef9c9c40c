/**
 * What this kernel offers (probed once) and whether a policy can be enforced
 * on it: a policy the host cannot hold is refused with UNENFORCEABLE before
 * anything runs.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadAddon, unenforceable } from "./addon";
import { bpfStatus, needsBpf, type BpfStatus } from "./bpf";
import type { SandboxPolicy } from "./policy";

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
