// Public surface of server/ledger. Listed by name so every export is a decision.

export { EMPTY_ROOT, HASH_SIZE, equalHashes, hashChildren, hashLeaf, isHash } from "../trust/ledger/hash";

export {
  ACTOR_KINDS,
  ENTRY_DATA,
  ENTRY_TYPES,
  MAX_ENTRY_BYTES,
  decodeEntry,
  digestOf,
  digestOfJson,
  encodeEntry,
  entrySchemaUnion,
  hashActor,
  toTimestamp,
  tryEncodeEntry,
} from "./entry";
export type { ActorKind, DecodeResult, EntryData, EntryInput, EntryType, LedgerEntry } from "./entry";

export {
  CompactRange,
  EMPTY_FRONTIER,
  MemoryNodeStore,
  extendTree,
  foldRange,
  frontierFromStore,
  frontierKeys,
  frontierLevels,
  rangeKeys,
  rootAt,
  rootFromFrontier,
} from "../trust/ledger/tree";
export type { ExtendResult, Frontier, NodeKey, NodeReader, StoredNode } from "../trust/ledger/tree";

export { consistencyProof, consistencyRanges, inclusionProof, inclusionRanges, verifyConsistency, verifyInclusion } from "../trust/ledger/proof";
export type { ProofCheck } from "../trust/ledger/proof";

export {
  MAX_NOTE_BYTES,
  MAX_NOTE_SIGNATURES,
  SIGNATURE_TYPE,
  computeKeyId,
  formatSignerKey,
  formatVerifierKey,
  generateSignerKey,
  isValidKeyName,
  parseNote,
  parseSignatureLine,
  parseSignerKey,
  parseVerifierKey,
  signNote,
  verifierOf,
  verifyNote,
} from "../trust/ledger/note";
export type { NoteSignature, ParsedNote, Result, SignatureType, SignerKey, VerifierKey } from "../trust/ledger/note";

export { formatCheckpoint, parseCheckpoint, parseSignedCheckpoint, signCheckpoint, verifyCheckpointNote } from "../trust/ledger/checkpoint";
export type { Checkpoint, ParsedSignedCheckpoint, VerifiedCheckpoint, VerifyCheckpointOptions } from "../trust/ledger/checkpoint";

export {
  addCosignature,
  cosign,
  cosignatureMessage,
  generateCosignerKey,
  initialWitnessState,
  verifyCosignature,
  witnessCosign,
} from "../trust/ledger/witness";
export type { CosignatureCheck, WitnessRefusal, WitnessResult, WitnessState } from "../trust/ledger/witness";

export { buildReceipt, verifyReceipt } from "./receipt";
export type { Receipt } from "./receipt";

export { EXPORT_FORMAT, exportLines, writeLinesToFile } from "./export-format";
export type { ExportCheckpoint, ExportCosignature, ExportEntry, ExportHeader, ExportSource } from "./export-format";

export { describeFailure, verifyExport, verifyExportLines } from "./verify";
export type { VerifyFailure, VerifyOptions, VerifyReport } from "./verify";

export { EXIT_FAILED, EXIT_UNUSABLE, EXIT_VERIFIED, runVerify } from "./verify-cli";
export type { VerifyOutput } from "./verify-cli";
