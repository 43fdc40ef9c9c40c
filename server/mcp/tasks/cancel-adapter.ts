import { and, eq } from "drizzle-orm";
import { callerKey } from "../../actions";
import { actions } from "../../db/schema";
import { callerOf } from "../tools/actions";
import type { ToolContext } from "../tools/tool";

/**
 * The one place `tasks/cancel` asks for an action to be stopped
 * (docs/design.md#mcp-tasks). `ok: true` means the action will not run (or
 * was stopped) and the task may be marked cancelled; anything else is
 * answered to the client as an error and the task is left as it is.
 *
 * The hub has no way yet for an agent to withdraw its own action: a held
 * action is decided only by a person (approve / deny, recorded as the
 * admin's approval/1), and a running job is not stopped from here. Both are
 * refused with a reason that says what does work instead, so a client never
 * believes a task stopped when it did not.
 */
export type CancelOutcome = { ok: true } | { ok: false; message: string };

export async function cancelActionForTask(ctx: ToolContext, actionId: string): Promise<CancelOutcome> {
  const db = ctx.runtime.database.handle.db;
  const [row] = await db
    .select({ state: actions.state })
    .from(actions)
    .where(and(eq(actions.id, actionId), eq(actions.callerKey, callerKey(callerOf(ctx)))));
  if (row?.state === "held") {
    return {
      ok: false,
      message: `cancelling a held task is not available yet: action ${actionId} waits for a person, who can deny it in the console or with \`leasehold approvals deny\`; unanswered, it expires at its approval deadline and never runs`,
    };
  }
  return { ok: false, message: `cancelling a running task is not available yet: action ${actionId} carries on to its result, which tasks/result returns` };
}
