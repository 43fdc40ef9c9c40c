// Public surface of server/actions. See README.md.
export { DEFAULT_SETTINGS, PREPARED_ACTION_SCHEMA, approvalOfAction, callerKey, dispatchApprovedAction, resumeAction, submitAction } from "./pipeline";
export { AGENT_REASON_MAX_CHARS, checkAgentReason, splitAgentReason, takesAgentReason, toolInputSchema } from "./agent-reason";
export { APPROVED_DISPATCH_GRACE_MS, startApprovedDispatch } from "./approved";
export type { ApprovedDispatch } from "./approved";
export { CANCEL_CONFIRM_MS, cancelAction, cancelledError } from "./cancel";
export type { CancelRequest, CancelResult, CancelStage, CancelledBy } from "./cancel";
export { createCompletionWaiter, summariseCompletion } from "./completion";
export { createActionScheduler } from "./queue";
export type { ActionScheduler, QueueTask } from "./queue";
export { hostReportReadiness } from "./readiness";
export { actionPipelineFor, createActionPipeline, installActionPipeline } from "./service";
export type { ActionPipeline } from "./service";
export type { ActionCompletion, CompletionWaiter, ActionOutcome, ActionProgress, ActionRequest, Caller, Channel, DecisionOutcome, PipelineDeps, PipelineSettings, ReadinessCheck, StoredResult, SubmitOptions } from "./types";
