/**
 * What the guest checks before anything of a job runs, in this order: the
 * hub's signature with the job key pinned at enrolment, the document's shape,
 * the recomputed action_hash, that the job is for this host, that it names
 * the id it was delivered under, that it names its lease mode, that its deadline has not passed, and that
 * this guest has not accepted the same job before (replay). Any failure is
 * POLICY_REFUSED (guest check) and nothing is run.
 */
import { createHash, verify, type KeyObject } from "node:crypto";
import { canonicalBytes } from "../../server/canonical/jcs";
import { LeaseholdError } from "../../server/errors/index";
import type { CompiledSandboxPolicy } from "../../server/capabilities";
import type { SeenJobs } from "./state";

export interface VerifiedJob {
  job_id: string;
  action_id: string;
  action_hash: string;
  host_id: string;
  deadline: Date;
  /** All taken from the hashed prepared action, so what runs is what was approved. */
  operation: string;
  capability: { id: string; version: string };
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

function refuse(reason: string): never {
  throw new LeaseholdError("POLICY_REFUSED", `job refused by the guest before launch: ${reason}; nothing was run`, { tier: "guest", details: { check: reason } });
}

export function verifySignedJob(
  delivered: { id: string; document: unknown; signature: string },
  context: { jobKey: KeyObject; hostId: string; seen: SeenJobs; now?: number },
): VerifiedJob {
  const now = context.now ?? Date.now();
  let bytes: Uint8Array;
  try {
    bytes = canonicalBytes(delivered.document);
  } catch {
    refuse("the job is not canonical JSON");
  }
  let signature: Buffer;
  try {
    signature = Buffer.from(delivered.signature, "base64");
  } catch {
    refuse("the job signature is malformed");
  }
  if (signature.length !== 64 || !verify(null, bytes, context.jobKey, signature)) refuse("the hub signature does not verify with the pinned job key");
  const doc = delivered.document as Record<string, unknown>;
  if (doc["schema"] !== "leasehold.job/1") refuse("unknown job schema");
  const actionHash = `sha256:${createHash("sha256").update(canonicalBytes(doc["action"])).digest("hex")}`;
  if (actionHash !== doc["action_hash"]) refuse("action_hash does not match the prepared action");
  if (doc["host_id"] !== context.hostId) refuse("the job is for another host");
  if (doc["job_id"] !== delivered.id) refuse("the job was delivered under another id");
  const deadline = new Date(String(doc["deadline"]));
  if (Number.isNaN(deadline.getTime()) || deadline.getTime() <= now) refuse("the job deadline has passed");
  const action = doc["action"] as Partial<{ operation: string; capability: { id: string; version: string }; mutating: boolean; arguments: Record<string, unknown>; policy: CompiledSandboxPolicy; host: { id: string } }> | undefined;
  if (action === undefined || action === null || typeof action !== "object") refuse("the job has no prepared action");
  if (typeof action.operation !== "string" || typeof action.capability?.id !== "string" || typeof action.capability.version !== "string") refuse("the prepared action names no operation");
  if (action.arguments === null || typeof action.arguments !== "object" || action.policy === null || typeof action.policy !== "object") refuse("the prepared action has no arguments or policy");
  if (action.host?.id !== context.hostId) refuse("the prepared action is for another host");
  const lease = doc["lease"] as { id?: unknown; mode?: unknown } | undefined;
  if (lease === null || typeof lease !== "object" || typeof lease.id !== "string" || (lease.mode !== "exclusive" && lease.mode !== "observe")) refuse("the job names no lease mode");
  if (!context.seen.claim(delivered.id, deadline.getTime(), now)) refuse("replayed job (this guest already accepted this job id)");
  return {
    job_id: delivered.id,
    action_id: String(doc["action_id"]),
    action_hash: actionHash,
    host_id: context.hostId,
    deadline,
    operation: action.operation,
    capability: { id: action.capability.id, version: action.capability.version },
    mutating: action.mutating === true,
    writesWorkspace: action.mutating === true && lease.mode === "exclusive",
    arguments: action.arguments,
    policy: action.policy,
  };
}
