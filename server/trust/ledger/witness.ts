import { utf8 } from "../portable/bytes";
import { requireNodeCrypto } from "../portable/crypto";
import { verifyCheckpointNote, type Checkpoint } from "./checkpoint";
import { EMPTY_ROOT, equalHashes } from "./hash";
import {
  SIGNATURE_TYPE,
  generateSignerKey,
  parseNote,
  parseSignatureLine,
  signatureLine,
  signatureMatchesKey,
  toSigner,
  toVerifier,
  verifyEd25519,
  verifyEd25519Async,
  type SignerKey,
  type VerifierKey,
} from "./note";
import { verifyConsistency } from "./proof";

/**
 * C2SP tlog-cosignature v1 (Ed25519, key type 0x04) and the witness's side
 * of the protocol. A cosignature says: as of `time`, the largest consistent
 * tree this witness has seen for this origin has this root. So a witness
 * signs only after checking the log's signature and a consistency proof from
 * the last checkpoint it cosigned; a truncated or rewritten log cannot get
 * one.
 */

const MAX_TIMESTAMP = 2n ** 63n - 1n;

export function generateCosignerKey(name: string): { signer: string; verifier: string } {
  return generateSignerKey(name, SIGNATURE_TYPE.cosignatureV1);
}

/** "cosignature/v1\ntime <ts>\n" followed by the whole checkpoint body. */
export function cosignatureMessage(body: string, timestamp: number): string {
  return `cosignature/v1\ntime ${timestamp}\n${body}`;
}

/** Signs a checkpoint body; returns the signature line (no newline). */
export function cosign(body: string, signer: SignerKey | string, timestamp: number): string {
  const key = toSigner(signer);
  if (key.type !== SIGNATURE_TYPE.cosignatureV1) throw new RangeError("cosignatures need a type 0x04 (cosignature/v1) key");
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError("cosignature timestamp must be a non-negative safe integer");
  const signature = requireNodeCrypto("cosigning").sign(null, utf8(cosignatureMessage(body, timestamp)), key.privateKey);
  const stamped = new Uint8Array(8 + signature.length);
  new DataView(stamped.buffer).setBigUint64(0, BigInt(timestamp), false);
  stamped.set(signature, 8);
  return signatureLine(key.name, key.keyId, stamped);
}

export type CosignatureCheck = { ok: true; timestamp: number; witness: VerifierKey } | { ok: false; reason: string };

/**
 * Hub/verifier side: checks one cosignature line against a checkpoint body
 * and a witness key. `now` (seconds) enables the optional future-timestamp
 * rejection with `maxSkewSeconds` of slack.
 */
export function verifyCosignature(
  body: string,
  line: string,
  witnessKey: VerifierKey | string,
  options: { now?: number; maxSkewSeconds?: number } = {},
): CosignatureCheck {
  const plan = planCosignature(body, line, witnessKey, options);
  if (!plan.ok) return plan;
  return concludeCosignature(plan, verifyEd25519(plan.message, plan.signature, plan.witness));
}

/** verifyCosignature with WebCrypto: the export verifier's form, in the CLI and the browser. */
export async function verifyCosignatureAsync(
  body: string,
  line: string,
  witnessKey: VerifierKey | string,
  options: { now?: number; maxSkewSeconds?: number } = {},
): Promise<CosignatureCheck> {
  const plan = planCosignature(body, line, witnessKey, options);
  if (!plan.ok) return plan;
  return concludeCosignature(plan, await verifyEd25519Async(plan.message, plan.signature, plan.witness));
}

type CosignaturePlan = { ok: true; timestamp: number; witness: VerifierKey; message: string; signature: Uint8Array } | { ok: false; reason: string };

function concludeCosignature(plan: { timestamp: number; witness: VerifierKey }, verified: boolean): CosignatureCheck {
  if (!verified) return { ok: false, reason: `cosignature by ${plan.witness.name} does not verify` };
  return { ok: true, timestamp: plan.timestamp, witness: plan.witness };
}

/** Every check of a cosignature except the Ed25519 arithmetic (shared by the sync and async forms). */
function planCosignature(
  body: string,
  line: string,
  witnessKey: VerifierKey | string,
  options: { now?: number; maxSkewSeconds?: number },
): CosignaturePlan {
  const key = toVerifier(witnessKey);
  if (!key.ok) return { ok: false, reason: `witness key: ${key.reason}` };
  if (key.key.type !== SIGNATURE_TYPE.cosignatureV1) return { ok: false, reason: "witness key is not a cosignature/v1 (type 0x04) key" };
  const parsed = parseSignatureLine(line);
  if (!parsed.ok) return parsed;
  if (!signatureMatchesKey(parsed.signature, key.key)) return { ok: false, reason: "cosignature is not from this witness key (name or key id differ)" };
  const raw = parsed.signature.signature;
  if (raw.length !== 8 + 64) return { ok: false, reason: "cosignature must be an 8-byte timestamp and a 64-byte Ed25519 signature" };
  const stamp = new DataView(raw.buffer, raw.byteOffset, raw.byteLength).getBigUint64(0, false);
  if (stamp > MAX_TIMESTAMP) return { ok: false, reason: "cosignature timestamp exceeds 2^63 - 1" };
  if (stamp > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, reason: "cosignature timestamp is implausibly large" };
  const timestamp = Number(stamp);
  if (options.now !== undefined && timestamp > options.now + (options.maxSkewSeconds ?? 0)) {
    return { ok: false, reason: "cosignature timestamp is in the future" };
  }
  return { ok: true, timestamp, witness: key.key, message: cosignatureMessage(body, timestamp), signature: raw.subarray(8) };
}

/** Appends a cosignature line to a signed checkpoint note. */
export function addCosignature(note: string, line: string): string {
  const parsed = parseNote(note);
  if (!parsed.ok) throw new RangeError(parsed.reason);
  if (!parseSignatureLine(line).ok) throw new RangeError("not a signature line");
  return `${note}${line}\n`;
}

/** The latest checkpoint a witness has cosigned for one log. Persist it before releasing the cosignature. */
export interface WitnessState {
  origin: string;
  size: number;
  root: Uint8Array;
}

export function initialWitnessState(origin: string): WitnessState {
  return { origin, size: 0, root: EMPTY_ROOT };
}

export type WitnessRefusal =
  | "bad_log_signature"
  | "unknown_origin"
  | "smaller_size"
  | "fork_at_same_size"
  | "inconsistent";

export type WitnessResult =
  | { ok: true; line: string; timestamp: number; checkpoint: Checkpoint; state: WitnessState }
  | { ok: false; refusal: WitnessRefusal; reason: string };

/**
 * The witness's whole decision. It refuses a checkpoint whose log signature
 * fails, a smaller tree than it has cosigned (truncation), a different root
 * at the same size (a fork), and anything without a valid consistency proof
 * from its state (a rewrite). On success the caller MUST durably store
 * `state` before handing out `line`; otherwise a crash could let it cosign a
 * conflicting checkpoint later.
 */
export function witnessCosign(
  state: WitnessState,
  signedCheckpoint: string,
  consistencyProof: readonly Uint8Array[],
  logVerifierKey: VerifierKey | string,
  witnessSigner: SignerKey | string,
  now: () => number = () => Math.floor(Date.now() / 1000),
): WitnessResult {
  const verified = verifyCheckpointNote(signedCheckpoint, logVerifierKey);
  if (!verified.ok) return { ok: false, refusal: "bad_log_signature", reason: verified.reason };
  const { checkpoint, body } = verified;
  if (checkpoint.origin !== state.origin) {
    return { ok: false, refusal: "unknown_origin", reason: `witness tracks ${JSON.stringify(state.origin)}, not ${JSON.stringify(checkpoint.origin)}` };
  }
  if (checkpoint.size < state.size) {
    return { ok: false, refusal: "smaller_size", reason: `checkpoint size ${checkpoint.size} is smaller than the ${state.size} already cosigned — the log was truncated` };
  }
  if (checkpoint.size === state.size && !equalHashes(checkpoint.root, state.root)) {
    return { ok: false, refusal: "fork_at_same_size", reason: `a different root at size ${state.size} than the one already cosigned — the log was rewritten` };
  }
  const consistent = verifyConsistency(state.size, checkpoint.size, consistencyProof, state.root, checkpoint.root);
  if (!consistent.ok) {
    return { ok: false, refusal: "inconsistent", reason: `not consistent with size ${state.size}: ${consistent.reason}` };
  }
  const timestamp = now();
  const line = cosign(body, witnessSigner, timestamp);
  return { ok: true, line, timestamp, checkpoint, state: { origin: checkpoint.origin, size: checkpoint.size, root: checkpoint.root } };
}


