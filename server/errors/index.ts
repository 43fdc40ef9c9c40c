// The hub's name for the error contract; the one implementation is in
// server/trust (shared with the guest). See README.md.
export { ERROR_CODES, isErrorCode } from "../trust/error-codes";
export type { ErrorCode } from "../trust/error-codes";
export { LeaseholdError, isLeaseholdError, toErrorPayload } from "../trust/leasehold-error";
export type { EnforcementTier, ErrorPayload, LeaseholdErrorInit } from "../trust/leasehold-error";
