import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type CreateTaskResult,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { z } from "zod";
import { isLeaseholdError } from "../../errors";
import { markClientWaiting } from "../../approvals";
import { continueAction } from "../tools/actions";
import { logToolFailure, toolError, toolSuccess } from "../tools/result";
import { actionText } from "../tools/text";
import type { HubTool, ToolContext } from "../tools/tool";
import { cancelActionForTask } from "./cancel-adapter";
import { POLL_INTERVAL_MS, isTerminalStatus, taskObject, taskStatus } from "./status";
import { clampTtl, insertTask, listTasks, markCancelled, parseCursor, readTask, type TaskView } from "./store";

/**
 * MCP Tasks (protocol 2025-11-25) for the pipeline tools
 * (docs/design.md#mcp-tasks). A task-augmented tools/call submits the
 * operation through the same pipeline call as a synchronous one and answers
 * once the pipeline has named the action; tasks/get reads the action's rows;
 * tasks/result waits as `approval_wait` does, round after round, and returns
 * exactly the tool result the synchronous call gives. Every task is its
 * token's alone.
 */

/** The server capability: task-augmented tools/call, tasks/list and tasks/cancel. */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** How long one round of tasks/result waits for a person's decision before looking again (whatever LEASEHOLD_MCP_APPROVAL_WAIT_S says: this call must block). */
const RESULT_ROUND_WAIT_MS = 20_000;
/** How often a waiting tasks/result looks whether this process has started draining. */
const DRAIN_CHECK_MS = 500;

/** Builds the tool context of one request (server.ts owns how). */
export type ContextOf = (extra: RequestHandlerExtra<ServerRequest, ServerNotification>, progressToken: string | number | undefined) => ToolContext;

function notFound(taskId: string): McpError {
  // Another token's task, an expired one and one that never existed are the same answer.
  return new McpError(ErrorCode.InvalidParams, `Failed to retrieve task: Task not found (${taskId.slice(0, 64)})`);
}

async function viewOrThrow(ctx: ToolContext, taskId: string): Promise<TaskView> {
  const view = await readTask(ctx.runtime.database.handle.db, taskId, ctx.token.id, new Date());
  if (view === undefined) throw notFound(taskId);
  return view;
}

function withRelatedTask(result: CallToolResult, taskId: string): CallToolResult {
  return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
}

/**
 * tools/call with `task`: starts the call and answers with the task at once.
 * A tool refused by name (unknown, or its capability not enabled) ends the
 * task with that refusal, as the synchronous call would answer it.
 */
export async function createToolTask(
  ctx: ToolContext,
  name: string,
  decision: { ok: true; tool: HubTool } | { ok: false; refusal: CallToolResult },
  args: Record<string, unknown>,
  requested: { ttl?: number | null },
): Promise<CreateTaskResult> {
  const db = ctx.runtime.database.handle.db;
  const ttlMs = clampTtl(requested.ttl);
  let row;
  if (!decision.ok) {
    row = await insertTask(db, { tokenId: ctx.token.id, tool: name, ttlMs, now: ctx.now, result: decision.refusal as Record<string, unknown> });
  } else {
    const start = decision.tool.startTask;
    if (start === undefined) throw new McpError(ErrorCode.MethodNotFound, `tool ${name} does not run as a task (its execution.taskSupport is forbidden): call it without "task"`);
    const started = await start(args, ctx);
    row =
      started.kind === "action"
        ? await insertTask(db, { tokenId: ctx.token.id, tool: name, ttlMs, now: ctx.now, actionId: started.actionId, replayed: started.replayed })
        : await insertTask(db, { tokenId: ctx.token.id, tool: name, ttlMs, now: ctx.now, result: toolError(logToolFailure(name, started.error)) as Record<string, unknown> });
  }
  const immediate =
    row.actionId === null
      ? `task ${row.id} ended before an action was created; tasks/result returns why`
      : `task ${row.id} follows action ${row.actionId}; tasks/get says where it stands (held for a person: input_required with the approval link), tasks/result returns the result. Without tasks, approval_wait {action_id} continues it.`;
  return {
    // A task begins `working` (the spec's lifecycle); tasks/get reports where it stands from here on.
    task: { taskId: row.id, status: "working", statusMessage: "accepted", createdAt: row.createdAt.toISOString(), lastUpdatedAt: row.createdAt.toISOString(), ttl: row.ttlMs, pollInterval: POLL_INTERVAL_MS },
    _meta: { "io.modelcontextprotocol/model-immediate-response": immediate, ...(row.actionId === null ? {} : { "leasehold/action_id": row.actionId }) },
  };
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

/**
 * tasks/result: blocks until the task is terminal, then returns the tool
 * result. Each round is an `approval_wait` round; an error is the answer
 * only once the task's rows say it is final (HOST_BUSY on an approved
 * action, say, is not: the action is dispatched later, and the task waits).
 * When this process starts draining, the wait ends at once with an error
 * that says to ask again: the task is in PostgreSQL, any process answers.
 */
async function taskResult(ctx: ToolContext, taskId: string): Promise<CallToolResult> {
  const round = new AbortController();
  const onAbort = (): void => round.abort();
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  const drainWatch = setInterval(() => {
    if (ctx.runtime.lifecycle.draining) round.abort();
  }, DRAIN_CHECK_MS);
  const roundCtx: ToolContext = { ...ctx, signal: round.signal };
  const stopIfEnded = (): void => {
    if (ctx.signal.aborted) throw new McpError(ErrorCode.RequestTimeout, "the client stopped waiting");
    if (ctx.runtime.lifecycle.draining) throw new McpError(ErrorCode.InternalError, `this hub process is stopping; ask tasks/result for ${taskId} again (any hub process answers)`);
  };
  try {
    for (;;) {
      const view = await viewOrThrow(ctx, taskId);
      const { status } = taskStatus(view, new Date(), ctx.runtime.config.publicUrl);
      if (status === "cancelled") throw new McpError(ErrorCode.InvalidRequest, `task ${taskId} was cancelled`);
      if (view.task.actionId === null) return withRelatedTask(view.task.result as CallToolResult, taskId);
      try {
        const shaped = await continueAction(roundCtx, view.task.actionId, RESULT_ROUND_WAIT_MS);
        // The synchronous call's own result: `replayed` as that call's submission found it.
        if (shaped.status !== "dispatched") return withRelatedTask(toolSuccess({ ...shaped, replayed: view.task.replayed }, actionText), taskId);
      } catch (error) {
        stopIfEnded();
        const after = await viewOrThrow(ctx, taskId);
        if (isTerminalStatus(taskStatus(after, new Date(), ctx.runtime.config.publicUrl).status)) return withRelatedTask(toolError(logToolFailure(view.task.tool, error)), taskId);
        // Still held (the round ended) or not yet dispatchable: look again after a pause, not at once.
        if (!(isLeaseholdError(error) && error.code === "APPROVAL_PENDING")) await pause(POLL_INTERVAL_MS, round.signal);
      }
      stopIfEnded();
    }
  } finally {
    clearInterval(drainWatch);
    ctx.signal.removeEventListener("abort", onAbort);
  }
}

/**
 * Handlers are registered with a schema that accepts any params and check
 * them here against the SDK's own schema, so malformed params are -32602
 * (Invalid params, as the spec asks) rather than the SDK's -32603.
 */
function anyParams<M extends string>(method: M) {
  return z.object({ method: z.literal(method), params: z.unknown().optional() });
}

function checked<T>(schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } }, request: unknown): T {
  const parsed = schema.safeParse(request);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.map(String).join(".") || "/"} ${i.message}`).join("; ");
  throw new McpError(ErrorCode.InvalidParams, `invalid params: ${issues.slice(0, 512)}`);
}

/** tasks/get, tasks/result, tasks/list and tasks/cancel on one session's SDK server. */
export function registerTaskHandlers(server: Server, contextOf: ContextOf): void {
  server.setRequestHandler(anyParams("tasks/get"), async (raw, extra) => {
    const request = checked(GetTaskRequestSchema, raw);
    const ctx = contextOf(extra, undefined);
    const view = await viewOrThrow(ctx, request.params.taskId);
    // A client polling its held task is waiting on it, as much as one inside tasks/result (docs/design.md#approval-liveness).
    if (view.approval?.state === "pending") await markClientWaiting(ctx.runtime.database.handle.db, view.approval.id, new Date());
    return taskObject(view, new Date(), ctx.runtime.config.publicUrl);
  });

  server.setRequestHandler(anyParams("tasks/result"), async (raw, extra) => {
    const request = checked(GetTaskPayloadRequestSchema, raw);
    const ctx = contextOf(extra, request.params._meta?.progressToken);
    return taskResult(ctx, request.params.taskId);
  });

  server.setRequestHandler(anyParams("tasks/list"), async (raw, extra) => {
    const request = checked(ListTasksRequestSchema, raw);
    const ctx = contextOf(extra, undefined);
    const cursor = request.params?.cursor;
    const after = cursor === undefined ? null : parseCursor(cursor);
    if (cursor !== undefined && after === null) throw new McpError(ErrorCode.InvalidParams, "Failed to list tasks: invalid cursor");
    const now = new Date();
    const page = await listTasks(ctx.runtime.database.handle.db, ctx.token.id, now, after);
    return { tasks: page.views.map((view) => taskObject(view, now, ctx.runtime.config.publicUrl)), ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }) };
  });

  server.setRequestHandler(anyParams("tasks/cancel"), async (raw, extra) => {
    const request = checked(CancelTaskRequestSchema, raw);
    const ctx = contextOf(extra, undefined);
    const taskId = request.params.taskId;
    const view = await viewOrThrow(ctx, taskId);
    const { status } = taskStatus(view, new Date(), ctx.runtime.config.publicUrl);
    if (isTerminalStatus(status)) throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${status}`);
    // Non-terminal implies an action (a task without one is created terminal).
    const actionId = view.task.actionId as string;
    const outcome = await cancelActionForTask(ctx, actionId);
    if (!outcome.ok) throw new McpError(ErrorCode.InvalidRequest, outcome.message, { action_id: actionId });
    await markCancelled(ctx.runtime.database.handle.db, taskId, ctx.token.id, new Date());
    return taskObject(await viewOrThrow(ctx, taskId), new Date(), ctx.runtime.config.publicUrl);
  });
}
