// The hub's name for the error contract; the one implementation is in
// server/trust (shared with the guest). See README.md.
export { ERROR_CODES, LeaseholdError, isErrorCode, isLeaseholdError, toErrorPayload } from "../trust";
export type { EnforcementTier, ErrorCode, ErrorPayload, LeaseholdErrorInit } from "../trust";
