// Public surface of server/action-records (the browser's actions list and detail).
export { DECISION_SQL, MAX_PAGE, likePattern, listActions } from "./list";
export type { ActionDecision, ActionListItem, ActionPage } from "./list";
export { MAX_OUTPUT_SHOWN, actionDetail, passkeyVerdictFor } from "./detail";
export type { ActionDetail, ApprovalView, OutputStream, PasskeyVerdict } from "./detail";
export { timelineOf } from "./timeline";
export type { ReceiptView, TimelineEntry } from "./timeline";
export type { Check, EvidenceView } from "./evidence";
export { consoleTargets } from "./console-targets";
export type { ConsoleField, ConsoleOperation, ConsoleTargets } from "./console-targets";
