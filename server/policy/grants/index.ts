// Public surface of server/policy/grants. See ../README.md.
export { GRANTABLE_LEVELS, GRANT_LIMITS, consumeMatchingGrant, createGrant, grantSubject, listGrants, matchingGrants, revokeGrant } from "./grants";
export type { CreateGrantInput, GrantMatchInput, GrantRiskCeiling, GrantRow } from "./grants";
