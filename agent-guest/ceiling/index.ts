export { HostCeiling, loadCeiling, parseCeiling, intersectPolicy } from "./ceiling";
export type { HostTier } from "./ceiling";
export { parseEgress, egressCovers, isEgressText } from "./egress";
export type { EgressEntry } from "./egress";
