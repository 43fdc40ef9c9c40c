import { and, eq } from "drizzle-orm";
import { actionPipelineFor, callerKey, cancelAction, summariseCompletion, toolInputSchema, type ActionOutcome, type Caller, type StoredResult, type SubmitOptions } from "../../actions";
import { expireApproval, getApproval, markClientWaiting } from "../../approvals";
import type { OperationInputSchema, OperationResolution } from "../../capabilities";
import { actions, hosts } from "../../db/schema";
import { isLeaseholdError, LeaseholdError } from "../../errors";
import { ACTION_CANCEL_SCHEMA, ACTION_OUTCOME_SCHEMA, APPROVAL_STATUS_SCHEMA } from "./output-schemas";
import { actionCancelText, actionText, approvalStatusText } from "./text";
import type { HubTool, ProgressMeta, TaskStart, ToolContext } from "./tool";

/**
 * Capability operations as MCP tools, and the two tools that follow a held
 * action (`approval_wait`, `approval_status`). Every operation call goes
 * through the one action pipeline (`actionPipelineFor(runtime).submit`) with
 * this token as the caller and this MCP session as its session; nothing
 * here decides policy.
 *
 * How long one tools/call waits (so it answers before a client's default
 * 60 s request timeout and never hangs):
 *   - for a person's decision: LEASEHOLD_MCP_APPROVAL_WAIT_S (default 25 s;
 *     0 answers at once), then APPROVAL_PENDING;
 *   - for the host's result after dispatch: as long again, at least
 *     RESULT_WAIT_MIN_MS; then the honest dispatched state (status
 *     "dispatched", no result) — `approval_wait` waits again.
 * Progress notifications go out every PROGRESS_EVERY_MS while it waits.
 * While held, a client that declared URL-mode elicitation is also offered
 * the approval card's URL once (server/mcp/elicit.ts), and told it is over
 * once the action is decided.
 */

const RESULT_WAIT_MIN_MS = 5_000;
const PROGRESS_EVERY_MS = 3_000;
const ACTION_ID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

export function callerOf(ctx: ToolContext): Extract<Caller, { kind: "token" }> {
  return {
    kind: "token",
    tokenId: ctx.token.id,
    readOnly: ctx.token.readOnly,
    tools: ctx.token.tools,
    hosts: ctx.token.hosts,
    observe: ctx.token.observe,
    sessionId: ctx.sessionDigest,
    label: ctx.token.name,
  };
}

/** What an agent gets for an action that got past the pipeline. */
export function shapeOutcome(outcome: ActionOutcome): Record<string, unknown> {
  const shaped: Record<string, unknown> = {
    action_id: outcome.action_id,
    status: outcome.status,
    operation: outcome.operation,
    host: outcome.host,
    decision: outcome.decision,
    risk: outcome.risk,
    // Outcomes stored before the lease was recorded have none: left out rather than guessed.
    ...(outcome.sandbox === undefined ? {} : { sandbox: outcome.sandbox }),
    approval_id: outcome.approval_id,
    grant_id: outcome.grant_id,
    lease_id: outcome.lease_id,
    job: outcome.job,
    action_hash: outcome.action_hash,
    replayed: outcome.replayed,
  };
  const result = outcome.result;
  if ((outcome.status === "completed" || outcome.status === "cancelled") && result !== undefined) {
    shaped.result = { state: result.state, exit: result.exit, output: result.output, structured: result.structured };
    // The summary, and the host-signed envelope itself so anyone can check the host's signature from the result alone (docs/verify.md).
    const { envelope, signature, ...summary } = result.evidence;
    shaped.evidence = signature === null ? summary : { ...summary, signed: { envelope, signature } };
    shaped.ledger_entry_id = result.ledger_entry_id;
    shaped.receipt = result.receipt;
    if (result.receipt === null) shaped.hint = "the evidence entry was not yet in a signed checkpoint; audit_checkpoint and audit_proof show it once integrated";
    else shaped.hint = "check the receipt with audit_proof {leaf_index, tree_size} against audit_checkpoint";
  } else {
    shaped.hint = "queued for the host; no result has been sealed yet. approval_wait {action_id} waits for it";
  }
  return shaped;
}

/** The stored dispatched outcome of one of this caller's actions, if it got that far. */
async function dispatchedOutcome(ctx: ToolContext, actionId: string): Promise<ActionOutcome | undefined> {
  const db = ctx.runtime.database.handle.db;
  const [row] = await db
    .select({ result: actions.result })
    .from(actions)
    .where(and(eq(actions.id, actionId), eq(actions.callerKey, callerKey(callerOf(ctx)))));
  return (row?.result as StoredResult | null | undefined)?.outcome;
}

function runningMessage(r: { host: string; stdout_bytes: number; stderr_bytes: number }): string {
  return `running on ${r.host}: ${r.stdout_bytes + r.stderr_bytes} bytes of output so far (stdout ${r.stdout_bytes}, stderr ${r.stderr_bytes}); scrubbed output comes with the result`;
}

/**
 * The approval card offered to the person at the agent's screen (URL
 * elicitation) once the action is held; once decided (dispatched, denied,
 * expired) the client may close what it showed.
 */
function cardOffer(ctx: ToolContext): { offerCard: (actionId: string, url: string, approvalId: string) => void; decidedNow: () => void } {
  let endOffer: (() => void) | undefined;
  return {
    offerCard: (actionId, url, approvalId) => {
      endOffer ??= ctx.offerUrl({
        key: approvalId,
        url,
        message: `Leasehold holds action ${actionId} for a person's approval. Open its card to review it and decide (you sign in there); the agent's call goes on once it is decided, whatever you answer here.`,
      });
    },
    decidedNow: () => {
      endOffer?.();
      endOffer = undefined;
    },
  };
}

/**
 * Cancels the action a call started when its client cancelled the call:
 * `wanted` when the notification came, `named` when the pipeline names the
 * action; the cancel goes once both happened (either order), without waiting
 * for a running action's stop to be confirmed.
 */
function clientCancelRelay(ctx: ToolContext): { wanted(): void; named(actionId: string): void } {
  let wanted = false;
  let actionId: string | undefined;
  let sent = false;
  const send = (): void => {
    if (!wanted || sent || actionId === undefined) return;
    sent = true;
    const reason = typeof ctx.signal.reason === "string" && ctx.signal.reason !== "" ? `notifications/cancelled: ${ctx.signal.reason}` : "notifications/cancelled";
    void cancelAction(ctx.runtime.database.handle.db, { actionId, by: { kind: "agent", id: ctx.token.id }, reason, owner: callerKey(callerOf(ctx)), confirmMs: 0 }).catch((error: unknown) => {
      // Finished before the cancel reached it: nothing left to cancel.
      if (isLeaseholdError(error) && error.code === "ACTION_FINISHED") return;
      console.error(`leasehold: cancelling a call's action after notifications/cancelled failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
    });
  };
  return {
    wanted() {
      wanted = true;
      send();
    },
    named(id) {
      actionId ??= id;
      send();
    },
  };
}

/**
 * Runs one pipeline call with the MCP wait budget and progress. A wait cut
 * short by the budget after dispatch becomes the dispatched state; every
 * other error is the pipeline's own (a LeaseholdError with a stable code).
 */
export async function withWaitBudget(
  ctx: ToolContext,
  call: (options: SubmitOptions) => Promise<ActionOutcome>,
  approvalWaitMs: number = ctx.runtime.config.mcp.approvalWaitS * 1000,
): Promise<Record<string, unknown>> {
  const budget = new AbortController();
  // The client cancelled this call (notifications/cancelled): the action it started is cancelled too,
  // once the pipeline has named it (docs/design.md#cancel). A transport that closed cancels nothing.
  const relay = clientCancelRelay(ctx);
  const onCallerAbort = (): void => {
    if (ctx.clientCancelled()) relay.wanted();
    budget.abort();
  };
  ctx.signal.addEventListener("abort", onCallerAbort, { once: true });
  const timer = setTimeout(() => budget.abort(), approvalWaitMs + Math.max(approvalWaitMs, RESULT_WAIT_MIN_MS));
  let held: { waitedMs: number; deadline: string; at: number } | undefined;
  let running: { host: string; stdout_bytes: number; stderr_bytes: number } | undefined;
  // The action this call is about, once the pipeline names it: every notification carries it, and the
  // first one says in words how to continue (a client cut off from this process asks any other).
  let about: ProgressMeta | undefined;
  let told = false;
  const { offerCard, decidedNow } = cardOffer(ctx);
  const say = (message: string): void => {
    if (about === undefined) return ctx.progress(message);
    const lead = told ? "" : `action ${about["leasehold/action_id"]}${about["leasehold/approval_url"] === undefined ? "" : ` (approve at ${about["leasehold/approval_url"]})`}; if this call is cut off, continue it with approval_wait {action_id} on any hub process. `;
    told = true;
    ctx.progress(`${lead}${message}`, about);
  };
  const tick = (): void => {
    if (held !== undefined && Date.now() - held.at < 2_000) {
      say(`held for a person's approval: waited ${Math.round(held.waitedMs / 1000)} s of ${approvalWaitMs / 1000} s; the approval deadline is ${held.deadline}`);
    } else if (running !== undefined) {
      say(runningMessage(running));
    } else {
      say("waiting for the host's sealed result");
    }
  };
  const ticker = setInterval(tick, PROGRESS_EVERY_MS);
  try {
    const outcome = await call({
      waitMs: approvalWaitMs,
      signal: budget.signal,
      onProgress: (p) => {
        const first = about === undefined;
        const approvalUrl = p.stage === "approval" ? `${ctx.runtime.config.publicUrl.replace(/\/+$/, "")}/approvals#${p.approvalId}` : undefined;
        about = approvalUrl === undefined ? { "leasehold/action_id": p.actionId } : { "leasehold/action_id": p.actionId, "leasehold/approval_url": approvalUrl };
        if (p.stage === "approval" && approvalUrl !== undefined) offerCard(p.actionId, approvalUrl, p.approvalId);
        else decidedNow();
        relay.named(p.actionId);
        if (p.stage === "running") {
          // Each report is news (the waiter passes on changes only): say it now.
          running = { host: p.host, stdout_bytes: p.stdout_bytes, stderr_bytes: p.stderr_bytes };
          held = undefined;
          tick();
          return;
        }
        if (p.stage === "dispatched") {
          held = undefined;
          if (first) tick();
          return;
        }
        const firstHeld = held === undefined;
        held = { waitedMs: p.waitedMs, deadline: p.deadline, at: Date.now() };
        if (first || firstHeld) tick();
      },
    });
    decidedNow();
    return shapeOutcome(outcome);
  } catch (error) {
    if (isLeaseholdError(error) && (error.code === "APPROVAL_DENIED" || error.code === "APPROVAL_EXPIRED")) decidedNow();
    const actionId = isLeaseholdError(error) ? error.details?.["action_id"] : undefined;
    if (typeof actionId === "string") relay.named(actionId);
    if (isLeaseholdError(error) && error.code === "TIMEOUT" && budget.signal.aborted && !ctx.signal.aborted && typeof actionId === "string") {
      const outcome = await dispatchedOutcome(ctx, actionId);
      if (outcome !== undefined) return shapeOutcome({ ...outcome, status: "dispatched", replayed: false });
    }
    throw error;
  } finally {
    clearTimeout(timer);
    clearInterval(ticker);
    ctx.signal.removeEventListener("abort", onCallerAbort);
  }
}

/**
 * Submits an operation for an MCP task (docs/design.md#mcp-tasks): the same
 * pipeline call as a synchronous tools/call, which stops waiting as soon as
 * the pipeline names the action — held for a person, or queued for its host.
 * The action carries on; the task reads its rows from then on. A call that
 * ends before an action is named (a refusal, a bad argument) ends the task
 * with the same error the synchronous call returns.
 */
export async function startAction(ctx: ToolContext, submit: (options: SubmitOptions) => Promise<ActionOutcome>): Promise<TaskStart> {
  const named = new AbortController();
  let actionId: string | undefined;
  try {
    const outcome = await submit({
      waitMs: 0,
      signal: named.signal,
      onProgress: (p) => {
        actionId = p.actionId;
        named.abort();
      },
    });
    return { kind: "action", actionId: outcome.action_id, replayed: outcome.replayed };
  } catch (error) {
    const detailed = isLeaseholdError(error) ? error.details?.["action_id"] : undefined;
    const id = typeof detailed === "string" ? detailed : actionId;
    // Held (APPROVAL_PENDING at once, with waitMs 0) or queued (the wait this call stopped): the action goes on.
    if (isLeaseholdError(error) && id !== undefined && (error.code === "APPROVAL_PENDING" || (error.code === "TIMEOUT" && named.signal.aborted))) return { kind: "action", actionId: id, replayed: false };
    return { kind: "ended", error };
  }
}

/**
 * One round of waiting on a task's action, as `approval_wait` waits: for the
 * decision (at most `approvalWaitMs`), then for the host's result. Returns the
 * shaped outcome (status "dispatched" when the round ended first) or throws
 * the pipeline's error (APPROVAL_PENDING when still held).
 */
export function continueAction(ctx: ToolContext, actionId: string, approvalWaitMs: number): Promise<Record<string, unknown>> {
  const pipeline = actionPipelineFor(ctx.runtime);
  return withWaitBudget(ctx, (options) => pipeline.resume(callerOf(ctx), actionId, options), approvalWaitMs);
}

const OPERATION_NOTE =
  " Runs through the hub's policy pipeline: a risky call may be held for a person's approval (progress while it waits, then APPROVAL_PENDING with an action_id for approval_wait). A completed call returns the scrubbed output, an evidence summary and a ledger receipt.";

/** One MCP tool per operation of an active capability, its manifest schema as the input schema. */
export function operationTool(resolution: OperationResolution): HubTool {
  const { operation, manifest } = resolution;
  return {
    name: operation.name,
    title: `${operation.name} (${manifest.id} ${manifest.version})`,
    description: `${operation.description}${OPERATION_NOTE}`,
    // A mutating operation also takes the agent's one-line `reason` (server/actions/agent-reason.ts).
    inputSchema: toolInputSchema(operation),
    mutating: operation.mutating,
    annotations: { readOnlyHint: !operation.mutating, destructiveHint: operation.mutating, idempotentHint: false, openWorldHint: false },
    pipelineValidates: true,
    outputSchema: ACTION_OUTCOME_SCHEMA,
    text: actionText,
    run(args, ctx) {
      const pipeline = actionPipelineFor(ctx.runtime);
      return withWaitBudget(ctx, (options) => pipeline.submit(callerOf(ctx), { operation: operation.name, arguments: args, channel: "mcp" }, options));
    },
    startTask(args, ctx) {
      const pipeline = actionPipelineFor(ctx.runtime);
      return startAction(ctx, (options) => pipeline.submit(callerOf(ctx), { operation: operation.name, arguments: args, channel: "mcp" }, options));
    },
  };
}

const ACTION_ID_INPUT: OperationInputSchema = {
  type: "object",
  additionalProperties: false,
  required: ["action_id"],
  properties: { action_id: { type: "string", maxLength: 36, pattern: ACTION_ID_PATTERN, description: "The action_id an APPROVAL_PENDING (or dispatched) result named." } },
};

export const approvalWaitTool: HubTool = {
  name: "approval_wait",
  title: "Wait for a held action",
  description:
    "Continues waiting for one of your actions: while it is held, for a person's decision (with progress), then for the host's result. Returns the result, APPROVAL_PENDING again, APPROVAL_DENIED (with the approver's reason) or APPROVAL_EXPIRED. Only the token that submitted the action may wait on it.",
  inputSchema: ACTION_ID_INPUT,
  // It can only move forward an action this token already submitted.
  mutating: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  outputSchema: ACTION_OUTCOME_SCHEMA,
  text: actionText,
  run(args, ctx) {
    const pipeline = actionPipelineFor(ctx.runtime);
    return withWaitBudget(ctx, (options) => pipeline.resume(callerOf(ctx), String(args.action_id), options));
  },
};

export const approvalStatusTool: HubTool = {
  name: "approval_status",
  title: "Status of an action",
  description: "Where one of your actions stands — held (with its approval deadline), approved, denied (with the reason), expired, dispatched, completed — without waiting or changing anything.",
  inputSchema: ACTION_ID_INPUT,
  mutating: false,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  outputSchema: APPROVAL_STATUS_SCHEMA,
  text: approvalStatusText,
  async run(args, ctx) {
    const db = ctx.runtime.database.handle.db;
    const actionId = String(args.action_id);
    const [row] = await db
      .select({ action: actions, host: hosts.name })
      .from(actions)
      .leftJoin(hosts, eq(hosts.id, actions.hostId))
      .where(eq(actions.id, actionId));
    // Another caller's action is indistinguishable from none.
    if (row === undefined || row.action.callerKey !== callerKey(callerOf(ctx))) throw new LeaseholdError("NOT_FOUND", `no action ${actionId} of yours`, { tier: "hub" });
    const stored = (row.action.result ?? {}) as Partial<StoredResult>;
    let approval = stored.approval_id ? await getApproval(db, stored.approval_id) : undefined;
    if (approval !== undefined && approval.state === "pending" && approval.deadline.getTime() <= Date.now()) approval = (await expireApproval(db, approval.id)) ?? approval;
    // A client polling its held action is waiting on it, as much as one inside approval_wait (docs/design.md#approval-liveness).
    if (approval !== undefined && approval.state === "pending") await markClientWaiting(db, approval.id, new Date());
    const state = approval !== undefined && approval.state === "expired" ? "expired" : row.action.state;
    return {
      action_id: row.action.id,
      operation: row.action.operation,
      host: row.host,
      state,
      risk: { level: row.action.riskLevel, reasons: row.action.riskReasons },
      decision: stored.decision ?? null,
      created_at: row.action.createdAt.toISOString(),
      approval:
        approval === undefined
          ? null
          : { approval_id: approval.id, state: approval.state, deadline: approval.deadline.toISOString(), decided_at: approval.decidedAt?.toISOString() ?? null, reason: approval.reason },
      error: stored.error === undefined ? null : { code: stored.error.code, message: stored.error.message },
      hint:
        state === "held"
          ? "a person must approve or deny it; approval_wait waits for the decision"
          : state === "approved" || state === "dispatched" || state === "completed" || state === "failed"
            ? "approval_wait returns its result"
            : "",
    };
  },
};

export const actionCancelTool: HubTool = {
  name: "action_cancel",
  title: "Cancel one of your actions",
  description:
    "Cancels one of your actions: a held one is withdrawn from the approval queue and never runs; a queued one is dropped; a running one is stopped on its host (the sandbox is killed) and the result says what ran, with the host-signed evidence. Cancelling a finished action is ACTION_FINISHED; another token's action is NOT_FOUND. Waits up to 10 s for the host to confirm a stop; HOST_UNAVAILABLE when it does not.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["action_id"],
    properties: {
      action_id: { type: "string", maxLength: 36, pattern: ACTION_ID_PATTERN, description: "The action to cancel (from a result, a progress notification or APPROVAL_PENDING)." },
      reason: { type: "string", maxLength: 500, description: "Why, kept with the action (the ledger seals its digest)." },
    },
  },
  // It only withdraws or stops what this same token started (a read-only token's reads too).
  mutating: false,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  outputSchema: ACTION_CANCEL_SCHEMA,
  text: actionCancelText,
  async run(args, ctx) {
    const done = await cancelAction(ctx.runtime.database.handle.db, {
      actionId: String(args.action_id),
      by: { kind: "agent", id: ctx.token.id },
      reason: typeof args.reason === "string" ? args.reason : "",
      owner: callerKey(callerOf(ctx)),
      signal: ctx.signal,
    });
    const shaped: Record<string, unknown> = { action_id: done.actionId, state: done.state, stage: done.stage, approval_id: done.approvalId, job_id: done.jobId };
    if (done.completion === undefined) {
      shaped.hint = done.stage === "running" ? "the guest was told to stop it; approval_wait returns its result" : "it never ran; approval_wait answers CANCELLED";
      return shaped;
    }
    const result = await summariseCompletion(ctx.runtime.database.handle, done.completion, ctx.runtime.ledger.integrator);
    const { envelope, signature, ...summary } = result.evidence;
    return {
      ...shaped,
      result: { state: result.state, exit: result.exit, output: result.output, structured: result.structured },
      evidence: signature === null ? summary : { ...summary, signed: { envelope, signature } },
      ledger_entry_id: result.ledger_entry_id,
      hint: "stopped on its host; the evidence is signed by the host (verify it with the host key)",
    };
  },
};
