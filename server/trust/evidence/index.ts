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
  MAX_EVIDENCE_DENIALS,
} from "./envelope";
export type { LaunchReadback, BpfReadback, EvidenceCommon, LaunchEvidenceInput, VerifyResult, EvidenceDenial } from "./envelope";
