export {
  EVIDENCE_SCHEMA,
  EvidenceEnvelope,
  SignedEvidence,
  buildLaunchEvidence,
  buildRefusalEvidence,
  signEvidence,
  verifyEvidence,
  evidenceDigest,
  hostKeyId,
  rawPublicKey,
  generateHostKeyPair,
} from "./envelope";
export type { LaunchReadback, BpfReadback, EvidenceCommon, LaunchEvidenceInput, VerifyResult } from "./envelope";
