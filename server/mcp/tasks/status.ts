import type { Task } from "@modelcontextprotocol/sdk/types.js";
import type { TaskView } from "./store";

/**
 * A task's status, read from the rows of its action (pure: the caller reads
 * them). Nothing here is stored, so every hub process gives the same answer:
 *
 *   held, approval pending       → input_required, with the approval link
 *   allowed / approved / queued  → working
 *   completed (a result sealed)  → completed
 *   failed / denied / expired,
 *   or an error stored           → failed (the tool result has isError)
 *   a cancellation took effect   → cancelled
 *
 * A task without an action ended before the pipeline named one (a refusal):
 * its stored result says completed or failed.
 */

export const POLL_INTERVAL_MS = 2_000;

type Status = Task["status"];

interface StoredPart {
  error?: { code: string; message: string };
  completion?: { state: string; error: unknown };
}

export function approvalUrl(publicUrl: string, approvalId: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/approvals#${approvalId}`;
}

function fromStoredResult(result: unknown): { status: Status; statusMessage: string } {
  const r = result as { isError?: boolean; structuredContent?: { code?: unknown; message?: unknown } };
  if (r.isError !== true) return { status: "completed", statusMessage: "completed; tasks/result returns the result" };
  return { status: "failed", statusMessage: `${String(r.structuredContent?.code)}: ${String(r.structuredContent?.message)}` };
}

function actionStatus(view: TaskView & { action: NonNullable<TaskView["action"]> }, now: Date, publicUrl: string): { status: Status; statusMessage: string } {
  const { action, approval } = view;
  const stored = (action.result ?? {}) as StoredPart;
  if (stored.error !== undefined) return { status: "failed", statusMessage: `${stored.error.code}: ${stored.error.message}` };
  switch (action.state) {
    case "held":
      if (approval !== null && approval.state === "pending" && approval.deadline.getTime() > now.getTime()) {
        return {
          status: "input_required",
          statusMessage: `held for a person's approval until ${approval.deadline.toISOString()}: approve or deny at ${approvalUrl(publicUrl, approval.id)}; tasks/result waits for the decision and then the result`,
        };
      }
      // Past its deadline nobody can approve it any more: expired (the next reader records it).
      return { status: "failed", statusMessage: `APPROVAL_EXPIRED: nobody decided on ${action.operation} before its deadline` };
    case "denied":
      return { status: "failed", statusMessage: `APPROVAL_DENIED: an admin denied ${action.operation}` };
    case "expired":
      return { status: "failed", statusMessage: `APPROVAL_EXPIRED: nobody decided on ${action.operation} before its deadline` };
    case "completed":
      return { status: "completed", statusMessage: "completed on its host; tasks/result returns the result" };
    case "failed":
    case "unknown":
      // A sealed failure without an error object is still a result (exit status and output), as the synchronous call returns it.
      if (stored.completion !== undefined && stored.completion.error === null) return { status: "completed", statusMessage: "completed on its host; tasks/result returns the result" };
      return { status: "failed", statusMessage: `${action.operation} ${action.state} on its host; tasks/result returns the error` };
    case "dispatched":
      return { status: "working", statusMessage: "dispatched to its host; waiting for the sealed result" };
    default:
      return { status: "working", statusMessage: `${action.state}; being dispatched to its host` };
  }
}

export function taskStatus(view: TaskView, now: Date, publicUrl: string): { status: Status; statusMessage: string } {
  if (view.task.cancelledAt !== null) return { status: "cancelled", statusMessage: "cancelled by request" };
  if (view.action !== null) return actionStatus({ ...view, action: view.action }, now, publicUrl);
  return fromStoredResult(view.task.result);
}

function latest(...dates: (Date | null | undefined)[]): Date {
  return new Date(Math.max(...dates.map((d) => d?.getTime() ?? 0)));
}

/** The Task object tasks/get, tasks/list and tasks/cancel answer with. */
export function taskObject(view: TaskView, now: Date, publicUrl: string): Task {
  const { status, statusMessage } = taskStatus(view, now, publicUrl);
  const terminal = status === "completed" || status === "failed" || status === "cancelled";
  return {
    taskId: view.task.id,
    status,
    statusMessage,
    createdAt: view.task.createdAt.toISOString(),
    lastUpdatedAt: latest(view.task.createdAt, view.action?.updatedAt, view.approval?.decidedAt, view.task.cancelledAt).toISOString(),
    ttl: view.task.ttlMs,
    ...(terminal ? {} : { pollInterval: POLL_INTERVAL_MS }),
  };
}

export function isTerminalStatus(status: Status): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}
