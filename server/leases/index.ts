// Public surface of server/leases. See README.md.
export {
  DEFAULT_LEASE_IDLE_MS,
  DEFAULT_LEASE_TTL_MS,
  acquireLease,
  exclusiveConflict,
  lapseIdleLeases,
  listLeases,
  releaseLease,
  releaseSessionLeases,
  revokeLease,
} from "./leases";
export type { AcquireLeaseInput, LeaseHolder, LeaseMode, LeaseRow, LeaseTimings } from "./leases";
