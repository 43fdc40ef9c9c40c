// Public surface of server/action-records (the browser's actions list and detail).
export { DECISION_SQL, MAX_PAGE, likePattern, listActions } from "./list";
export type { ActionDecision, ActionListItem, ActionPage } from "./list";
export { MAX_OUTPUT_SHOWN, actionDetail, passkeyVerdictFor, timelineOf } from "./detail";
export type { ActionDetail, ApprovalView, Check, EvidenceView, OutputStream, PasskeyVerdict, ReceiptView, TimelineEntry } from "./detail";
export { consoleTargets } from "./console-targets";
export type { ConsoleField, ConsoleOperation, ConsoleTargets } from "./console-targets";
