// Public surface of server/trust, the hub ⇄ guest contract. Listed by name;
// see README.md. The witness formats are imported per file from ledger/.
export { ERROR_CODES, isErrorCode } from "./error-codes";
export type { ErrorCode } from "./error-codes";
export { LeaseholdError, isLeaseholdError, toErrorPayload } from "./leasehold-error";
export type { EnforcementTier, ErrorPayload, LeaseholdErrorInit } from "./leasehold-error";

export { JcsError, canonicalBytes, canonicalDigest, canonicalize, parseCanonical, sha256, sha256Digest, sha256Hex, tryCanonicalize } from "./jcs";
export type { CanonicalResult } from "./jcs";

export {
  HEADER_HOST,
  HEADER_NONCE,
  HEADER_PEER,
  HEADER_SIGNATURE,
  HEADER_TIMESTAMP,
  HOST_NAME_PATTERN,
  HeartbeatAnswer,
  HeartbeatBody,
  JOB_ACK_RETRY_MS,
  JobAckAnswer,
  MAX_AGENT_BODY_BYTES,
  MAX_REPORTED_WORKSPACE_DIRS,
  WorkspaceDirsReport,
  MAX_CLOCK_SKEW_MS,
  NONCE_PATTERN,
  OUTPUT_CHUNK_BYTES,
  REQUEST_SIGNATURE_SCHEME,
  TIMESTAMP_PATTERN,
  enrolmentProofString,
  isLoopbackHost,
  requestSigningString,
} from "./protocol";
export type { GuestHealthReport, GuestJobResult, HostCeilingSummary } from "./protocol";

export {
  COMPILED_POLICY_SCHEMA,
  JOB_PAYLOAD_SCHEMA,
  JOB_SCHEMA,
  checkDeliveredJob,
  signJob,
  verifyJob,
} from "./job";
export type { CompiledNetwork, CompiledSandboxPolicy, JobCheck, JobDocument, JobPayload, SignedJob, VerifiedJob } from "./job";

export {
  CompiledMount,
  EvidenceMount,
  HOST_PATH_LABEL_PATTERN,
  HOST_PATH_MOUNT_DIR,
  HostPathEntry,
  HostPathLabel,
  HostPathMode,
  HostPathsReport,
  MAX_HOST_PATHS,
  MAX_REPORTED_SNAPSHOTS,
  ROLLBACK_OPERATION,
  RollbackArguments,
  SnapshotSummary,
} from "./host-paths";

export { ENFORCEMENT_TIERS, KERNEL_FEATURES, kernelRequirementsFor, tierSatisfies } from "./kernel-requirements";
export type { HostEnforcementTier, KernelFeature, KernelRequirements } from "./kernel-requirements";

export {
  MAX_EGRESS_RULE_LENGTH,
  canonicalAddress,
  egressRuleAllowedBy,
  egressRuleWithin,
  hostEgressRule,
  intersectEgressRules,
  isCanonicalHostName,
  normaliseEgressRules,
  parseEgressRule,
} from "./egress";
export type { AddressEgressRule, AddressFamily, EgressRule, NameEgressRule } from "./egress";
