/**
 * What the guest checks before anything of a job runs, in this order: the
 * hub's signature with the job key pinned at enrolment, the document's shape,
 * the recomputed action_hash, that the job is for this host, that it names
 * the id it was delivered under, that it names its lease mode, that its
 * deadline has not passed (all `checkDeliveredJob` in server/trust/job.ts, the
 * one verifier hub and guest share), and that this guest has not accepted the
 * same job before (replay, from the guest's own state). Any failure is
 * POLICY_REFUSED (guest check) and nothing is run.
 */
import type { KeyObject } from "node:crypto";
import { LeaseholdError, checkDeliveredJob, type VerifiedJob } from "../../server/trust";
import type { SeenJobs } from "./state";

export type { VerifiedJob } from "../../server/trust";

function refuse(reason: string): never {
  throw new LeaseholdError("POLICY_REFUSED", `job refused by the guest before launch: ${reason}; nothing was run`, { tier: "guest", details: { check: reason } });
}

export function verifySignedJob(
  delivered: { id: string; document: unknown; signature: string },
  context: { jobKey: KeyObject; hostId: string; seen: SeenJobs; now?: number },
): VerifiedJob {
  const now = context.now ?? Date.now();
  const checked = checkDeliveredJob(delivered, { jobKey: context.jobKey, hostId: context.hostId, now });
  if (!checked.ok) refuse(checked.reason);
  if (!context.seen.claim(delivered.id, checked.job.deadline.getTime(), now)) refuse("replayed job (this guest already accepted this job id)");
  return checked.job;
}
