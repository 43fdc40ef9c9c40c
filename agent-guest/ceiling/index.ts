export { HostCeiling, loadCeiling, parseCeiling, intersectPolicy, checkEgressBeforeResolution, checkResolvedNames, checkHostPaths, grantedMounts, DEFAULT_WORKSPACE_MAX_BYTES, DEFAULT_WORKSPACE_MAX_INODES } from "./ceiling";
export type { GrantedHostPath, HostTier, ResolvedName } from "./ceiling";
