export { HostCeiling, loadCeiling, parseCeiling, intersectPolicy, checkEgressBeforeResolution, checkResolvedNames, DEFAULT_WORKSPACE_MAX_BYTES, DEFAULT_WORKSPACE_MAX_INODES } from "./ceiling";
export type { HostTier, ResolvedName } from "./ceiling";
