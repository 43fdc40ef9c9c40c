/**
 * The pipeline as channels use it: `ActionPipeline.submit` = per-session
 * scheduling (queue.ts) around `submitAction`. MCP and the console both call
 * this, so the same input gives the same result and error code on both.
 */
import { artifactLimitsOf } from "../artifacts";
import { hubCapabilityRegistry } from "../capabilities";
import { createApprovalWebhook } from "../approvals/webhook";
import { createPushNotifier } from "../push/notifier";
import { loadOrCreateVapidKey } from "../push/vapid";
import { loadOrCreateJobKey } from "../dispatch/job-key";
import { keyDirOf } from "../hub/identity";
import type { HubRuntime } from "../hub/runtime";
import { assessActionRiskSync } from "../policy/assess-action";
import { initShellRisk } from "../policy/risk";
import { resumeAction, submitAction } from "./pipeline";
import { createActionScheduler, type ActionScheduler } from "./queue";
import { createCompletionWaiter } from "./completion";
import { hostReportReadiness } from "./readiness";
import type { ActionOutcome, ActionRequest, Caller, PipelineDeps, SubmitOptions } from "./types";

export interface ActionPipeline {
  readonly deps: PipelineDeps;
  submit(caller: Caller, request: ActionRequest, options: SubmitOptions): Promise<ActionOutcome>;
  resume(caller: Caller, actionId: string, options: SubmitOptions): Promise<ActionOutcome>;
}

function sessionKey(caller: Caller): string {
  const who = caller.kind === "token" ? `token:${caller.tokenId}` : `admin:${caller.adminId}`;
  return `${who}/${caller.sessionId ?? "-"}`;
}

/**
 * Whether a call of a mutating operation is read-only by its assessed risk
 * (`ls` through run_command), so the session schedules it like one — the
 * same verdict the pipeline will reach, taken synchronously here so calls
 * keep their order. Anything undecidable (parser not loaded yet, arguments
 * the pipeline will refuse) is scheduled as mutating: a barrier is always safe.
 */
function assessedReadOnly(deps: PipelineDeps, resolution: ReturnType<PipelineDeps["registry"]["resolveOperation"]>, args: Record<string, unknown> | null): boolean {
  if (args === null || typeof args !== "object") return false;
  try {
    return assessActionRiskSync({ capability: resolution.manifest.id, operation: resolution.operation, prepared: args, customRules: deps.customRiskRules }).level === "read_only";
  } catch {
    return false;
  }
}

export function createActionPipeline(deps: PipelineDeps, scheduler: ActionScheduler = createActionScheduler()): ActionPipeline {
  // Loaded now so the first calls can be scheduled by their assessed risk too (until then: barriers).
  initShellRisk().catch(() => undefined);
  return {
    deps,
    submit(caller, request, options) {
      let task = { mutating: true, host: null as string | null };
      try {
        const resolution = deps.registry.resolveOperation(request.operation);
        const args = request.arguments as Record<string, unknown> | null;
        task = { mutating: resolution.operation.mutating && !assessedReadOnly(deps, resolution, args), host: typeof args?.["host"] === "string" ? args["host"] : null };
      } catch {
        // Unknown operation: scheduled as a barrier; the pipeline refuses it.
      }
      return scheduler.run(sessionKey(caller), task, () => submitAction(deps, caller, request, options));
    },
    resume(caller, actionId, options) {
      return scheduler.run(sessionKey(caller), { mutating: true, host: null }, () => resumeAction(deps, caller, actionId, options));
    },
  };
}

const pipelines = new WeakMap<HubRuntime, ActionPipeline>();

/** Installs the pipeline a runtime's channels use (hub start-up, tests). */
export function installActionPipeline(runtime: HubRuntime, pipeline: ActionPipeline): void {
  pipelines.set(runtime, pipeline);
}

/**
 * The runtime's pipeline, created on first use with the hub's capability
 * registry (built-ins, opt-in ones as enabled), the job key from the data directory, readiness from host
 * reports (never assumed), the completion waiter (completion.ts), and the
 * held-action notifications (the webhook when configured, Web Push).
 */
export function actionPipelineFor(runtime: HubRuntime): ActionPipeline {
  let pipeline = pipelines.get(runtime);
  if (pipeline === undefined) {
    const handle = runtime.database.handle;
    const config = runtime.config.webhook ?? null;
    const webhook = config === null ? null : createApprovalWebhook({ url: config.url, secret: config.secret, publicUrl: runtime.config.publicUrl });
    // Push goes to whoever subscribed a browser (none: one cheap query per held action).
    const push = createPushNotifier({ db: handle.db, vapid: loadOrCreateVapidKey(keyDirOf(runtime.config)), publicUrl: runtime.config.publicUrl });
    pipeline = createActionPipeline({
      handle,
      registry: hubCapabilityRegistry(),
      readiness: hostReportReadiness(handle.db),
      jobKey: loadOrCreateJobKey(keyDirOf(runtime.config)),
      // Callers get the host's sealed result (output, evidence, receipt), not just "queued".
      completion: createCompletionWaiter(handle, runtime.ledger.integrator),
      settings: { maxHeldPerToken: runtime.config.mcp.maxHeldPerToken, artifacts: artifactLimitsOf(runtime.config) },
      // Both notifications in the background: neither waits for the other or holds up the action.
      onHeld: (notice) => {
        if (webhook !== null) void webhook.notify(notice);
        void push.notify(notice);
      },
    });
    pipelines.set(runtime, pipeline);
  }
  return pipeline;
}
