// Public surface of server/artifacts. See README.md.
export { ARTIFACT_ROW_BYTES, MAX_READ_BYTES, completeArtifact, readArtifactRange, sha256Hex, sweepArtifacts } from "./blob-store";
export {
  DEFAULT_ARTIFACT_LIMITS,
  MAX_APPEND_BYTES,
  appendArtifactChunk,
  artifactLimitsOf,
  artifactUploadStatus,
  claimArtifact,
  ownerKeyOf,
  storeArtifact,
} from "./uploads";
export type { AppendRequest, ArtifactLimits, ArtifactOwner, ArtifactRef, ArtifactStatus } from "./uploads";
