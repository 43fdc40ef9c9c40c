/**
 * Runs one verified job on this host and produces what goes back to the
 * hub: scrubbed output, a signed evidence envelope and the result. Order:
 *
 *   1 map the hashed prepared action to a sandbox policy (a table keyed by
 *     capability.operation — no if-trees over names elsewhere)
 *   2 intersect with the host ceiling: beyond it → POLICY_REFUSED naming the
 *     field; egress on this tier → UNENFORCEABLE; nothing is clamped. Names
 *     in the egress list are resolved here, outside the sandbox, after the
 *     ceiling and tier checks that need no addresses (agent-guest/egress):
 *     the sandbox gets exactly the resolved addresses and an /etc/hosts for
 *     them; a name that does not resolve fails the job (EGRESS_NAME_UNRESOLVED)
 *   3 launch in the native sandbox (workspace operations instead go through
 *     agent-guest/workspace — a user-space path check, never a shell)
 *   4 scrub stdout/stderr (credentials, then DLP) over the WHOLE capture, the
 *     pair's junctions included, then cut the scrubbed text to the returned
 *     size (capture → scrub → cut, never cut raw bytes first) — the raw bytes
 *     are dropped
 *   5 build the envelope from the launcher's read-back and sign it
 *
 * A refusal at any step is returned as a signed refusal envelope; nothing
 * was launched then.
 *
 * Bundle capabilities (a worker that is a content-addressed bundle, e.g.
 * apk-static) take their own table entry (bundle-run.ts `BUNDLED`): the
 * verified bundle's bytes on stdin, the input artifact in a fresh read-only
 * job directory, the worker's JSON as the result. A worker that refuses its
 * input, or fails, is returned as kind "refused" with the error and the
 * launch's own evidence (it did run; the envelope says how it ended).
 */
import { createHash, type KeyObject } from "node:crypto";
import { SandboxPolicy, launch, type LaunchOptions, type LaunchResult, type SandboxPolicyInput } from "../../native/index";
import { LeaseholdError, isLeaseholdError, type GuestJobResult } from "../../server/trust";
import { checkEgressBeforeResolution, checkResolvedNames, grantedMounts, intersectPolicy, type HostCeiling, type HostTier } from "../ceiling/index";
import { hasNameRules, resolveEgressNames, type Lookup, type ResolvedEgress } from "../egress/index";
import { buildLaunchEvidence, buildRefusalEvidence, signEvidence, type BpfReadback, type EvidenceEnvelope, type SignedEvidence } from "../../server/trust/evidence/index";
import { Scrubber, scrubPair, scrubWindow, windowContext } from "../../server/trust/scrub/index";
import { traceStage } from "../../common/trace/stage";
import { Workspace } from "../workspace/index";
import { BUNDLED, artifactRefOf, fillArtifact, makeJobDirectory, readWorkerResult, verifiedBundleFor, type BundleOperation, type FetchArtifact } from "./bundle-run";
import { prepareMounts, runRollback, type PreparedMounts } from "./host-paths-run";
import { agentShellArgv, agentShellEnv, requireAgentShell } from "./shell";
import type { VerifiedJob } from "./verify-job";

export interface RunnerContext {
  hostId: string;
  hostKey: KeyObject;
  ceiling: HostCeiling;
  tier: HostTier;
  /** sha256:… of the worker the guest runs (sandbox helper, addon, this runner). */
  workerDigest: string;
  /** How egress names are resolved (default: node:dns lookup, both families); tests pass their own. */
  lookup?: Lookup;
  resolveTimeoutMs?: number;
  /** The guest's worker-bundle store (agent-guest/workers/bundle.ts); bundle capabilities need it. */
  workerStore?: string;
  /** The guest-private directory bundle jobs' directories are made in (`<state dir>/jobs`, bundle-run.ts `jobsPath`); never inside the workspace. */
  jobsDir?: string;
  /** Bundle digests installed at start, by capability (for a refusal that names what this host holds). */
  installedBundles?: Readonly<Record<string, string>>;
  /** Fetches a job's input artifact from the hub into an open descriptor (artifact-fetch.ts); tests pass their own. */
  fetchArtifact?: FetchArtifact;
  /** The node binary bundle workers run under (default: this process's). */
  nodePath?: string;
  /** The guest-private snapshot store (`<state dir>/snapshots`, host-paths-run.ts `snapshotsPath`); "rw" host paths and rollback need it. */
  snapshotsDir?: string;
  /** Where the host's bash is checked before a shell job (default /bin/bash, which is also what runs); tests point it elsewhere to be a host without bash. */
  agentShellPath?: string;
}

export interface JobOutcome {
  kind: GuestJobResult["kind"];
  streams: { stdout: Buffer; stderr: Buffer };
  evidence: SignedEvidence;
  structured: Record<string, unknown> | null;
  error: GuestJobResult["error"];
  /**
   * Work the job leaves for after its result is delivered (a rollback's
   * removal of the tree it swapped out): the caller runs it once the hub
   * holds the result, or at once when it delivers nothing.
   */
  afterDelivery?: () => void;
}

const SCRUB_CHUNK = 64 * 1024;

/**
 * Scrubs a buffer as the stream it came from (in chunks, the way it streams);
 * the raw input is not kept. `partial`: the buffer was cut from a longer
 * source (a read limit), so its tail may be the first part of a secret.
 */
function scrubStream(raw: Buffer, scrubber: Scrubber, partial: boolean): Buffer {
  const parts: Buffer[] = [];
  for (let off = 0; off < raw.length; off += SCRUB_CHUNK) parts.push(scrubber.push(raw.subarray(off, off + SCRUB_CHUNK)));
  parts.push(scrubber.end({ partial }));
  return Buffer.concat(parts);
}

/**
 * How much output a job returns per stream, and how much the launcher
 * captures. The capture is larger (up to twice, within the ceiling) so a
 * secret straddling the returned size is scrubbed whole before the cut;
 * when the ceiling leaves no room, capture = returned and a raw cut is
 * covered by the scrubber's partial-tail rule instead.
 */
export function outputLimits(ceiling: HostCeiling): { returned: number; capture: number } {
  const returned = Math.min(1024 * 1024, ceiling.max.output_bytes);
  return { returned, capture: Math.min(ceiling.max.output_bytes, 2 * returned) };
}

// ---------------------------------------------------------------------------
// 1: hashed action → sandbox policy, by table.

type Args = Record<string, unknown>;
type SandboxBuilder = (args: Args, job: VerifiedJob, ctx: RunnerContext) => Pick<SandboxPolicyInput, "argv" | "env" | "stdin" | "cwd">;

const LANGUAGES: Record<string, (code: string) => string[]> = {
  python3: (code) => ["/usr/bin/python3", "-c", code],
  node: (code) => [process.execPath, "-e", code],
  bash: (code) => ["/bin/bash", "-c", code],
};

/**
 * The job's working directory inside the sandbox, checked before launch by
 * the workspace's own path rules (exists, a directory, no symlinked
 * component, no `..`, no absolute path): the launcher binds the workspace at
 * /work and only changes directory to it. A missing or non-directory cwd is
 * the caller's mistake (INVALID_ARGUMENT naming it), not an enforcement gap.
 */
export function cwdInside(cwd: unknown, workspaceRoot: string): string {
  if (cwd === undefined || cwd === null || cwd === "." || cwd === "") return "/work";
  if (typeof cwd !== "string") throw new LeaseholdError("INVALID_ARGUMENT", "cwd must be a workspace-relative path string", { tier: "guest", details: { field: "cwd" } });
  let rel: string;
  try {
    rel = Workspace.open(workspaceRoot).directory(cwd);
  } catch (error) {
    if (isLeaseholdError(error) && error.code === "NOT_FOUND") {
      throw new LeaseholdError("INVALID_ARGUMENT", `cwd ${JSON.stringify(cwd)} is not an existing directory of the workspace (${error.message})`, { tier: "guest", details: { field: "cwd", path: cwd } });
    }
    throw error;
  }
  return rel === "" ? "/work" : `/work/${rel}`;
}

/**
 * host_inspect: read-only commands inside the sandbox — a fixed POSIX
 * script of the guest's own (no agent text), so /bin/sh runs it and a host
 * without bash can still be inspected. uname and
 * /proc/uptime, /proc/loadavg are host-wide values; df sees the sandbox's
 * own mounts (the host's system directories, read-only), and process
 * counts come from /proc/loadavg (the sandbox's pid namespace hides the
 * host's processes from ps).
 */
const HOST_INSPECT_SCRIPT = "uname -srvm; echo; cat /proc/uptime /proc/loadavg; echo; df -kP /usr 2>/dev/null || true";

/**
 * Agent shell text runs under bash only, the dialect the hub's gate parsed
 * (shell.ts): no bash here is UNENFORCEABLE, never a fallback to /bin/sh.
 */
function shellCommand(a: Args, ctx: RunnerContext): ReturnType<SandboxBuilder> {
  requireAgentShell(ctx.agentShellPath);
  return { argv: agentShellArgv(String(a["command"])), env: agentShellEnv(a["env"]), stdin: String(a["stdin"] ?? ""), cwd: cwdInside(a["cwd"], ctx.ceiling.workspace_root) };
}

const SANDBOXED: Record<string, SandboxBuilder> = {
  "shell.run_command": (a, _job, ctx) => shellCommand(a, ctx),
  "egress-shell.run_command_net": (a, _job, ctx) => shellCommand(a, ctx),
  "code.run_code": (a, job) => {
    const build = LANGUAGES[String(a["language"])];
    if (build === undefined) throw new LeaseholdError("INVALID_ARGUMENT", `unsupported language ${JSON.stringify(a["language"])}`, { tier: "guest" });
    const argv = build(String(a["code"]));
    // This host's interpreter (node is this process's own binary) must lie in the signed exec_allow, or
    // Landlock refuses the exec: say so instead of a launch that fails with 126. /usr/local is not bound
    // for it: the operator's own installs show only where the operator lists them.
    const runtime = argv[0] as string;
    if (!job.policy.exec_allow.some((d) => runtime.startsWith(`${d.replace(/\/+$/, "")}/`))) {
      throw new LeaseholdError("UNENFORCEABLE", `this host's ${String(a["language"])} (${runtime}) is outside ${job.capability.id}'s exec_allow (${job.policy.exec_allow.join(", ")}); nothing was launched`, { tier: "guest", details: { field: "exec_allow" } });
    }
    return { argv, env: {}, stdin: String(a["stdin"] ?? ""), cwd: "/work" };
  },
  "host.host_inspect": () => ({ argv: ["/bin/sh", "-c", HOST_INSPECT_SCRIPT], env: {}, stdin: "", cwd: "/work" }),
};

/**
 * The sandbox's network: "none", or the address rules the kernel enforces —
 * the compiled list with every name replaced by the addresses it resolved to
 * — and the names for the sandbox's /etc/hosts.
 */
function sandboxNetwork(job: VerifiedJob, resolution: ResolvedEgress | undefined): SandboxPolicyInput["network"] {
  const p = job.policy;
  if (p.network.mode === "none") return "none";
  if (resolution === undefined) {
    if (hasNameRules(p.network.egress)) throw new LeaseholdError("INTERNAL", "egress names were not resolved before the sandbox policy was built", { tier: "guest" });
    return { egress: [...p.network.egress] };
  }
  const network = { egress: resolution.egress, ...(resolution.hosts.length > 0 ? { hosts: resolution.hosts } : {}) };
  return network;
}

/** The compiled policy's limits in the launcher's units, and the output capture for this host: the same for every launched job. */
function policyLimits(job: VerifiedJob, ctx: RunnerContext) {
  const p = job.policy;
  const { capture } = outputLimits(ctx.ceiling);
  return {
    memory_bytes: p.memory_bytes,
    cpus: p.cpu_millis / 1000,
    pids_max: p.pids_limit,
    timeout_ms: p.timeout_s * 1000,
    tmpfs_tmp_bytes: p.tmpfs_tmp_bytes,
    tmpfs_tmp_inodes: Math.min(16_384, ctx.ceiling.max.tmpfs_inodes),
    stdout_max_bytes: capture,
    stderr_max_bytes: capture,
    exec_allow: [...p.exec_allow],
  };
}

export function sandboxPolicyFor(job: VerifiedJob, ctx: RunnerContext, resolution?: ResolvedEgress): SandboxPolicyInput {
  const build = SANDBOXED[`${job.capability.id}.${job.operation}`];
  if (build === undefined) throw new LeaseholdError("UNENFORCEABLE", `this guest has no sandboxed worker for ${job.capability.id}.${job.operation}`, { tier: "guest" });
  return {
    ...build(job.arguments, job, ctx),
    workdir: ctx.ceiling.workspace_root,
    network: sandboxNetwork(job, resolution),
    ...policyLimits(job, ctx),
    // Harmless by construction, not by classification: a job without the
    // exclusive lease gets the workspace as a read-only bind (kernel), so an
    // assessment that missed a write costs nothing that outlives the job.
    workdir_access: job.writesWorkspace ? "rw" : "ro",
  };
}

/**
 * What a launched job's caller is told about where its writes went and what
 * of the host it could see, so an agent is not misled into thinking that
 * `touch /tmp/x` changed the host. Facts only from the launcher's read-back.
 */
export const HOST_FACTS_SHOWN = [
  "kernel release and version (uname, /proc/version)",
  "the distribution (/etc/os-release)",
  "CPU model and count, memory size (/proc/cpuinfo, /proc/meminfo)",
  "uptime, load and boot time (/proc/uptime, /proc/loadavg, /proc/stat)",
  "programs and libraries installed under /usr (without /usr/local)",
] as const;

export function sandboxReport(
  writesWorkspace: boolean,
  result: Pick<LaunchResult, "throwaway_writes">,
  output: { terminalControls: boolean } = { terminalControls: false },
  network: SandboxPolicyInput["network"] = "none",
): Record<string, unknown> {
  const t = result.throwaway_writes;
  const discarded = t === null
    ? "what it wrote to /tmp was not measured; /tmp was discarded when the job ended"
    : t.tmp_inodes === 0 && t.tmp_bytes === 0
      ? "it wrote nothing to /tmp"
      : `${t.tmp_bytes} bytes in ${t.tmp_inodes} files or directories it left in /tmp were discarded when the job ended`;
  const workspace = writesWorkspace
    ? "exclusive lease: changes under /work (the workspace) persist"
    : "observe lease: /work (the workspace) was mounted read-only, so nothing the command did there persisted";
  return {
    sandbox: {
      lease: writesWorkspace ? "exclusive" : "observe",
      workspace: writesWorkspace ? "read-write" : "read-only",
      throwaway_writes: t === null ? null : { tmp_bytes: t.tmp_bytes, tmp_files: t.tmp_inodes },
      host_facts_shown: [...HOST_FACTS_SHOWN],
      // The output carries terminal control sequences (ESC/CSI/OSC such as a
      // clipboard write or a window title, or other C0 controls): whoever shows
      // it to a person neutralises them (server/text/terminal.ts).
      terminal_controls: output.terminalControls,
      note: `${workspace}; ${discarded}. The root file system is read-only, HOME is /tmp, Python imports nothing from the workspace unless asked (PYTHONSAFEPATH=1) and writes no bytecode, no interpreter search-path or start-up variable is set unless the action's env sets it, and ${
        network === undefined || network === "none"
          ? "there is no network (Unix sockets only)."
          : "the network reaches only the egress allow-list below, enforced in the kernel; names resolve only through /etc/hosts (no DNS)."
      }`,
      ...(network === undefined || network === "none" ? {} : { egress: [...network.egress] }),
    },
  };
}

// ---------------------------------------------------------------------------
// Workspace operations: user-space, in-process, never a shell.

/**
 * A workspace operation's raw result. `window`: the content is one page of a
 * longer file, read with context on each side, so it is scrubbed as that
 * window of the file (server/trust/scrub/window.ts), not as a text of its own.
 */
type WorkspaceOp = (
  ws: Workspace,
  a: Args,
) => { content: Buffer; structured: Record<string, unknown>; window?: { bytes: Buffer; from: number; offset: number; total: number } };

/** Context read around every fs_read page, for the built-in patterns the workspace scrubber applies. */
const READ_CONTEXT = windowContext();

const WORKSPACE_OPS: Record<string, WorkspaceOp> = {
  "workspace.fs_read": (ws, a) => {
    const r = ws.read(String(a["path"]), { offset: Number(a["offset"] ?? 0), limit: Number(a["limit"] ?? 65_536), context: READ_CONTEXT });
    return {
      content: r.content,
      structured: { path: r.path, offset: r.offset, bytes: r.bytes, total_bytes: r.total_bytes, has_more: r.has_more },
      ...(r.around === undefined ? {} : { window: { bytes: r.around.bytes, from: r.around.from, offset: r.offset, total: r.total_bytes } }),
    };
  },
  "workspace.fs_write": (ws, a) => {
    const content = a["encoding"] === "base64" ? Buffer.from(String(a["content"]), "base64") : Buffer.from(String(a["content"]), "utf8");
    const r = ws.write(String(a["path"]), content, { createParents: true });
    return { content: Buffer.alloc(0), structured: { path: r.path, bytes: r.bytes, sha256: r.sha256, created: r.created } };
  },
  "workspace.fs_list": (ws, a) => {
    const r = ws.list(String(a["path"]), { offset: Number(a["offset"] ?? 0), limit: Number(a["limit"] ?? 50) });
    // Names can carry secrets too: the listing leaves the host as scrubbed JSON text.
    return { content: Buffer.from(JSON.stringify(r.entries)), structured: { path: r.path, offset: r.offset, limit: r.limit, total: r.total, has_more: r.has_more } };
  },
};

/**
 * The kernel side of the lease, from the launch's own read-back: the tier and
 * BPF object the loader proved at start-up, whether the lease was under the
 * programs for the whole run, and — when it was — every denial they reported.
 */
export function bpfReadback(result: Pick<LaunchResult, "bpf">): BpfReadback {
  const b = result.bpf;
  return {
    tier: b.tier,
    attached: b.enforced,
    ...(b.object_sha256 === null ? {} : { object_sha256: b.object_sha256 }),
    ...(b.enforced ? { denials: b.denials, denials_dropped: b.denials_dropped } : {}),
  };
}

function common(job: VerifiedJob, ctx: RunnerContext) {
  return {
    action_id: job.action_id,
    action_hash: job.action_hash,
    host_id: ctx.hostId,
    producer: { capability: job.capability.id, version: job.capability.version, worker_digest: ctx.workerDigest },
  };
}

export function refusalOutcome(job: Pick<VerifiedJob, "action_id" | "action_hash" | "capability">, ctx: RunnerContext, error: unknown): JobOutcome {
  const e = isLeaseholdError(error) ? error : new LeaseholdError("INTERNAL", "guest failure before launch", { tier: "guest" });
  const envelope = buildRefusalEvidence({
    action_id: job.action_id,
    action_hash: job.action_hash,
    host_id: ctx.hostId,
    producer: { capability: job.capability.id, version: job.capability.version, worker_digest: ctx.workerDigest },
    refusal: { code: e.code, message: e.message },
    at: new Date(),
  });
  return {
    kind: "refused",
    streams: { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) },
    evidence: signEvidence(envelope, ctx.hostKey),
    structured: null,
    error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) },
  };
}

async function runWorkspace(job: VerifiedJob, ctx: RunnerContext, op: WorkspaceOp, root: string = ctx.ceiling.workspace_root): Promise<JobOutcome> {
  const startedAt = new Date();
  const ws = Workspace.open(root);
  const { content, structured, window } = op(ws, job.arguments);
  let scrubbed: Buffer;
  let report: ReturnType<Scrubber["report"]>;
  if (window !== undefined) {
    // A page is scrubbed as a window of the file: the context on each side
    // keeps an offset or a page boundary from splitting a secret out of its pattern.
    const w = scrubWindow({ bytes: window.bytes, from: window.from, offset: window.offset, length: content.length, total: window.total });
    scrubbed = w.output;
    report = w.report;
    structured["terminal_controls"] = w.terminalControls;
  } else {
    const scrubber = new Scrubber();
    scrubbed = scrubStream(content, scrubber, false);
    report = scrubber.report();
  }
  // Binary pages travel as base64 of the SCRUBBED bytes (scrubbing always runs on the raw bytes), so
  // the caller gets them exactly; utf8 text would replace every invalid sequence for good.
  const returned = job.operation === "fs_read" && job.arguments["encoding"] === "base64" ? Buffer.from(scrubbed.toString("base64"), "latin1") : scrubbed;
  if (job.operation === "fs_read") structured["encoding"] = job.arguments["encoding"] === "base64" ? "base64" : "utf8";
  const endedAt = new Date();
  const base = common(job, ctx);
  const envelope: EvidenceEnvelope = {
    schema: "leasehold.evidence/1",
    ...base,
    state: "observed",
    artifacts: [{ name: "stdout", sha256: createHash("sha256").update(returned).digest("hex"), bytes: returned.length, truncated: structured["has_more"] === true }],
    enforcement: { namespaces: [], bpf: { tier: ctx.tier, attached: false } },
    redactions: report,
    timing: { started_at: startedAt.toISOString(), ended_at: endedAt.toISOString() },
    limitations: [
      "workspace operation: enforced by the guest's user-space path check (agent-guest/workspace), not by a kernel sandbox; no lease was launched",
    ],
  };
  return { kind: "ran", streams: { stdout: returned, stderr: Buffer.alloc(0) }, evidence: signEvidence(envelope, ctx.hostKey), structured, error: null };
}

/**
 * A bundle worker: verified bundle → fresh job directory with the fetched,
 * re-hashed artifact → launch with the verified bytes on stdin → scrub →
 * the worker's JSON. The job directory is removed whatever happened.
 */
async function runBundle(job: VerifiedJob, ctx: RunnerContext, op: BundleOperation, options: Parameters<typeof runJob>[2] = {}): Promise<JobOutcome> {
  if (job.mutating) throw new LeaseholdError("POLICY_REFUSED", `${job.capability.id}.${job.operation} is a bundle worker, which only reads its input; a mutating operation is not run`, { tier: "guest" });
  if (job.policy.network.mode !== "none") throw new LeaseholdError("POLICY_REFUSED", "a bundle worker runs without network; the job's policy asks for egress", { tier: "guest", details: { field: "network" } });
  const bundle = verifiedBundleFor(job, ctx.workerStore, ctx.installedBundles ?? {});
  const ref = artifactRefOf(job.arguments, ctx.ceiling.workspace_max_bytes);
  if (ctx.fetchArtifact === undefined) throw new LeaseholdError("UNENFORCEABLE", "this guest cannot fetch job artifacts", { tier: "guest" });
  // Landlock would refuse to exec a runtime outside the policy's exec_allow; say so before fetching anything.
  const runtime = ctx.nodePath ?? process.execPath;
  if (!job.policy.exec_allow.some((d) => runtime.startsWith(`${d.replace(/\/+$/, "")}/`))) {
    throw new LeaseholdError("UNENFORCEABLE", `this host's node (${runtime}) is outside ${job.capability.id}'s exec_allow (${job.policy.exec_allow.join(", ")}), so its worker cannot run here; nothing was launched`, { tier: "guest", details: { field: "exec_allow" } });
  }
  if (ctx.jobsDir === undefined) throw new LeaseholdError("UNENFORCEABLE", "this guest has no private directory for job inputs", { tier: "guest" });
  const dir = makeJobDirectory(ctx.jobsDir);
  try {
    await fillArtifact(ctx.fetchArtifact, job.job_id, ref, dir.artifactFd);
    const { returned } = outputLimits(ctx.ceiling);
    const requested: SandboxPolicyInput = {
      argv: [runtime, "--input-type=module", "-", job.operation, "/work/artifact"],
      env: {},
      // The bytes that were hashed are the bytes that run: no path to the code reaches the sandbox.
      stdin: new Uint8Array(bundle.entry),
      cwd: "/work",
      workdir: dir.path,
      workdir_access: "ro",
      network: "none",
      ...policyLimits(job, ctx),
    };
    const parsed = SandboxPolicy.safeParse(requested);
    if (!parsed.success) throw new LeaseholdError("INVALID_ARGUMENT", `sandbox policy: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`, { tier: "guest" });
    // The workdir is the guest's own job directory, not a path from the job: the ceiling admits exactly it.
    const policy = intersectPolicy(parsed.data, ctx.ceiling, { tier: ctx.tier, names: [], guestWorkdir: dir.path });
    options.onLaunch?.();
    const result = await launch(policy, { chownWorkdir: false, ...relayed(options) });
    const pair = scrubPair({ stdout: result.stdout, stderr: result.stderr, stdoutCut: result.stdout_truncated, stderrCut: result.stderr_truncated }, { returnMax: returned });
    const { stdout, stderr } = pair;
    const envelope = buildLaunchEvidence({
      ...common(job, ctx),
      producer: { capability: job.capability.id, version: job.capability.version, worker_digest: bundle.digest },
      launch: result,
      bpf: bpfReadback(result),
      artifacts: [
        { name: "stdout", content: stdout, truncated: result.stdout_truncated || pair.stdoutTruncated },
        { name: "stderr", content: stderr, truncated: result.stderr_truncated || pair.stderrTruncated },
      ],
      inputs: [{ name: "input", sha256: ref.sha256, bytes: ref.bytes }],
      redactions: pair.report,
    });
    const verdict = readWorkerResult(
      op,
      { exitCode: result.exit.code, signal: result.exit.signal, timedOut: result.exit.timed_out, oomKilled: result.exit.oom_killed, stdoutCut: result.stdout_truncated || pair.stdoutTruncated },
      stdout,
      stderr,
      ref,
    );
    const evidence = signEvidence(envelope, ctx.hostKey);
    if (!verdict.ok) {
      const e = verdict.error;
      return { kind: "refused", streams: { stdout, stderr }, evidence, structured: null, error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } };
    }
    return { kind: "ran", streams: { stdout, stderr }, evidence, structured: verdict.result, error: null };
  } finally {
    dir.remove();
  }
}

export interface RunOptions {
  onLaunch?: () => void;
  onProgress?: (progress: { stdout_bytes: number; stderr_bytes: number }) => void;
  /** The hub's stop (docs/design.md#cancel): a launched workload's lease is killed and the signed result says `exit.cancelled`. */
  signal?: AbortSignal;
}

/** What of the runner's options the launch takes: progress reports and the hub's stop. */
function relayed(options: RunOptions): Pick<LaunchOptions, "onProgress" | "signal"> {
  return { ...(options.onProgress ? { onProgress: options.onProgress } : {}), ...(options.signal ? { signal: options.signal } : {}) };
}

/** Runs a verified job to a JobOutcome; never throws for a refusal (it becomes a signed refusal). */
export async function runJob(job: VerifiedJob, ctx: RunnerContext, options: RunOptions = {}): Promise<JobOutcome> {
  const key = `${job.capability.id}.${job.operation}`;
  const workspaceOp = WORKSPACE_OPS[key];
  let mounts: PreparedMounts | undefined;
  try {
    if (key === "workspace.rollback") return rollbackOutcome(job, ctx);
    if (workspaceOp !== undefined) {
      const labelled = labelPathOf(job);
      if (labelled !== undefined) {
        // A host path, not the workspace: the signed policy's mounts decide (fs_write needs the label rw).
        if (job.operation === "fs_write" && !(job.policy.mounts ?? []).some((m) => m.label === labelled.label && m.mode === "rw")) {
          throw new LeaseholdError("POLICY_REFUSED", `fs_write to ${labelled.label}: needs the host path read-write, and the signed policy does not give it`, { tier: "guest", details: { field: "mounts", label: labelled.label } });
        }
        mounts = prepareMounts(job, ctx, { bind: false });
        const g = mounts.granted.find((m) => m.label === labelled.label);
        if (g === undefined) throw new LeaseholdError("POLICY_REFUSED", `${labelled.label}: the signed policy gives no such host path`, { tier: "guest", details: { field: "mounts", label: labelled.label } });
        const outcome = await runWorkspace({ ...job, arguments: { ...job.arguments, path: labelled.rest } }, ctx, workspaceOp, g.path);
        return withMounts(outcome, mounts.finish(), ctx);
      }
      if (job.mutating && !job.writesWorkspace) throw new LeaseholdError("POLICY_REFUSED", `${key} writes the workspace but the job holds no exclusive lease`, { tier: "guest", details: { field: "lease" } });
      return await runWorkspace(job, ctx, workspaceOp);
    }
    const bundled = BUNDLED[key];
    if (bundled !== undefined) return await runBundle(job, ctx, bundled, options);
    const compiledEgress = job.policy.network.mode === "egress" ? job.policy.network.egress : [];
    // Ceiling and tier first: a job this host must refuse makes no DNS query.
    checkEgressBeforeResolution(compiledEgress, ctx.ceiling, { tier: ctx.tier });
    const resolution = hasNameRules(compiledEgress)
      ? await resolveEgressNames(compiledEgress, { ...(ctx.lookup ? { lookup: ctx.lookup } : {}), ...(ctx.resolveTimeoutMs ? { timeoutMs: ctx.resolveTimeoutMs } : {}) })
      : undefined;
    if (resolution !== undefined) checkResolvedNames(resolution.names, ctx.ceiling);
    const requested = { ...sandboxPolicyFor(job, ctx, resolution), host_paths: grantedMounts(job.policy.mounts, ctx.ceiling) };
    const parsed = SandboxPolicy.safeParse(requested);
    if (!parsed.success) throw new LeaseholdError("INVALID_ARGUMENT", `sandbox policy: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`, { tier: "guest" });
    // Refuse, never clamp: the sandbox gets the job's policy only if it lies within the ceiling.
    const policy = intersectPolicy(parsed.data, ctx.ceiling, { tier: ctx.tier, names: resolution?.names ?? [] });
    // Last before the launch, once everything else passed: rw that cannot be
    // enforced, a held label or an over-budget tree is refused here; then the snapshot.
    mounts = prepareMounts(job, ctx);
    options.onLaunch?.();
    // Observe jobs share the workspace, bound read-only; exclusive mutating
    // jobs get it chowned to their lease uid for the run (one at a time: see daemon).
    traceStage(job.action_id, "guest.launch");
    const result: LaunchResult = await launch(policy, { chownWorkdir: job.writesWorkspace, ...relayed(options) });
    traceStage(job.action_id, "guest.exited");
    const bound = mounts.finish();
    result.limitations.push(...bound.limitations);
    // Capture → scrub → cut: the whole capture is scrubbed (a raw capture the
    // launcher cut is scrubbed as possibly ending mid-secret), then cut.
    const { returned } = outputLimits(ctx.ceiling);
    const pair = scrubPair(
      { stdout: result.stdout, stderr: result.stderr, stdoutCut: result.stdout_truncated, stderrCut: result.stderr_truncated },
      { returnMax: returned },
    );
    const { stdout, stderr } = pair;
    const envelope = buildLaunchEvidence({
      ...common(job, ctx),
      launch: result,
      bpf: bpfReadback(result),
      artifacts: [
        { name: "stdout", content: stdout, truncated: result.stdout_truncated || pair.stdoutTruncated },
        { name: "stderr", content: stderr, truncated: result.stderr_truncated || pair.stderrTruncated },
      ],
      redactions: pair.report,
      ...(resolution !== undefined ? { resolvedNames: resolution.hosts } : {}),
      mounts: bound.mounts,
    });
    return {
      kind: "ran",
      streams: { stdout, stderr },
      evidence: signEvidence(envelope, ctx.hostKey),
      structured: {
        ...sandboxReport(job.writesWorkspace, result, { terminalControls: pair.terminalControls }, policy.network),
        ...(resolution !== undefined ? { resolved_names: resolution.hosts } : {}),
        ...(bound.mounts.length > 0 ? { host_paths: bound.mounts.map((m) => ({ label: m.label, inside: `/host/${m.label}`, mode: m.mode, ...(m.snapshot_id !== undefined ? { snapshot_id: m.snapshot_id } : {}) })) } : {}),
      },
      error: null,
    };
  } catch (error) {
    return refusalOutcome(job, ctx, error);
  } finally {
    mounts?.release();
  }
}

/** `<label>:<relative path>` in an fs_* job's path: a host path the signed policy must give. */
const LABEL_PATH = /^([a-z][a-z0-9_-]{0,31}):(.*)$/s;
function labelPathOf(job: VerifiedJob): { label: string; rest: string } | undefined {
  const m = LABEL_PATH.exec(String(job.arguments["path"] ?? ""));
  return m === null ? undefined : { label: m[1] as string, rest: m[2] === "" ? "." : (m[2] as string) };
}

/** A workspace-style outcome re-signed with the host paths it touched. */
function withMounts(outcome: JobOutcome, bound: ReturnType<PreparedMounts["finish"]>, ctx: RunnerContext): JobOutcome {
  const envelope: EvidenceEnvelope = {
    ...outcome.evidence.envelope,
    mounts: bound.mounts,
    limitations: [...outcome.evidence.envelope.limitations, ...bound.limitations, "host path operation: the guest's user-space path check ran on the label's directory as its root"],
  };
  const snapshot = bound.mounts.find((m) => m.snapshot_id !== undefined)?.snapshot_id;
  return { ...outcome, evidence: signEvidence(envelope, ctx.hostKey), structured: { ...outcome.structured, ...(snapshot !== undefined ? { snapshot_id: snapshot } : {}) } };
}

/**
 * `workspace.rollback`: the guest (root) restores a snapshot into its
 * label's tree by descriptor, no sandbox launched; the evidence names the
 * label with its tree digest before and after and the snapshot taken of
 * the tree it replaced.
 */
function rollbackOutcome(job: VerifiedJob, ctx: RunnerContext): JobOutcome {
  const startedAt = new Date();
  const r = runRollback(job, ctx);
  const body = Buffer.from(`${JSON.stringify(r.structured)}\n`);
  const limitations = ["rollback: done by the guest's own descriptor walk (agent-guest/snapshots), not in a kernel sandbox; no lease was launched"];
  if (!r.restored.identical) limitations.push(`rollback: the restored tree's digest differs from the snapshot's${r.restored.not_restored.length > 0 ? ` (not made again: ${r.restored.not_restored.slice(0, 8).join(", ")})` : ""}`);
  const envelope: EvidenceEnvelope = {
    schema: "leasehold.evidence/1",
    ...common(job, ctx),
    state: "observed",
    artifacts: [{ name: "stdout", sha256: createHash("sha256").update(body).digest("hex"), bytes: body.length, truncated: false }],
    enforcement: { namespaces: [], bpf: { tier: ctx.tier, attached: false } },
    mounts: [r.mount],
    redactions: { count: 0, kinds: [] },
    timing: { started_at: startedAt.toISOString(), ended_at: new Date().toISOString() },
    limitations,
  };
  return { kind: "ran", streams: { stdout: body, stderr: Buffer.alloc(0) }, evidence: signEvidence(envelope, ctx.hostKey), structured: r.structured, error: null, afterDelivery: r.afterDelivery };
}
