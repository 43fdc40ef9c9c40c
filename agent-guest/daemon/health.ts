/**
 * What this host can enforce, measured once at start-up: the native probe
 * (Landlock ABI, seccomp, user namespaces, cgroup controllers) and a
 * self-test launch of /bin/true whose read-back must show every namespace,
 * seccomp, Landlock and no_new_privs really in force. The tier is the BPF
 * loader's own verdict (native `bpfStatus()`: A only when the LSM programs
 * load AND a self-test in a throwaway cgroup is denied, B when the
 * cgroup-BPF programs pass the same self-test, else C), reported with the
 * SHA-256 of the BPF object that enforces it and the loader's detail (what
 * was tried, why a stronger tier was refused). On tier C egress allow-lists
 * are refused with UNENFORCEABLE.
 *
 * Worker digest: sha256 over the sandbox helper binary, the launcher addon
 * and the guest's runner and workspace modules — what actually executes a
 * job here. Readiness on the hub needs it (never assumed). A bundle
 * capability (apk-static) reports instead the digest of the bundle the
 * daemon installed and verified at start (bundle-run.ts), or null with the
 * reason in `detail` when it has none. The shell capabilities need
 * /bin/bash (shell.ts: agent text never falls back to /bin/sh): without it
 * they report `not_run` with the reason, so the hub lists them not ready.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { HELPER_PATH, bpfStatus, launch, probeKernel, type BpfStatus, type KernelProbe } from "../../native/index";
import { MAX_REPORTED_SNAPSHOTS, type GuestHealthReport, type HostCeilingSummary, type HostPathEntry, type SnapshotSummary } from "../../server/trust";
import { projectPath } from "../../common/paths";
import type { HostCeiling } from "../ceiling/index";
import { BUNDLE_CAPABILITIES, type InstalledBundle } from "./bundle-run";
import { agentShellProblem } from "./shell";

export const GUEST_VERSION = "0.1.0";

/** Capabilities this guest implements, with the manifest versions it speaks. */
export const WORKERS = [
  { capability: "shell", capability_api: 1, worker_abi: 1, version: "1.0.0" },
  { capability: "code", capability_api: 1, worker_abi: 1, version: "1.0.0" },
  { capability: "host", capability_api: 1, worker_abi: 1, version: "1.0.0" },
  { capability: "workspace", capability_api: 1, worker_abi: 1, version: "1.0.0" },
  // Ready only where the tier is A or B (readiness compares the policy's min_tier with the host's).
  { capability: "egress-shell", capability_api: 1, worker_abi: 1, version: "1.0.0" },
  // A bundle worker (bundle-run.ts): its digest is the installed bundle's, not the runner's.
  { capability: "apk-static", capability_api: 1, worker_abi: 1, version: "1.0.0" },
] as const;

export function workerDigest(): string {
  const h = createHash("sha256");
  const files = [HELPER_PATH, path.join(path.dirname(HELPER_PATH), "leasehold_native.node"), projectPath("agent-guest", "daemon", "runner.ts"), projectPath("agent-guest", "daemon", "shell.ts"), projectPath("agent-guest", "workspace", "workspace.ts"), projectPath("agent-guest", "workspace", "volume.ts"), projectPath("agent-guest", "egress", "resolve.ts")];
  for (const file of files) {
    h.update(`${path.basename(file)}\0`);
    h.update(fs.readFileSync(file));
  }
  return `sha256:${h.digest("hex")}`;
}

/** The host ceiling in a few numbers (the contract's `HostCeilingSummary`, sent inside the report's `probe`). */
export function summariseCeiling(ceiling: HostCeiling): HostCeilingSummary {
  const { memory_bytes, cpus, pids, timeout_ms, output_bytes } = ceiling.max;
  return { workspace_max_bytes: ceiling.workspace_max_bytes, memory_bytes, cpus, pids, timeout_ms, output_bytes, exec_dirs: ceiling.exec_dirs.length, egress_rules: ceiling.egress.length };
}

function hostPathsOf(ceiling: HostCeiling): HostPathEntry[] {
  return (ceiling.host_paths ?? []).map((h) => structuredClone(h));
}

export interface Measured {
  tier: "A" | "B" | "C" | null;
  /** The BPF loader's verdict (null when it could not be asked: the probe failed first). */
  bpf: BpfStatus | null;
  ceiling: HostCeilingSummary;
  /** The ceiling's host paths as listed (docs/design.md#ceiling), reported whole: the hub shows and checks labels against them. */
  host_paths: HostPathEntry[];
  kernel_features: string[];
  probe: KernelProbe | { error: string };
  self_test: "pass" | "fail";
  self_test_detail: string;
  digest: string | null;
  /** Bundle capabilities: what the daemon installed at start. */
  bundles: Readonly<Record<string, InstalledBundle>>;
  /** Why agent shell text cannot run here (no usable /bin/bash), or null (shell.ts). */
  agent_shell: string | null;
}

export async function measureHost(ceiling: HostCeiling, bundles: Readonly<Record<string, InstalledBundle>> = {}): Promise<Measured> {
  const agentShell = agentShellProblem();
  let digest: string | null;
  try {
    digest = workerDigest();
  } catch {
    digest = null;
  }
  let probe: KernelProbe;
  try {
    probe = probeKernel();
  } catch (error) {
    return { tier: null, bpf: null, ceiling: summariseCeiling(ceiling), host_paths: hostPathsOf(ceiling), kernel_features: [], probe: { error: String(error) }, self_test: "fail", self_test_detail: String(error), digest, bundles, agent_shell: agentShell };
  }
  // workspace_root is the bounded workspace the daemon mounted before measuring (workspace/volume.ts).
  const features = new Set<string>();
  if (probe.cgroup.memory !== null) features.add("cgroup_memory");
  if (probe.cgroup.pids !== null) features.add("cgroup_pids");
  if (probe.cgroup.cpu !== null) features.add("cgroup_cpu");
  let selfTest: "pass" | "fail" = "fail";
  let detail: string;
  try {
    const r = await launch(
      { argv: ["/bin/true"], workdir: ceiling.workspace_root, memory_bytes: 64 << 20, cpus: 0.5, pids_max: 16, timeout_ms: 10_000, exec_allow: ["/bin", "/usr/bin"] },
      { chownWorkdir: false },
    );
    const ns = new Set(r.enforcement.namespaces);
    if (ns.has("user")) features.add("user_namespaces");
    if (ns.has("mnt")) features.add("mount_namespaces");
    if (ns.has("pid")) features.add("pid_namespaces");
    if (ns.has("net")) features.add("network_namespaces");
    if (r.enforcement.seccomp) features.add("seccomp");
    if (r.enforcement.no_new_privs) features.add("no_new_privs");
    if ((r.enforcement.landlock_abi ?? 0) >= 1) features.add("landlock");
    selfTest = r.exit.code === 0 && features.size >= 10 ? "pass" : "fail";
    detail = `exit ${r.exit.code}; read back: ${[...features].sort().join(", ")}`;
  } catch (error) {
    detail = error instanceof Error ? error.message : String(error);
  }
  let bpf: BpfStatus | null;
  try {
    bpf = bpfStatus();
  } catch (error) {
    // The loader itself failed (not "tier C": that is a verdict): no BPF tier can be claimed.
    bpf = { tier: "C", object_sha256: null, detail: `BPF loader failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  // The sandbox self-test gates every tier; the BPF tier says how much more than C this host enforces.
  return { tier: selfTest === "pass" ? bpf.tier : null, bpf, ceiling: summariseCeiling(ceiling), host_paths: hostPathsOf(ceiling), kernel_features: [...features].sort(), probe, self_test: selfTest, self_test_detail: detail, digest, bundles, agent_shell: agentShell };
}

/** Capabilities whose operations run agent shell text: not ready on a host without bash (shell.ts). */
const AGENT_SHELL_CAPABILITIES: readonly string[] = ["shell", "egress-shell"];

function workerReport(w: (typeof WORKERS)[number], m: Measured): GuestHealthReport["workers"][number] {
  if (AGENT_SHELL_CAPABILITIES.includes(w.capability) && m.agent_shell !== null) return { ...w, digest: m.digest, self_test: "not_run", detail: m.agent_shell };
  if (!BUNDLE_CAPABILITIES.includes(w.capability)) return { ...w, digest: m.digest, self_test: m.self_test };
  const b = m.bundles[w.capability];
  if (b === undefined || b.digest === null) {
    return { ...w, digest: null, self_test: "not_run", detail: b?.detail ?? "the daemon installed no bundle for this capability" };
  }
  // The sandbox self-test is what a bundle runs in; the bundle itself was verified byte for byte at install.
  return { ...w, version: b.version, digest: b.digest, self_test: m.self_test };
}

/** `snapshots`: the retained snapshots, most recent first (agent-guest/snapshots), at most MAX_REPORTED_SNAPSHOTS are sent. */
export function healthReport(m: Measured, witness: { size: number; failure: string | null }, accepting: boolean, snapshots: readonly SnapshotSummary[] = []): GuestHealthReport {
  return {
    tier: m.tier,
    kernel_features: m.kernel_features,
    probe: { ...(m.probe as unknown as Record<string, unknown>), self_test_detail: m.self_test_detail, ceiling: m.ceiling, ...(m.bpf === null ? {} : { bpf: m.bpf }) },
    workers: WORKERS.map((w) => workerReport(w, m)),
    witness,
    accepting_jobs: accepting,
    guest_version: GUEST_VERSION,
    host_paths: m.host_paths,
    snapshots: snapshots.slice(0, MAX_REPORTED_SNAPSHOTS).map((s) => ({ ...s })),
  };
}
