// Public surface of server/policy/grants. See ../README.md.
export {
  GRANTABLE_LEVELS,
  GRANT_LIMITS,
  assertPatternVisible,
  consumeMatchingGrant,
  createGrant,
  grantNeedsPasskey,
  grantPasskeyOptions,
  grantPasskeyRefusal,
  grantScope,
  grantScopeSigningDigest,
  grantCoversArguments,
  grantScopeDigest,
  grantSubject,
  listGrants,
  matchingGrants,
  revokeGrant,
  sha256Hex,
} from "./grants";
export type { CreateGrantInput, GrantMatchInput, GrantPasskeyProof, GrantRiskCeiling, GrantRow, GrantScope } from "./grants";
