// Public surface of server/hosts. See README.md.
export { authenticateHostRequest } from "./auth";
export type { AuthenticatedHost, HostAuthResult } from "./auth";
export { DEFAULT_ENROL_CODE_TTL_MS, ENROL_CODE_PREFIX, createEnrolCode, enrolCommand, enrolHost, publicUrlNote } from "./enrolment";
export type { EnrolRequest, EnrolResult } from "./enrolment";
export { HOST_CEILING_PATH, ceilingTemplate, enrolSteps } from "./enrol-steps";
export type { EnrolStep } from "./enrol-steps";
export { bpfSummaryOf, ceilingSummaryOf, listHostSummaries, storeHealthReport } from "./health";
export type { HostSummary, StoredHostHealth } from "./health";
export { serveEnrol, serveHealthReport } from "./http";
export { checkCwdReported, workspaceListingSettled } from "./workspace-dirs";
export { readHostKey, serveHostKey } from "./host-key";
export type { HostKeyRecord } from "./host-key";
export {
  HEADER_HOST,
  HEADER_NONCE,
  HEADER_PEER,
  HEADER_SIGNATURE,
  HEADER_TIMESTAMP,
  HOST_NAME_PATTERN,
  isLoopbackHost,
  MAX_AGENT_BODY_BYTES,
  MAX_CLOCK_SKEW_MS,
  OUTPUT_CHUNK_BYTES,
  REQUEST_SIGNATURE_SCHEME,
  enrolmentProofString,
  requestSigningString,
  HeartbeatBody,
} from "../trust/protocol";
export { sha256Hex } from "../trust/jcs";
export type { GuestHealthReport, GuestJobResult, HostCeilingSummary } from "../trust/protocol";
