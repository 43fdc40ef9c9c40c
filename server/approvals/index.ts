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
} from "./approvals";
export type { ApprovalListing, ApprovalPage, ApprovalSummary, ApprovalRow, ApprovalState, ApprovingAdmin, DecideOptions, WaitOptions } from "./approvals";
export { APPROVAL_CHANNEL, announceDecision, approvalNotifier } from "./notifier";
export type { ApprovalNotifier } from "./notifier";
// The terminal view (view.ts: renderApproval, escapeForTerminal, …) is imported from "./view" by the
// CLI only: it loads the guest's scrubber, which the web bundle does not need.
