export { HostCeiling, loadCeiling, parseCeiling, intersectPolicy, DEFAULT_WORKSPACE_MAX_BYTES, DEFAULT_WORKSPACE_MAX_INODES } from "./ceiling";
export type { HostTier } from "./ceiling";
