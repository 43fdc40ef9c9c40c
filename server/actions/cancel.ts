/**
 * Cancelling an action (docs/design.md#cancel): the one function every
 * channel calls — the MCP tool `action_cancel`, an MCP request's
 * `notifications/cancelled`, MCP Tasks' `tasks/cancel`, token revocation,
 * the end of an MCP session, the admin's stop button.
 *
 * In one transaction, which locks the action's job, approval and row in the
 * order the result intake and a decision lock them (no deadlock with either):
 *   held, allowed or approved (never queued): the approval is withdrawn from
 *     the queue (approval state `cancelled`), the action `cancelled` with
 *     CANCELLED stored as its error — nothing ran, and a dispatch racing
 *     this one finds the action no longer allowed or approved;
 *   dispatched, its job not yet taken by a guest: the job is ended
 *     (`cancelled`), the action likewise — nothing ran;
 *   dispatched and running: the job is marked to stop; its guest hears it on
 *     its stop watch at once (server/jobs/stop.ts), or on the next heartbeat
 *     answer (≤ 2 s), kills the lease's cgroup and posts
 *     its signed result as usual, which the intake stores as `cancelled`;
 *   finished (completed, failed, denied, expired, cancelled, unknown):
 *     ACTION_FINISHED, nothing changed.
 * Each cancel seals cancel/1 (stage, which path, the reason's digest, the
 * actor) in that same transaction, before anything is announced. A second
 * cancel of a running action that is already stopping seals nothing new and
 * waits like the first.
 *
 * Fail closed: a running action's cancel waits (`confirmMs`, default 10 s)
 * for the guest's result; when none comes, HOST_UNAVAILABLE says the stop is
 * recorded but not confirmed and the workload may still run. A caller that
 * cannot wait (revocation, session end) passes `confirmMs: 0` and gets
 * `stopping`.
 */
import { and, eq, inArray } from "drizzle-orm";
import { announceDecision, withdrawApproval } from "../approvals";
import type { Database } from "../db";
import { actions, approvals, jobs } from "../db/schema";
import { LeaseholdError } from "../errors";
import { announce } from "../jobs/notify";
import type { StoredCompletion } from "../jobs/intake";
import { dropUnclaimedJob, requestStop, stopWasRequested } from "../jobs/stop";
import { actionTopic, subscribeTopic } from "../jobs/wake";
import { appendEntry } from "../ledger/append";
import { digestOf, hashActor } from "../ledger/entry";
import type { StoredResult } from "./types";

/** Who asked. `id`: the token (agent, session_closed), the admin (admin), the revoking admin or `system` (token_revoked). */
export interface CancelledBy {
  kind: "agent" | "admin" | "token_revoked" | "session_closed";
  id: string;
}

export interface CancelRequest {
  actionId: string;
  by: CancelledBy;
  /** Why, in the canceller's words (kept on the action, sealed as a digest); at most 500 characters are kept. */
  reason: string;
  /** Only an action of this caller (`actions.caller_key`, e.g. `token:<id>`): another's is NOT_FOUND, like one that does not exist. */
  owner?: string;
  /** How long to wait for a running action's guest to confirm the stop (default 10 s); 0 answers `stopping` at once. */
  confirmMs?: number;
  signal?: AbortSignal;
}

export type CancelStage = "held" | "queued" | "running";

export interface CancelResult {
  actionId: string;
  /** `stopping`: the guest was told (running, `confirmMs: 0`) and its result is still to come. */
  state: "cancelled" | "stopping";
  stage: CancelStage;
  approvalId: string | null;
  jobId: string | null;
  /** A stopped running action: what ran, as the host signed it (exit with `cancelled`, output so far). */
  completion?: StoredCompletion;
}

export const CANCEL_CONFIRM_MS = 10_000;
const REASON_MAX = 500;
const POLL_MS = 250;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const FINISHED = new Set(["completed", "failed", "denied", "expired", "cancelled", "unknown"]);
const NOT_YET_QUEUED = new Set(["held", "allowed", "approved"]);

function actorOf(by: CancelledBy): `sha256:${string}` {
  if (by.kind === "admin") return hashActor("admin", by.id);
  if (by.kind === "token_revoked") return by.id === "system" ? hashActor("system", "hub") : hashActor("admin", by.id);
  return hashActor("token", by.id);
}

/** The error a cancelled action answers with, to its waiting call and to every later `approval_wait`. */
export function cancelledError(actionId: string, by: CancelledBy["kind"], reason: string, stage: CancelStage): LeaseholdError {
  return new LeaseholdError("CANCELLED", `the action was cancelled (${by.replace("_", " ")}${reason === "" ? "" : `: ${reason}`}) before it ran; nothing ran`, {
    tier: "hub",
    details: { action_id: actionId, by, reason, stage },
  });
}

function finishedError(actionId: string, state: string, extra: Record<string, unknown> = {}): LeaseholdError {
  return new LeaseholdError("ACTION_FINISHED", `action ${actionId} has already finished (${state}); there is nothing to cancel`, {
    tier: "hub",
    hint: "approval_status shows how it ended",
    details: { action_id: actionId, state, ...extra },
  });
}

interface Decided {
  stage: CancelStage;
  approvalId: string | null;
  jobId: string | null;
  /** A stop already requested by an earlier cancel: nothing new was sealed. */
  repeated: boolean;
}

/**
 * Cancels one action; see the file comment. NOT_FOUND for an unknown id (or
 * another caller's, with `owner`); ACTION_FINISHED for a finished one;
 * HOST_UNAVAILABLE when a running action's guest did not confirm the stop.
 */
export async function cancelAction(db: Database, request: CancelRequest): Promise<CancelResult> {
  const reason = request.reason.slice(0, REASON_MAX);
  if (!UUID.test(request.actionId)) throw new LeaseholdError("NOT_FOUND", `no action ${JSON.stringify(request.actionId.slice(0, 64))}`, { tier: "hub" });
  const actionId = request.actionId.toLowerCase();
  // Subscribed before the transaction, so a result stored right after it cannot slip past the wait.
  const woken = subscribeTopic(actionTopic(actionId));
  try {
    const decided = await db.transaction((txRaw) => decide(txRaw as unknown as Database, actionId, request, reason));
    if (decided.approvalId !== null && decided.stage === "held") await announceDecision(db, decided.approvalId);
    await announce(db, actionTopic(actionId));
    const base = { actionId, stage: decided.stage, approvalId: decided.approvalId, jobId: decided.jobId };
    if (decided.stage !== "running") return { ...base, state: "cancelled" };
    const confirmMs = request.confirmMs ?? CANCEL_CONFIRM_MS;
    if (confirmMs <= 0) return { ...base, state: "stopping" };
    const completion = await waitForStop(db, actionId, confirmMs, woken, request.signal);
    return { ...base, state: "cancelled", completion };
  } finally {
    woken.close();
  }
}

async function decide(tx: Database, actionId: string, request: CancelRequest, reason: string): Promise<Decided> {
  // Lock order: job, approval, action — as the intake (job, action) and a decision (approval, action) do.
  const [job] = await tx.select({ id: jobs.id, state: jobs.state, result: jobs.result }).from(jobs).where(eq(jobs.actionId, actionId)).for("update");
  const [approval] = await tx.select({ id: approvals.id }).from(approvals).where(eq(approvals.actionId, actionId)).for("update");
  const [row] = await tx.select().from(actions).where(eq(actions.id, actionId)).for("update");
  if (row === undefined || (request.owner !== undefined && row.callerKey !== request.owner)) {
    throw new LeaseholdError("NOT_FOUND", `no action ${actionId}${request.owner === undefined ? "" : " of yours"}`, { tier: "hub" });
  }
  if (FINISHED.has(row.state)) throw finishedError(actionId, row.state);
  const stored = (row.result ?? {}) as Partial<StoredResult>;
  let stage: CancelStage;
  if (NOT_YET_QUEUED.has(row.state)) {
    stage = "held";
    await withdrawApproval(tx, actionId);
  } else if (row.state === "dispatched" && job !== undefined && (job.state === "queued" || job.state === "offered")) {
    stage = "queued";
    if (!(await dropUnclaimedJob(tx, job.id))) throw new LeaseholdError("INTERNAL", "the job changed state under its lock", { tier: "hub" });
  } else if (row.state === "dispatched" && job !== undefined && job.state === "claimed") {
    stage = "running";
    if (stopWasRequested(job.result)) return { stage, approvalId: approval?.id ?? null, jobId: job.id, repeated: true };
    await requestStop(tx, job.id);
  } else {
    // A dispatched action whose job already ended is finished as far as a cancel goes (its result is being stored).
    throw finishedError(actionId, job?.state ?? row.state);
  }
  const at = new Date();
  const cancel = { by: request.by.kind, reason, at: at.toISOString(), stage };
  if (stage === "running") {
    await tx.update(actions).set({ result: { ...stored, cancel }, updatedAt: at }).where(eq(actions.id, actionId));
  } else {
    const error = cancelledError(actionId, request.by.kind, reason, stage).toPayload();
    const [done] = await tx
      .update(actions)
      .set({ state: "cancelled", result: { ...stored, cancel, error }, updatedAt: at })
      .where(and(eq(actions.id, actionId), inArray(actions.state, [...NOT_YET_QUEUED, "dispatched"])))
      .returning({ id: actions.id });
    if (done === undefined) throw new LeaseholdError("INTERNAL", "the action changed state under its lock", { tier: "hub" });
  }
  await appendEntry(tx, {
    type: "cancel/1",
    time: at,
    action_id: actionId,
    actor: actorOf(request.by),
    data: {
      stage,
      by: request.by.kind,
      action_hash: row.actionHash as `sha256:${string}`,
      approval_id: approval?.id ?? null,
      job_id: job?.id ?? null,
      reason_digest: digestOf(reason),
    },
  });
  return { stage, approvalId: approval?.id ?? null, jobId: job?.id ?? null, repeated: false };
}

/** Waits for a stopped action's result; fails closed when the guest does not confirm in time. */
async function waitForStop(db: Database, actionId: string, confirmMs: number, woken: ReturnType<typeof subscribeTopic>, signal?: AbortSignal): Promise<StoredCompletion> {
  const until = Date.now() + confirmMs;
  for (;;) {
    const [row] = await db.select({ state: actions.state, result: actions.result }).from(actions).where(eq(actions.id, actionId));
    const state = row?.state ?? "missing";
    const completion = (row?.result as { completion?: StoredCompletion } | null)?.completion;
    if (state === "cancelled" && completion !== undefined) return completion;
    if (state === "unknown") {
      throw new LeaseholdError("HOST_UNAVAILABLE", "the host stopped answering while it held this job; whether the stop reached it is unknown", {
        tier: "hub",
        retryable: false,
        details: { action_id: actionId, action_state: "unknown", stop_requested: true },
      });
    }
    // It ended before the stop reached it: what it did is its ordinary result.
    if (FINISHED.has(state)) throw finishedError(actionId, state, { stop_requested: true, finished_first: true });
    const left = until - Date.now();
    if (left <= 0 || signal?.aborted) {
      throw new LeaseholdError("HOST_UNAVAILABLE", `the stop is recorded and sealed, but the host's guest has not confirmed it within ${Math.round(confirmMs / 1000)} s; the workload may still be running`, {
        tier: "hub",
        retryable: false,
        hint: "the guest hears the stop on its stop watch or its next heartbeat (every 2 s) once it reaches the hub; approval_status shows when the action ends",
        details: { action_id: actionId, action_state: "running", stop_requested: true },
      });
    }
    await woken.wait(Math.min(left, POLL_MS), signal);
  }
}
