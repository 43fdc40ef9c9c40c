/**
 * The signed job, `leasehold.job/1`: what the hub hands a guest and the one
 * check both sides run on it.
 *
 * A job document is the prepared action (which carries the compiled sandbox
 * policy), its `action_hash`, the worker payload, the host, a deadline and
 * the lease it runs under. The hub signs the RFC 8785 bytes of the document
 * with its job key (Ed25519); the guest verifies the signature with the key
 * it pinned at enrolment and recomputes the action hash before anything
 * runs, so a row edited in the database is refused on the host. Signing and
 * verifying live side by side here so the bytes signed are the bytes checked.
 */
import { sign, verify, type KeyObject } from "node:crypto";
import { canonicalBytes, canonicalDigest } from "./jcs";
import type { CompiledMount } from "./host-paths";
import type { KernelRequirements } from "./kernel-requirements";

export const JOB_SCHEMA = "leasehold.job/1";
export const JOB_PAYLOAD_SCHEMA = "leasehold.job-payload/1";
export const COMPILED_POLICY_SCHEMA = "leasehold.sandbox-policy/1";

export type CompiledNetwork = { mode: "none" } | { mode: "egress"; egress: string[] };

/**
 * The sandbox policy the hub compiled (server/capabilities/policy-compile.ts)
 * and the guest intersects once more with its host ceiling. Integers and
 * canonical strings only, arrays sorted.
 */
export interface CompiledSandboxPolicy {
  schema: typeof COMPILED_POLICY_SCHEMA;
  capability: string;
  capability_version: string;
  operation: string;
  network: CompiledNetwork;
  read_only_root: boolean;
  memory_bytes: number;
  tmpfs_tmp_bytes: number;
  cpu_millis: number;
  pids_limit: number;
  timeout_s: number;
  /** Sorted canonical absolute directories. */
  exec_allow: string[];
  /** What the host must enforce; a host short of it refuses with UNENFORCEABLE. */
  requires: KernelRequirements;
  /**
   * Host paths the job gets, sorted by label, each bound at `/host/<label>`
   * (docs/design.md#sandbox). The hub emits the list on every policy it
   * compiles (empty when none); a policy without the field binds nothing.
   */
  mounts?: CompiledMount[];
}

/**
 * What the worker receives (inside the hub-signed job, which adds the action
 * hash and deadline). Arguments that became policy (`timeout_s`, `egress`) or
 * that only the hub uses (`host`, `idempotency_key`) are not repeated here:
 * the compiled policy is their single source of truth.
 */
export interface JobPayload {
  schema: typeof JOB_PAYLOAD_SCHEMA;
  host: string;
  capability: { id: string; version: string; worker_abi: number };
  operation: string;
  mutating: boolean;
  arguments: Record<string, unknown>;
  sandbox: CompiledSandboxPolicy;
}

export interface JobDocument {
  schema: typeof JOB_SCHEMA;
  job_id: string;
  action_id: string;
  action_hash: string;
  host_id: string;
  /** The prepared action exactly as hashed (includes the compiled policy). */
  action: Record<string, unknown>;
  /** What the worker receives (capability adapter's job payload). */
  payload: JobPayload;
  deadline: string;
  key_id: string;
  /**
   * The host lease the action runs under. `exclusive`: the workload may write
   * the workspace (the guest hands it to the lease's uid and runs such jobs
   * one at a time); `observe`: it runs with the workspace read-only to it.
   */
  lease: { id: string; mode: "exclusive" | "observe" };
}

export interface SignedJob {
  document: JobDocument;
  /** base64 Ed25519 signature over canonicalBytes(document). */
  signature: string;
  /** sha256 of the canonical document, recorded in dispatch/1. */
  digest: `sha256:${string}`;
}

export type JobCheck<T extends object = object> = ({ ok: true } & T) | { ok: false; reason: string };

/** The hub signs the canonical bytes of the document with its job key. */
export function signJob(document: JobDocument, key: { privateKey: KeyObject }): SignedJob {
  const bytes = canonicalBytes(document);
  return {
    document,
    signature: sign(null, bytes, key.privateKey).toString("base64"),
    digest: canonicalDigest(document),
  };
}

/**
 * The document's integrity, in this order: canonical JSON, the hub's
 * signature with `jobKey`, the schema, the recomputed action_hash. Says
 * nothing about whom the job is for or when: `checkDeliveredJob` adds that.
 */
export function verifyJob(document: unknown, signature: string, jobKey: KeyObject): JobCheck {
  let bytes: Uint8Array;
  try {
    bytes = canonicalBytes(document);
  } catch {
    return { ok: false, reason: "the job is not canonical JSON" };
  }
  let signatureBytes: Buffer;
  try {
    signatureBytes = Buffer.from(signature, "base64");
  } catch {
    return { ok: false, reason: "the job signature is malformed" };
  }
  if (signatureBytes.length !== 64 || !verify(null, bytes, jobKey, signatureBytes)) return { ok: false, reason: "the hub signature does not verify with the pinned job key" };
  const doc = document as Record<string, unknown>;
  if (doc["schema"] !== JOB_SCHEMA) return { ok: false, reason: "unknown job schema" };
  if (canonicalDigest(doc["action"]) !== doc["action_hash"]) return { ok: false, reason: "action_hash does not match the prepared action" };
  return { ok: true };
}

/** A job that passed `checkDeliveredJob`: every field taken from the signed, hashed document. */
export interface VerifiedJob {
  job_id: string;
  action_id: string;
  action_hash: string;
  host_id: string;
  deadline: Date;
  /** All taken from the hashed prepared action, so what runs is what was approved. */
  operation: string;
  /**
   * `worker_digest`: the content digest of the worker bundle the hub pinned
   * for a bundle capability (`sha256:<64 hex>`); the guest runs only a bundle
   * that hashes to it. Absent for capabilities without a pinned bundle.
   */
  capability: { id: string; version: string; worker_digest?: string };
  mutating: boolean;
  /**
   * Whether the workload may write the workspace: only under the hub's
   * exclusive lease for a mutating operation. An observe job (read-only by
   * operation or by assessed risk) runs with the workspace read-only to it.
   */
  writesWorkspace: boolean;
  arguments: Record<string, unknown>;
  policy: CompiledSandboxPolicy;
}

/**
 * Everything a guest checks on a delivered job before it runs, except replay
 * (that needs the guest's own record of jobs seen): `verifyJob`, then that the
 * job is for this host, names the id it was delivered under, has a deadline
 * that has not passed, carries a prepared action with an operation,
 * arguments and policy for this host, and names its lease mode.
 */
export function checkDeliveredJob(
  delivered: { id: string; document: unknown; signature: string },
  context: { jobKey: KeyObject; hostId: string; now: number },
): JobCheck<{ job: VerifiedJob }> {
  const integrity = verifyJob(delivered.document, delivered.signature, context.jobKey);
  if (!integrity.ok) return integrity;
  const refuse = (reason: string) => ({ ok: false as const, reason });
  const doc = delivered.document as Record<string, unknown>;
  if (doc["host_id"] !== context.hostId) return refuse("the job is for another host");
  if (doc["job_id"] !== delivered.id) return refuse("the job was delivered under another id");
  const deadline = new Date(String(doc["deadline"]));
  if (Number.isNaN(deadline.getTime()) || deadline.getTime() <= context.now) return refuse("the job deadline has passed");
  const action = doc["action"] as Partial<{ operation: string; capability: { id: string; version: string; worker_digest?: unknown }; mutating: boolean; arguments: Record<string, unknown>; policy: CompiledSandboxPolicy; host: { id: string } }> | undefined;
  if (action === undefined || action === null || typeof action !== "object") return refuse("the job has no prepared action");
  if (typeof action.operation !== "string" || typeof action.capability?.id !== "string" || typeof action.capability.version !== "string") return refuse("the prepared action names no operation");
  const workerDigest = action.capability.worker_digest;
  if (workerDigest !== undefined && (typeof workerDigest !== "string" || !/^sha256:[0-9a-f]{64}$/.test(workerDigest))) return refuse("the prepared action names a malformed worker digest");
  if (action.arguments === null || typeof action.arguments !== "object" || action.policy === null || typeof action.policy !== "object") return refuse("the prepared action has no arguments or policy");
  if (action.host?.id !== context.hostId) return refuse("the prepared action is for another host");
  const lease = doc["lease"] as { id?: unknown; mode?: unknown } | undefined;
  if (lease === null || typeof lease !== "object" || typeof lease.id !== "string" || (lease.mode !== "exclusive" && lease.mode !== "observe")) return refuse("the job names no lease mode");
  return {
    ok: true,
    job: {
      job_id: delivered.id,
      action_id: String(doc["action_id"]),
      action_hash: String(doc["action_hash"]),
      host_id: context.hostId,
      deadline,
      operation: action.operation,
      capability: { id: action.capability.id, version: action.capability.version, ...(workerDigest === undefined ? {} : { worker_digest: workerDigest }) },
      mutating: action.mutating === true,
      writesWorkspace: action.mutating === true && lease.mode === "exclusive",
      arguments: action.arguments,
      policy: action.policy,
    },
  };
}
