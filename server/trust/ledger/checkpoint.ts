import { decodeBase64Strict, encodeBase64 } from "./base64";
import { HASH_SIZE } from "./hash";
import {
  SIGNATURE_TYPE,
  parseNote,
  signNote,
  toVerifier,
  verifyNote,
  verifyNoteAsync,
  type NoteSignature,
  type NoteVerification,
  type ParsedNote,
  type Result,
  type SignerKey,
  type VerifierKey,
} from "./note";

/**
 * C2SP tlog-checkpoint (c2sp.org/tlog-checkpoint): origin, decimal tree
 * size, base64 root hash, then optional non-empty extension lines, every line
 * newline-terminated; signed as a C2SP signed note with the hub's Ed25519
 * key. Parsing is exact — one byte off anywhere is a rejection — so a
 * checkpoint has a single spelling and an outside tool parses ours the same
 * way we do.
 */

export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  extensions: readonly string[];
}

const SIZE = /^(?:0|[1-9][0-9]*)$/;

export function formatCheckpoint(checkpoint: Checkpoint): string {
  const { origin, size, root, extensions } = checkpoint;
  if (origin === "" || origin.includes("\n")) throw new RangeError("checkpoint origin must be a non-empty single line");
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError("checkpoint size must be a non-negative safe integer");
  if (!(root instanceof Uint8Array) || root.length !== HASH_SIZE) throw new RangeError("checkpoint root must be 32 bytes");
  for (const line of extensions) if (line === "" || line.includes("\n")) throw new RangeError("extension lines must be non-empty single lines");
  return [origin, String(size), encodeBase64(root), ...extensions].map((line) => `${line}\n`).join("");
}

/** Parses a checkpoint body (the note text). */
export function parseCheckpoint(body: string): Result<{ checkpoint: Checkpoint }> {
  if (!body.endsWith("\n")) return { ok: false, reason: "checkpoint does not end with a newline" };
  const lines = body.slice(0, -1).split("\n");
  if (lines.length < 3) return { ok: false, reason: "checkpoint needs origin, size and root lines" };
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (origin === "") return { ok: false, reason: "checkpoint origin is empty" };
  if (!SIZE.test(sizeText)) return { ok: false, reason: "checkpoint size is not a decimal without leading zeroes" };
  const size = Number(sizeText);
  if (!Number.isSafeInteger(size)) return { ok: false, reason: "checkpoint size is larger than this verifier supports (2^53 - 1)" };
  const root = decodeBase64Strict(rootText);
  if (root === undefined || root.length !== HASH_SIZE) return { ok: false, reason: "checkpoint root is not canonical base64 of 32 bytes" };
  if (extensions.some((line) => line === "")) return { ok: false, reason: "checkpoint has an empty extension line" };
  return { ok: true, checkpoint: { origin, size, root, extensions } };
}

/** Formats and signs a checkpoint; returns the complete signed note. */
export function signCheckpoint(checkpoint: Checkpoint, signer: SignerKey | string): string {
  return signNote(formatCheckpoint(checkpoint), signer);
}

export interface ParsedSignedCheckpoint {
  checkpoint: Checkpoint;
  body: string;
  signatures: NoteSignature[];
}

/**
 * Parses a signed checkpoint WITHOUT verifying it — for routing and display
 * only. Anything that trusts the contents must use verifyCheckpointNote.
 */
export function parseSignedCheckpoint(note: string | Uint8Array): Result<ParsedSignedCheckpoint> {
  const parsed = parseNote(note);
  if (!parsed.ok) return parsed;
  const body = parseCheckpoint(parsed.note.text);
  if (!body.ok) return body;
  return { ok: true, checkpoint: body.checkpoint, body: parsed.note.text, signatures: parsed.note.signatures };
}

export interface VerifiedCheckpoint {
  checkpoint: Checkpoint;
  body: string;
  note: ParsedNote;
}

export interface VerifyCheckpointOptions {
  /** If given, the checkpoint's origin line must equal it. */
  origin?: string;
}

function logKeyOf(verifierKey: VerifierKey | string): Result<{ key: VerifierKey }> {
  const key = toVerifier(verifierKey);
  if (!key.ok) return { ok: false, reason: `log key: ${key.reason}` };
  if (key.key.type !== SIGNATURE_TYPE.ed25519) return { ok: false, reason: "log key must be an Ed25519 (type 0x01) note key" };
  return key;
}

/** Verifies the log's signature on a checkpoint note and returns the checkpoint it vouches for (synchronous: the hub). */
export function verifyCheckpointNote(
  note: string | Uint8Array,
  verifierKey: VerifierKey | string,
  options: VerifyCheckpointOptions = {},
): Result<VerifiedCheckpoint> {
  const key = logKeyOf(verifierKey);
  if (!key.ok) return key;
  return concludeCheckpoint(verifyNote(note, [key.key]), options);
}

/** verifyCheckpointNote with WebCrypto: the export verifier's form, in the CLI and the browser. */
export async function verifyCheckpointNoteAsync(
  note: string | Uint8Array,
  verifierKey: VerifierKey | string,
  options: VerifyCheckpointOptions = {},
): Promise<Result<VerifiedCheckpoint>> {
  const key = logKeyOf(verifierKey);
  if (!key.ok) return key;
  return concludeCheckpoint(await verifyNoteAsync(note, [key.key]), options);
}

function concludeCheckpoint(verified: NoteVerification, options: VerifyCheckpointOptions): Result<VerifiedCheckpoint> {
  if (!verified.ok) return verified;
  const body = parseCheckpoint(verified.note.text);
  if (!body.ok) return body;
  if (options.origin !== undefined && body.checkpoint.origin !== options.origin) {
    return { ok: false, reason: `checkpoint is for origin ${JSON.stringify(body.checkpoint.origin)}, expected ${JSON.stringify(options.origin)}` };
  }
  return { ok: true, checkpoint: body.checkpoint, body: verified.note.text, note: verified.note };
}
