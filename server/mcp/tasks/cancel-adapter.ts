import { callerKey, cancelAction } from "../../actions";
import { isLeaseholdError } from "../../errors";
import { callerOf } from "../tools/actions";
import type { ToolContext } from "../tools/tool";

/**
 * The one place `tasks/cancel` asks for an action to be stopped
 * (docs/design.md#mcp-tasks): through server/actions `cancelAction`, the
 * path every other channel takes (docs/design.md#cancel). `ok: true` means
 * the action will not run, or its guest was told to kill it (the signed
 * result, `exit.cancelled`, follows), and the task may be marked cancelled;
 * anything else — finished first, another caller's action — is answered to
 * the client as an error and the task is left as it is, so a client never
 * believes a task stopped when it did not.
 *
 * `confirmMs: 0`: the specification has tasks/cancel answer with the task,
 * not wait for the host; a running action's stop is recorded and sealed
 * before this returns.
 */
export type CancelOutcome = { ok: true; state: "cancelled" | "stopping" } | { ok: false; message: string };

export async function cancelActionForTask(ctx: ToolContext, actionId: string): Promise<CancelOutcome> {
  try {
    const done = await cancelAction(ctx.runtime.database.handle.db, {
      actionId,
      by: { kind: "agent", id: ctx.token.id },
      reason: "tasks/cancel",
      owner: callerKey(callerOf(ctx)),
      confirmMs: 0,
    });
    return { ok: true, state: done.state };
  } catch (error) {
    if (isLeaseholdError(error)) return { ok: false, message: `${error.code}: ${error.message}` };
    throw error;
  }
}
