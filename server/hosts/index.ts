// Public surface of server/hosts. See README.md.
export { authenticateHostRequest } from "./auth";
export type { AuthenticatedHost, HostAuthResult } from "./auth";
export { createCompletionWaiter } from "./completion";
export { CLAIM_WAIT_MS, HEARTBEAT_INTERVAL_MS, HEARTBEAT_LOST_MS, heartbeat, nextJob, sweepJobs } from "./delivery";
export { DEFAULT_ENROL_CODE_TTL_MS, ENROL_CODE_PREFIX, createEnrolCode, enrolCommand, enrolHost, publicUrlNote } from "./enrolment";
export type { EnrolRequest, EnrolResult } from "./enrolment";
export { bpfSummaryOf, ceilingSummaryOf, listHostSummaries, storeHealthReport } from "./health";
export type { HostSummary, StoredHostHealth } from "./health";
export { DEFAULT_OUTPUT_QUOTAS, pruneExpiredOutput, readJobOutput, receiveJobResult, receiveOutputChunk } from "./intake";
export type { OutputQuotas, StoredCompletion } from "./intake";
export { serveEnrol, serveHealthReport, serveHeartbeat, serveNextJob, serveOutput, serveResult } from "./http";
export { startHostServices } from "./service";
export type { HostServices } from "./service";
export { notifyJobQueued } from "./wake";
export { HOSTS_CHANNEL, announce, listenForHostWakeups } from "./notify";
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
export type { OutputProgress } from "./wake";
