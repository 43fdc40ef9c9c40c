/**
 * One launch: the policy checked, the BPF request and helper config built,
 * the workdir lent to the lease uid, the addon called, the lease withdrawn
 * and its result read (result.ts).
 */
import { closeSync, constants as fsConstants, existsSync, fchownSync, fstatSync, openSync, readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { LeaseholdError } from "../server/trust";
import type { AddressEgressRule } from "../server/trust/egress";
import { HELPER_PATH, errnoName, loadAddon, unenforceable, type NativeAddon, type NativeResult } from "./addon";
import { packEgressRules, packExecFiles } from "./bpf-abi";
import { compileExecAllowList, needsBpf } from "./bpf";
import { parseAddressRule, SANDBOX_DEFAULT_ENV, SandboxPolicy, type SandboxPolicyInput } from "./policy";
import { checkEnforceable } from "./probe";
import { launchResult, type LaunchResult } from "./result";
import { sweepBeforeFirstLaunch } from "./sweep";

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
   * Aborting it stops the run: the launch thread kills the lease's cgroup
   * (every process in it, as at the deadline), withdraws the lease as usual,
   * and the result says `exit.cancelled` with what ran until then. An abort
   * before the workload started still launches and kills it at once, so the
   * result always comes from the one withdrawal path.
   */
  signal?: AbortSignal;
  /**
   * Tests only: cgroup files (e.g. "memory.events") whose post-run counter
   * reads fail with EIO, to prove an unread counter is reported as unknown.
   * The addon refuses it unless LEASEHOLD_NATIVE_FAULT_INJECTION=1 was set in
   * the environment when it loaded (native/SECURITY.md).
   */
  testFaults?: { unreadable_cgroup_files: string[] };
}

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
  // The path goes last: it is the rest of the record, spaces and all.
  for (const h of policy.host_paths) put("hp", `${h.mode} ${h.owner?.uid ?? "-"} ${h.owner?.gid ?? "-"} ${h.label} ${h.path}`);
  // An egress lease's helper leaves TCP connect to the BPF allow-list (landlock.c) and ignores these.
  for (const p of ll.tcp_connect) put("tcp_connect", p);
  for (const p of ll.tcp_bind) put("tcp_bind", p);
  for (const a of policy.argv) put("arg", a);
  for (const [k, v] of Object.entries({ ...SANDBOX_DEFAULT_ENV, ...policy.env })) put("env", `${k}=${v}`);
  return Buffer.concat(parts);
}


function progressRelay(onProgress: NonNullable<LaunchOptions["onProgress"]>): (out: number | bigint, err: number | bigint) => void {
  return (out, err) => {
    try {
      onProgress({ stdout_bytes: Number(out), stderr_bytes: Number(err) });
    } catch {
      // Progress is advisory; the launch and its result do not depend on it.
    }
  };
}

/**
 * Runs one workload in a fresh sandbox lease and withdraws the lease.
 * Rejects with INVALID_ARGUMENT for a malformed policy and UNENFORCEABLE when
 * any containment cannot be applied (then nothing of the workload ran).
 */
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
  sweepBeforeFirstLaunch();
  const nofile = leaseOpenFileLimit(policy.pids_max);
  const wdFd = openWorkdir(policy);
  const uid = allocateLeaseUid();
  const leaseId = `l${Date.now().toString(36)}${randomBytes(6).toString("hex")}`;
  const startedAt = new Date();
  const native = await runLease(a, { policy, options, wdFd, uid, leaseId, nofile, bpfRequest });
  const endedAt = new Date();
  if (native.failed) {
    throw unenforceable(`containment failed at ${native.failStage}: ${errnoName(native.failErrno)} (${native.failMessage})`, {
      stage: native.failStage, errno: errnoName(native.failErrno), lease_id: leaseId,
      withdrawn: native.cgroup.withdrawnEmpty && native.cgroup.withdrawnRemoved,
    });
  }
  return launchResult(native, { policy, lease_id: leaseId, started_at: startedAt, ended_at: endedAt, nofile, bpf_used: useBpf });
}

/**
 * The workdir, opened without following a symlink. Root changes its owner
 * for the run and back through this descriptor, never by path, so a workdir
 * swapped for a link between the check and the chown is refused instead of
 * chowning whatever the link names.
 */
function openWorkdir(policy: SandboxPolicy): number {
  try { return openSync(policy.workdir, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW); } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw unenforceable(code === "ENOENT" ? `workdir ${policy.workdir} does not exist` : `workdir ${policy.workdir} is not a directory (or is a symlink): ${code ?? "error"}`);
  }
}

/**
 * Relays an abort to the running launch (registered under its lease id
 * before this is called). Returns the listener's removal.
 */
function stopOnAbort(a: NativeAddon, leaseId: string, signal: AbortSignal): () => void {
  const stop = (): void => {
    a.cancelLaunch(leaseId);
  };
  if (signal.aborted) {
    stop();
    return () => undefined;
  }
  signal.addEventListener("abort", stop, { once: true });
  return () => signal.removeEventListener("abort", stop);
}

/** The addon's launch with the workdir lent to the lease uid for its length; the descriptor and uid are released here whatever happens. */
async function runLease(a: NativeAddon, run: {
  policy: SandboxPolicy; options: LaunchOptions; wdFd: number; uid: number; leaseId: string; nofile: number;
  bpfRequest: { exec: Buffer; egress: Buffer; execEnforced: boolean; netEnforced: boolean } | undefined;
}): Promise<NativeResult> {
  const { policy, options, wdFd, uid } = run;
  // An observe lease writes nothing there: the workspace stays as it is, owner included.
  const chown = (options.chownWorkdir ?? true) && policy.workdir_access !== "ro";
  let wd: { uid: number; gid: number } | undefined;
  let stopListening: (() => void) | undefined;
  try {
    wd = fstatSync(wdFd);
    if (chown) fchownSync(wdFd, uid, uid);
    const period = 100_000;
    const running = a.launch({
      helper: HELPER_PATH,
      leaseId: run.leaseId,
      config: configBuffer(policy, uid, run.nofile),
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
      ...(run.bpfRequest === undefined ? {} : { bpf: run.bpfRequest }),
      ...(options.signal === undefined ? {} : { cancellable: true }),
    });
    if (options.signal !== undefined) stopListening = stopOnAbort(a, run.leaseId, options.signal);
    return await running;
  } finally {
    stopListening?.();
    if (chown && wd) { try { fchownSync(wdFd, wd.uid, wd.gid); } catch { /* gone: nothing to restore */ } }
    closeSync(wdFd);
    uidsInUse.delete(uid);
  }
}
