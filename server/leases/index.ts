// Public surface of server/leases. See README.md.
export {
  DEFAULT_LEASE_IDLE_MS,
  DEFAULT_LEASE_TTL_MS,
  acquireLease,
  acquireLeaseInTransaction,
  exclusiveConflict,
  lapseIdleLeases,
  listActiveLeases,
  listLeases,
  opaqueHolderId,
  releaseLease,
  releaseSessionLeases,
  revokeLease,
} from "./leases";
export type { AcquireLeaseInput, LeaseHolder, LeaseListing, LeaseMode, LeaseRow, LeaseTimings } from "./leases";
