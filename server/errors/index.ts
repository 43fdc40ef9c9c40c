export { ERROR_CODES, isErrorCode } from "./codes";
export type { ErrorCode } from "./codes";
export { LeaseholdError, isLeaseholdError, toErrorPayload } from "./leasehold-error";
export type { EnforcementTier, ErrorPayload, LeaseholdErrorInit } from "./leasehold-error";
