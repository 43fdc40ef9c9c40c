// Public surface of server/approvals. See README.md.
export {
  DEFAULT_APPROVAL_TTL_MS,
  TOKEN_REVOKED_REASON,
  denyApprovalsOfToken,
  approve,
  deny,
  expireApproval,
  expireOverdueApprovals,
  getApproval,
  insertApproval,
  listApprovals,
  waitForDecision,
} from "./approvals";
export type { ApprovalListing, ApprovalRow, ApprovalState, ApprovingAdmin, DecideOptions, WaitOptions } from "./approvals";
export { APPROVAL_CHANNEL, announceDecision, approvalNotifier } from "./notifier";
export type { ApprovalNotifier } from "./notifier";
