/**
 * The guest ⇄ hub wire protocol, shared by both sides (pure: no I/O).
 *
 * Every guest request after enrolment is signed with the host's Ed25519 key
 * over a canonical string that binds the method, the path with its query,
 * the time, a fresh nonce and the SHA-256 of the exact body bytes:
 *
 *   leasehold-host-request/1\n<METHOD>\n<path?query>\n<unix ms>\n<nonce>\n<sha256 hex of body>
 *
 * The hub refuses a timestamp outside ±MAX_CLOCK_SKEW_MS and a nonce it has
 * seen for that host within the window (stored in PostgreSQL, so any replica
 * refuses a replay). The host is named by its id; the key is the one
 * recorded at enrolment. Nothing about the request is trusted before the
 * signature verifies.
 */
import { z } from "zod";
import type { HostPathEntry, SnapshotSummary } from "./host-paths";

export const REQUEST_SIGNATURE_SCHEME = "leasehold-host-request/1";
export const MAX_CLOCK_SKEW_MS = 60_000;

export const HEADER_HOST = "x-leasehold-host";
export const HEADER_TIMESTAMP = "x-leasehold-timestamp";
export const HEADER_NONCE = "x-leasehold-nonce";
export const HEADER_SIGNATURE = "x-leasehold-signature";
/**
 * Set by the hub's own HTTP server on every request to the peer address it
 * accepted the connection from (bin/next-web.ts); whatever a client sent
 * under this name is replaced. Informational — where a guest connects from
 * (behind a reverse proxy it is the proxy's address) — never an access control.
 */
export const HEADER_PEER = "x-leasehold-peer";

/** Largest request body a guest may send (output chunks are ≤ 256 KiB of data, base64). */
export const MAX_AGENT_BODY_BYTES = 1024 * 1024;
/** Raw bytes per output chunk the guest sends. */
export const OUTPUT_CHUNK_BYTES = 256 * 1024;

/** `localhost`, `::1` or 127.0.0.0/8 (a URL's hostname, brackets removed): traffic that never leaves the machine. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export function requestSigningString(input: { method: string; pathAndQuery: string; timestamp: string; nonce: string; bodySha256: string }): string {
  return [REQUEST_SIGNATURE_SCHEME, input.method.toUpperCase(), input.pathAndQuery, input.timestamp, input.nonce, input.bodySha256].join("\n");
}

/** What a guest proves at enrolment: it holds the private key of the public key it registers. */
export function enrolmentProofString(codeSha256: string, witnessKey: string): string {
  return `leasehold-enrol/1\n${codeSha256}\n${witnessKey}`;
}

export const NONCE_PATTERN = /^[0-9a-f]{32}$/;
export const TIMESTAMP_PATTERN = /^[1-9][0-9]{12}$/;
/** Host names, as capability manifests accept them. */
export const HOST_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/**
 * The host ceiling in a few numbers for the admin's hosts page (sent inside
 * a health report's `probe` as `ceiling`): the limits themselves and how
 * many directories and egress rules it allows — counts, not the lists, so
 * the report stays small.
 */
export interface HostCeilingSummary {
  workspace_max_bytes: number;
  memory_bytes: number;
  cpus: number;
  pids: number;
  timeout_ms: number;
  output_bytes: number;
  exec_dirs: number;
  egress_rules: number;
}

/** The health report a guest posts (`POST /api/agent/health`). */
export interface GuestHealthReport {
  tier: "A" | "B" | "C" | null;
  kernel_features: string[];
  probe: Record<string, unknown>;
  /** `detail`: why a worker is not usable here (e.g. its bundle is missing), shown with the readiness reasons. */
  workers: Array<{ capability: string; capability_api: number; worker_abi: number; version: string; digest: string | null; self_test: "pass" | "fail" | "not_run"; detail?: string }>;
  /** The guest's witness state: the last checkpoint size it cosigned, or a failure that stopped it. */
  witness: { size: number; failure: string | null };
  accepting_jobs: boolean;
  guest_version: string;
  /** The host paths the ceiling lists (absent from a guest without host paths; `HostPathsReport` parses both fields). */
  host_paths?: HostPathEntry[];
  /** Retained snapshots of "rw" labels, most recent first, at most MAX_REPORTED_SNAPSHOTS. */
  snapshots?: SnapshotSummary[];
  /** The workspace's directories, taken while no job ran (absent when one did); see `WorkspaceDirsReport`. */
  workspace_dirs?: WorkspaceDirsReport;
}

/** At most this many directories are reported; a workspace with more is reported `complete: false`. */
export const MAX_REPORTED_WORKSPACE_DIRS = 2000;

/**
 * Every directory of the workspace (relative, `/`-joined, the spelling the
 * hub normalises a `cwd` to; the root is implied), listed while no job ran,
 * after the job `after_job` (the last this guest process finished; null when
 * it has finished none). The hub refuses a `cwd` missing from it only while
 * that job is the host's most recently claimed one and is complete — no job
 * can have changed the tree since (docs/design.md#prechecks).
 */
export const WorkspaceDirsReport = z.strictObject({
  after_job: z.string().uuid().nullable(),
  complete: z.boolean(),
  dirs: z.array(z.string().min(1).max(4096)).max(MAX_REPORTED_WORKSPACE_DIRS),
});
export type WorkspaceDirsReport = z.infer<typeof WorkspaceDirsReport>;

/** The result a guest posts for a job (`POST /api/agent/jobs/<id>/result`). */
export interface GuestJobResult {
  /** ran: the workload (or workspace operation) ran; refused: refused on the guest before anything ran. */
  kind: "ran" | "refused";
  /** SignedEvidence: {envelope, signature}. */
  evidence: unknown;
  /** Per stream: chunk count and byte total the guest sent, so the hub can check it has them all. */
  streams: Record<string, { chunks: number; bytes: number }>;
  /** Structured result of a workspace operation (fs_*), scrubbed; for a launched workload the sandbox report (runner.ts `sandboxReport`); null on a refusal. */
  structured: Record<string, unknown> | null;
  /** Refusal on the guest (POLICY_REFUSED, UNENFORCEABLE, ...). */
  error: { code: string; message: string; details?: Record<string, unknown> } | null;
}

const byteCount = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/**
 * A heartbeat's body (`POST /api/agent/jobs/<id>/heartbeat`): optionally the
 * bytes of output the workload has written so far (before scrubbing and the
 * output caps). Counts only — output itself travels with the result.
 */
export const HeartbeatBody = z
  .object({ output: z.object({ stdout_bytes: byteCount, stderr_bytes: byteCount }).strict().optional() })
  .strict();
export type HeartbeatBody = z.infer<typeof HeartbeatBody>;

/**
 * The hub's answer to a heartbeat. `alive`: the job is still this host's
 * running job. `stop`: the hub asks the guest to stop it now
 * (docs/design.md#cancel) — the guest kills the lease's cgroup and posts the
 * result as usual, signed, with `exit.cancelled`. Heartbeats go every 2 s
 * while a job runs, so a stop reaches a live guest within one interval.
 */
export const HeartbeatAnswer = z.object({ alive: z.boolean(), stop: z.literal(true).optional() }).strict();
export type HeartbeatAnswer = z.infer<typeof HeartbeatAnswer>;

/**
 * The hub's answer to a job acknowledgement (`POST /api/agent/jobs/<id>/ack`,
 * empty body). A long-poll only offers a job; the guest acknowledges it
 * before running anything, and runs it only on this answer. Any 4xx answer
 * (404: the offer was withdrawn, ended or never made) means: do not run it.
 * The hub re-queues an offer not acknowledged within its window (server/jobs
 * `OFFER_ACK_MS`), so a job whose offer never reached the guest is never
 * taken for one that may have run.
 */
export const JobAckAnswer = z.object({ acked: z.literal(true) }).strict();
export type JobAckAnswer = z.infer<typeof JobAckAnswer>;

/**
 * How long a guest keeps retrying an acknowledgement whose answer it did not
 * get (the network failed): as long as the hub would keep an acknowledged
 * job's claim alive without a heartbeat. An ack the hub stored before the
 * link failed is then still answered alike, and the job runs; past this the
 * guest drops the offer unrun.
 */
export const JOB_ACK_RETRY_MS = 10_000;
