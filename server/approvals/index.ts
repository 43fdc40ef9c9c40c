// Public surface of server/approvals. See README.md.
export {
  APPROVAL_PAGE,
  DEFAULT_APPROVAL_TTL_MS,
  TOKEN_REVOKED_REASON,
  approve,
  deny,
  denyApprovalsOfToken,
  expireApproval,
  expireOverdueApprovals,
  findApproval,
  getApproval,
  insertApproval,
  listApprovals,
  needsPasskey,
  pageApprovals,
  showApproval,
  waitForDecision,
  withdrawApproval,
} from "./approvals";
export type { ApprovalListing, ApprovalPage, ApprovalSummary, ApprovalRow, ApprovalState, ApprovingAdmin, DecideOptions, WaitOptions } from "./approvals";
export { ORPHANED_AFTER_MS, WAITING_MARK_EVERY_MS, livenessOf, livenessText, markClientWaiting, orphanedAfterMs } from "./liveness";
export type { Liveness, SessionState } from "./liveness";
export { APPROVAL_CHANNEL, announceDecision, approvalNotifier } from "./notifier";
export type { ApprovalNotifier } from "./notifier";
// The view (view.ts: buildApprovalView — the one builder behind the CLI's renderApproval and the
// browser's approvals.list — escapeForTerminal, …) is imported from "./view" by the CLI and the
// approvals tRPC router only: it loads the guest's scrubber, which client bundles must not pull in.
export { PROPOSED_GRANT, allowSimilarGrantInput, allowSimilarPasskeyOptions, approveAndGrant, assertGrantable, escapeRegExp, proposeGrant } from "./propose";
export type { GrantEdits, GrantProposal } from "./propose";
export { SIGNATURE_HEADER, WEBHOOK_LIMITS, createApprovalWebhook, webhookBody, webhookSignature } from "./webhook";
export type { ApprovalWebhook, HeldNotice, WebhookOptions } from "./webhook";
