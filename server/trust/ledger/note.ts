import type { KeyObject } from "node:crypto";
import { utf8, utf8Length } from "../portable/bytes";
import { nodeCrypto, requireNodeCrypto, sha256, toHex, verifyEd25519Raw } from "../portable/crypto";
import { decodeBase64Strict, encodeBase64 } from "./base64";

/**
 * C2SP signed-note (c2sp.org/signed-note) with Ed25519 keys, and the vkey /
 * signer-key text encodings. The note text MUST be ignored until a trusted
 * signature over it has verified, so parsing here is strict and separate from
 * trusting: nothing returned by parseNote is believed by any caller until
 * verifyNote says so.
 *
 * No static node: import: parsing and verification also run in the browser
 * (the audit explorer). Verification comes in two forms sharing one plan
 * (planNoteVerification): verifyNote, synchronous, for the hub (Node's
 * crypto); verifyNoteAsync, WebCrypto, for the export verifier in the CLI
 * and the browser. Signing needs Node and happens only in the hub.
 */

/** Signature type bytes assigned by the signed-note spec. */
export const SIGNATURE_TYPE = { ed25519: 0x01, cosignatureV1: 0x04 } as const;
export type SignatureType = (typeof SIGNATURE_TYPE)[keyof typeof SIGNATURE_TYPE];

export const MAX_NOTE_BYTES = 1 << 20;
/** The spec requires accepting at least 16. */
export const MAX_NOTE_SIGNATURES = 100;

export type Result<T> = ({ ok: true } & T) | { ok: false; reason: string };

export interface VerifierKey {
  name: string;
  type: SignatureType;
  keyId: Uint8Array;
  keyIdHex: string;
  publicKey: Uint8Array;
  /** The canonical vkey text: `<name>+<hex key id>+<base64(type ‖ public key)>`. */
  text: string;
}

export interface SignerKey extends Omit<VerifierKey, "text"> {
  privateKey: KeyObject;
  /** `PRIVATE+KEY+<name>+<hex key id>+<base64(type ‖ seed)>` — a secret. */
  text: string;
  verifierText: string;
}

export interface NoteSignature {
  name: string;
  keyId: Uint8Array;
  keyIdHex: string;
  /** The signature bytes after the 4-byte key id. */
  signature: Uint8Array;
  /** The signature line without its newline. */
  line: string;
}

export interface ParsedNote {
  /** The signed text, including its final newline. */
  text: string;
  signatures: NoteSignature[];
}

// DER wrappers for a raw Ed25519 key (RFC 8410), so node:crypto can import 32 raw bytes.
const PKCS8_ED25519_PREFIX = Uint8Array.of(0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20);
const SPKI_ED25519_PREFIX = Uint8Array.of(0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00);

const EM_DASH_PREFIX = "\u2014 ";
// eslint-disable-next-line no-control-regex
const FORBIDDEN_CONTROL = /[\u0000-\u0009\u000b-\u001f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Key names: non-empty, no Unicode spaces, no '+', no control characters. */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name) && !FORBIDDEN_CONTROL.test(name) && !/\n/.test(name) && !LONE_SURROGATE.test(name);
}

/** key ID = SHA-256(name ‖ 0x0A ‖ type ‖ public key)[:4] */
export function computeKeyId(name: string, type: number, publicKey: Uint8Array): Uint8Array {
  const nameBytes = utf8(name);
  const input = new Uint8Array(nameBytes.length + 2 + publicKey.length);
  input.set(nameBytes, 0);
  input[nameBytes.length] = 0x0a;
  input[nameBytes.length + 1] = type;
  input.set(publicKey, nameBytes.length + 2);
  return sha256(input).slice(0, 4);
}

function withPrefix(prefix: Uint8Array, key: Uint8Array): Uint8Array {
  const out = new Uint8Array(prefix.length + key.length);
  out.set(prefix, 0);
  out.set(key, prefix.length);
  return out;
}

function isSignatureType(value: number): value is SignatureType {
  return value === SIGNATURE_TYPE.ed25519 || value === SIGNATURE_TYPE.cosignatureV1;
}

// Node KeyObjects for the hub's synchronous checks, made once per public key.
const keyObjects = new Map<string, KeyObject>();

function publicKeyObject(publicKey: Uint8Array): KeyObject {
  const id = toHex(publicKey);
  let key = keyObjects.get(id);
  if (key === undefined) {
    key = requireNodeCrypto("synchronous Ed25519 verification").createPublicKey({ key: Buffer.from(withPrefix(SPKI_ED25519_PREFIX, publicKey)), format: "der", type: "spki" });
    if (keyObjects.size > 1000) keyObjects.clear();
    keyObjects.set(id, key);
  }
  return key;
}

export function formatVerifierKey(name: string, type: SignatureType, publicKey: Uint8Array): string {
  return `${name}+${toHex(computeKeyId(name, type, publicKey))}+${encodeBase64(Uint8Array.of(type, ...publicKey))}`;
}

export function formatSignerKey(name: string, type: SignatureType, seed: Uint8Array, publicKey: Uint8Array): string {
  return `PRIVATE+KEY+${name}+${toHex(computeKeyId(name, type, publicKey))}+${encodeBase64(Uint8Array.of(type, ...seed))}`;
}

function signerFromSeed(name: string, type: SignatureType, seed: Uint8Array): SignerKey {
  const crypto = requireNodeCrypto("an Ed25519 signing key");
  const privateKey = crypto.createPrivateKey({ key: Buffer.from(withPrefix(PKCS8_ED25519_PREFIX, seed)), format: "der", type: "pkcs8" });
  const keyObject = crypto.createPublicKey(privateKey);
  const spki = keyObject.export({ format: "der", type: "spki" });
  const publicKey = new Uint8Array(spki.subarray(spki.length - 32));
  const keyId = computeKeyId(name, type, publicKey);
  return {
    name,
    type,
    keyId,
    keyIdHex: toHex(keyId),
    publicKey,
    privateKey,
    text: formatSignerKey(name, type, seed, publicKey),
    verifierText: formatVerifierKey(name, type, publicKey),
  };
}

/**
 * A fresh Ed25519 key. `type` 0x01 is a log (note) key; 0x04 a tlog-cosignature/v1 witness key.
 * The signer text is a secret: the caller stores it with mode 0600.
 */
export function generateSignerKey(name: string, type: SignatureType = SIGNATURE_TYPE.ed25519): { signer: string; verifier: string } {
  if (!isValidKeyName(name)) throw new RangeError(`invalid key name ${JSON.stringify(name)}: must be non-empty, without spaces or '+'`);
  const key = signerFromSeed(name, type, new Uint8Array(requireNodeCrypto("generating a key").randomBytes(32)));
  return { signer: key.text, verifier: key.verifierText };
}

/** Splits `<name>+<id>+<base64>`: names and ids hold no '+', but base64 may. */
function splitKeyText(text: string): [string, string, string] | undefined {
  const first = text.indexOf("+");
  const second = first < 0 ? -1 : text.indexOf("+", first + 1);
  if (second < 0) return undefined;
  return [text.slice(0, first), text.slice(first + 1, second), text.slice(second + 1)];
}

export function parseSignerKey(text: string): Result<{ key: SignerKey }> {
  const parts = text.startsWith("PRIVATE+KEY+") ? splitKeyText(text.slice("PRIVATE+KEY+".length)) : undefined;
  if (parts === undefined) return { ok: false, reason: "signer key must look like PRIVATE+KEY+<name>+<key id>+<base64 key>" };
  const [name, idHex, keyB64] = parts;
  if (!isValidKeyName(name)) return { ok: false, reason: "signer key has an invalid name" };
  if (!/^[0-9a-f]{8}$/.test(idHex)) return { ok: false, reason: "signer key id must be 8 lowercase hex digits" };
  const raw = decodeBase64Strict(keyB64);
  if (raw === undefined || raw.length !== 33) return { ok: false, reason: "signer key material must be base64 of a type byte and a 32-byte seed" };
  const type = raw[0] as number;
  if (!isSignatureType(type)) return { ok: false, reason: `unsupported signature type 0x${type.toString(16).padStart(2, "0")}` };
  const key = signerFromSeed(name, type, raw.subarray(1));
  if (key.keyIdHex !== idHex) return { ok: false, reason: "signer key id does not match its name and key" };
  return { ok: true, key };
}

export function parseVerifierKey(text: string): Result<{ key: VerifierKey }> {
  const parts = splitKeyText(text);
  if (parts === undefined) return { ok: false, reason: "verifier key must look like <name>+<key id>+<base64 key>" };
  const [name, idHex, keyB64] = parts;
  if (!isValidKeyName(name)) return { ok: false, reason: "verifier key has an invalid name" };
  if (!/^[0-9a-f]{8}$/.test(idHex)) return { ok: false, reason: "verifier key id must be 8 lowercase hex digits" };
  const raw = decodeBase64Strict(keyB64);
  if (raw === undefined || raw.length !== 33) return { ok: false, reason: "verifier key material must be base64 of a type byte and a 32-byte Ed25519 key" };
  const type = raw[0] as number;
  if (!isSignatureType(type)) return { ok: false, reason: `unsupported signature type 0x${type.toString(16).padStart(2, "0")}` };
  const publicKey = new Uint8Array(raw.subarray(1));
  const keyId = computeKeyId(name, type, publicKey);
  if (toHex(keyId) !== idHex) return { ok: false, reason: "verifier key id does not match its name and key" };
  // Where Node is at hand the point is checked now; WebCrypto can only refuse it later, when a signature is checked.
  if (nodeCrypto() !== undefined) {
    try {
      publicKeyObject(publicKey);
    } catch {
      return { ok: false, reason: "verifier key is not a valid Ed25519 public key" };
    }
  }
  return { ok: true, key: { name, type, keyId, keyIdHex: idHex, publicKey, text } };
}

export function verifierOf(signer: SignerKey): VerifierKey {
  const { privateKey: _secret, verifierText, ...rest } = signer;
  return { ...rest, text: verifierText };
}

/** Accepts key text or an already-parsed key, so callers can parse once and reuse. */
export function toSigner(key: SignerKey | string): SignerKey {
  if (typeof key !== "string") return key;
  const parsed = parseSignerKey(key);
  if (!parsed.ok) throw new RangeError(parsed.reason);
  return parsed.key;
}

export function toVerifier(key: VerifierKey | string): Result<{ key: VerifierKey }> {
  return typeof key === "string" ? parseVerifierKey(key) : { ok: true, key };
}

export function signatureLine(name: string, keyId: Uint8Array, signature: Uint8Array): string {
  return `${EM_DASH_PREFIX}${name} ${encodeBase64(Uint8Array.of(...keyId, ...signature))}`;
}

/** Signs note text (which must end in a newline) and returns the complete note. */
export function signNote(text: string, signer: SignerKey | string): string {
  const key = toSigner(signer);
  if (key.type !== SIGNATURE_TYPE.ed25519) throw new RangeError("a note is signed with an Ed25519 (type 0x01) key; witnesses use cosign");
  checkNoteText(text);
  const signature = requireNodeCrypto("signing a note").sign(null, utf8(text), key.privateKey);
  return `${text}\n${signatureLine(key.name, key.keyId, signature)}\n`;
}

function checkNoteText(text: string): void {
  if (!text.endsWith("\n")) throw new RangeError("note text must end with a newline");
  if (FORBIDDEN_CONTROL.test(text) || LONE_SURROGATE.test(text)) throw new RangeError("note text must be valid UTF-8 without control characters");
}

/** Splits a note into text and signature lines, enforcing the format but trusting nothing. */
export function parseNote(input: string | Uint8Array): Result<{ note: ParsedNote }> {
  let note: string;
  if (typeof input === "string") {
    if (LONE_SURROGATE.test(input)) return { ok: false, reason: "note is not valid Unicode" };
    note = input;
    if (utf8Length(note) > MAX_NOTE_BYTES) return { ok: false, reason: "note is too large" };
  } else {
    if (input.length > MAX_NOTE_BYTES) return { ok: false, reason: "note is too large" };
    try {
      note = strictUtf8.decode(input);
    } catch {
      return { ok: false, reason: "note is not valid UTF-8" };
    }
  }
  if (FORBIDDEN_CONTROL.test(note)) return { ok: false, reason: "note contains a control character other than newline" };
  if (!note.endsWith("\n")) return { ok: false, reason: "note does not end with a newline" };
  // The text is separated from the signatures by the LAST blank line.
  const split = note.lastIndexOf("\n\n");
  if (split < 0) return { ok: false, reason: "note has no blank line before its signatures" };
  const text = note.slice(0, split + 1);
  const block = note.slice(split + 2);
  if (block === "") return { ok: false, reason: "note has no signatures" };
  const lines = block.slice(0, -1).split("\n");
  if (lines.length > MAX_NOTE_SIGNATURES) return { ok: false, reason: `note has more than ${MAX_NOTE_SIGNATURES} signatures` };
  const signatures: NoteSignature[] = [];
  for (const line of lines) {
    const parsed = parseSignatureLine(line);
    if (!parsed.ok) return parsed;
    signatures.push(parsed.signature);
  }
  return { ok: true, note: { text, signatures } };
}

export function parseSignatureLine(line: string): Result<{ signature: NoteSignature }> {
  if (!line.startsWith(EM_DASH_PREFIX)) return { ok: false, reason: "signature line does not start with an em dash and a space" };
  const rest = line.slice(EM_DASH_PREFIX.length);
  const space = rest.indexOf(" ");
  if (space < 0 || rest.indexOf(" ", space + 1) >= 0) return { ok: false, reason: "signature line must be '— <name> <base64>'" };
  const name = rest.slice(0, space);
  if (!isValidKeyName(name)) return { ok: false, reason: "signature line has an invalid key name" };
  const raw = decodeBase64Strict(rest.slice(space + 1));
  if (raw === undefined || raw.length < 5) return { ok: false, reason: "signature is not canonical base64 of a key id and signature" };
  const keyId = new Uint8Array(raw.subarray(0, 4));
  return { ok: true, signature: { name, keyId, keyIdHex: toHex(keyId), signature: new Uint8Array(raw.subarray(4)), line } };
}

export function signatureMatchesKey(signature: NoteSignature, key: VerifierKey): boolean {
  return signature.name === key.name && signature.keyIdHex === key.keyIdHex;
}

/** Ed25519 verification of note text, synchronous (Node only: the hub); false for any malformed input rather than an exception. */
export function verifyEd25519(message: Uint8Array | string, signature: Uint8Array, key: VerifierKey): boolean {
  if (signature.length !== 64) return false;
  try {
    return requireNodeCrypto("synchronous Ed25519 verification").verify(null, typeof message === "string" ? utf8(message) : message, publicKeyObject(key.publicKey), signature);
  } catch {
    return false;
  }
}

/** The same check with WebCrypto: runs in Node and in the browser. */
export function verifyEd25519Async(message: Uint8Array | string, signature: Uint8Array, key: VerifierKey): Promise<boolean> {
  return verifyEd25519Raw(key.publicKey, typeof message === "string" ? utf8(message) : message, signature);
}

/** One signature a note verification must check: the decision logic is shared by the sync and async forms. */
export interface SignatureCheck {
  message: string;
  signature: Uint8Array;
  key: VerifierKey;
}

export type NotePlan = Result<{ note: ParsedNote; checks: SignatureCheck[] }>;

/**
 * Everything of note verification except the Ed25519 arithmetic, per the
 * spec: signatures from unknown keys are ignored; each known key's signature
 * must verify (one failure rejects the whole note); at least one must exist.
 */
export function planNoteVerification(input: string | Uint8Array, keys: readonly VerifierKey[]): NotePlan {
  const parsed = parseNote(input);
  if (!parsed.ok) return parsed;
  const checks: SignatureCheck[] = [];
  for (const signature of parsed.note.signatures) {
    const key = keys.find((k) => k.type === SIGNATURE_TYPE.ed25519 && signatureMatchesKey(signature, k));
    if (key === undefined) continue;
    checks.push({ message: parsed.note.text, signature: signature.signature, key });
  }
  if (checks.length === 0) return { ok: false, reason: "no signature from a trusted key" };
  return { ok: true, note: parsed.note, checks };
}

export type NoteVerification = Result<{ note: ParsedNote; verifiedBy: VerifierKey[] }>;

function concludeNote(plan: { note: ParsedNote; checks: SignatureCheck[] }, results: readonly boolean[]): NoteVerification {
  const verifiedBy: VerifierKey[] = [];
  for (const [i, check] of plan.checks.entries()) {
    if (results[i] !== true) return { ok: false, reason: `signature by ${check.key.name} (${check.key.keyIdHex}) does not verify` };
    if (!verifiedBy.includes(check.key)) verifiedBy.push(check.key);
  }
  return { ok: true, note: plan.note, verifiedBy };
}

/** Verifies a note against trusted Ed25519 (type 0x01) keys, synchronously (the hub; Node only). */
export function verifyNote(input: string | Uint8Array, keys: readonly VerifierKey[]): NoteVerification {
  const plan = planNoteVerification(input, keys);
  if (!plan.ok) return plan;
  return concludeNote(plan, plan.checks.map((c) => verifyEd25519(c.message, c.signature, c.key)));
}

/** verifyNote with WebCrypto: the same decision, in Node or a browser. */
export async function verifyNoteAsync(input: string | Uint8Array, keys: readonly VerifierKey[]): Promise<NoteVerification> {
  const plan = planNoteVerification(input, keys);
  if (!plan.ok) return plan;
  const results = await Promise.all(plan.checks.map((c) => verifyEd25519Async(c.message, c.signature, c.key)));
  return concludeNote(plan, results);
}
