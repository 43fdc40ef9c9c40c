// Public surface of server/leases. See README.md.
export {
  DEFAULT_LEASE_IDLE_MS,
  DEFAULT_LEASE_TTL_MS,
  acquireLabelLeases,
  acquireLabelLeasesInTransaction,
  acquireLease,
  acquireLeaseInTransaction,
  exclusiveConflict,
  labelConflict,
  lapseIdleLeases,
  listActiveLeases,
  listLeases,
  opaqueHolderId,
  releaseLease,
  releaseSessionLeases,
  revokeLease,
} from "./leases";
export type { AcquireLabelLeasesInput, AcquireLeaseInput, LeaseHolder, LeaseListing, LeaseMode, LeaseRow, LeaseTimings } from "./leases";
