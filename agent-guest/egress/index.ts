export { DEFAULT_RESOLVE_TIMEOUT_MS, MAX_ADDRESSES_PER_NAME, hasNameRules, resolveEgressNames, systemLookup } from "./resolve";
export type { Lookup, LookupAddress, ResolvedEgress, ResolvedEgressName } from "./resolve";
