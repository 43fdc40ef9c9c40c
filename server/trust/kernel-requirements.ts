/**
 * What a sandbox policy needs from a host's kernel, in the vocabulary the
 * guest's start-up probe reports (docs/design.md#enforcement). Used twice:
 * by readiness (can this host ever run the capability as declared?) and by
 * the policy compiler (the compiled job says what it needs, so it is not
 * dispatched to a host that would have to refuse it with UNENFORCEABLE).
 */

/** Enforcement tiers, strongest first: A (BPF-LSM), B (cgroup-BPF + exec kill), C (Landlock + seccomp + empty netns). */
export const ENFORCEMENT_TIERS = ["A", "B", "C"] as const;
export type HostEnforcementTier = (typeof ENFORCEMENT_TIERS)[number];

export const KERNEL_FEATURES = [
  "user_namespaces",
  "mount_namespaces",
  "pid_namespaces",
  "network_namespaces",
  "seccomp",
  "no_new_privs",
  "landlock",
  "cgroup_memory",
  "cgroup_pids",
  "cgroup_cpu",
] as const;
export type KernelFeature = (typeof KERNEL_FEATURES)[number];

export interface KernelRequirements {
  /** The weakest tier that can enforce the policy. */
  min_tier: HostEnforcementTier;
  /** Sorted, unique. */
  kernel_features: KernelFeature[];
}

/**
 * Every sandbox gets its own credentials, mounts and pids, a seccomp filter,
 * Landlock (every tier has it: it is what confines files and exec in tier C)
 * and memory/pids/cpu limits that are written and read back.
 */
const BASELINE: readonly KernelFeature[] = [
  "user_namespaces",
  "mount_namespaces",
  "pid_namespaces",
  "seccomp",
  "no_new_privs",
  "landlock",
  "cgroup_memory",
  "cgroup_pids",
  "cgroup_cpu",
];

/**
 * `network: "none"` is an empty network namespace (any tier). An egress
 * allow-list needs the connect/sendmsg hooks of tier A or B: tier C has no
 * way to allow some destinations and not others, so it must refuse.
 */
export function kernelRequirementsFor(network: "none" | { egress: readonly string[] }): KernelRequirements {
  const features = new Set<KernelFeature>(BASELINE);
  let minTier: HostEnforcementTier = "C";
  if (network === "none") features.add("network_namespaces");
  else minTier = "B";
  return {
    min_tier: minTier,
    kernel_features: KERNEL_FEATURES.filter((feature) => features.has(feature)),
  };
}

/** True when `tier` is at least as strong as `needed` (A ≥ B ≥ C). */
export function tierSatisfies(tier: HostEnforcementTier, needed: HostEnforcementTier): boolean {
  return ENFORCEMENT_TIERS.indexOf(tier) <= ENFORCEMENT_TIERS.indexOf(needed);
}
