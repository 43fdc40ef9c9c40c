import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, verify, type KeyObject } from "node:crypto";
import { decodeBase64Strict, encodeBase64 } from "./base64";

/**
 * C2SP signed-note (c2sp.org/signed-note) with Ed25519 keys, and the vkey /
 * signer-key text encodings. The note text MUST be ignored until a trusted
 * signature over it has verified, so parsing here is strict and separate from
 * trusting: nothing returned by parseNote is believed by any caller until
 * verifyNote says so.
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
  keyObject: KeyObject;
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
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_ED25519_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

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
  const digest = createHash("sha256").update(name, "utf8").update(Uint8Array.of(0x0a, type)).update(publicKey).digest();
  return new Uint8Array(digest.subarray(0, 4));
}

const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

function isSignatureType(value: number): value is SignatureType {
  return value === SIGNATURE_TYPE.ed25519 || value === SIGNATURE_TYPE.cosignatureV1;
}

function publicKeyObject(publicKey: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, publicKey]), format: "der", type: "spki" });
}

export function formatVerifierKey(name: string, type: SignatureType, publicKey: Uint8Array): string {
  return `${name}+${toHex(computeKeyId(name, type, publicKey))}+${encodeBase64(Uint8Array.of(type, ...publicKey))}`;
}

export function formatSignerKey(name: string, type: SignatureType, seed: Uint8Array, publicKey: Uint8Array): string {
  return `PRIVATE+KEY+${name}+${toHex(computeKeyId(name, type, publicKey))}+${encodeBase64(Uint8Array.of(type, ...seed))}`;
}

function signerFromSeed(name: string, type: SignatureType, seed: Uint8Array): SignerKey {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: "der", type: "pkcs8" });
  const keyObject = createPublicKey(privateKey);
  const spki = keyObject.export({ format: "der", type: "spki" });
  const publicKey = new Uint8Array(spki.subarray(spki.length - 32));
  const keyId = computeKeyId(name, type, publicKey);
  return {
    name,
    type,
    keyId,
    keyIdHex: toHex(keyId),
    publicKey,
    keyObject,
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
  const key = signerFromSeed(name, type, new Uint8Array(randomBytes(32)));
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
  let keyObject: KeyObject;
  try {
    keyObject = publicKeyObject(publicKey);
  } catch {
    return { ok: false, reason: "verifier key is not a valid Ed25519 public key" };
  }
  return { ok: true, key: { name, type, keyId, keyIdHex: idHex, publicKey, keyObject, text } };
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
  const signature = sign(null, Buffer.from(text, "utf8"), key.privateKey);
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
    if (Buffer.byteLength(note, "utf8") > MAX_NOTE_BYTES) return { ok: false, reason: "note is too large" };
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

/** Ed25519 verification of note text; false for any malformed input rather than an exception. */
export function verifyEd25519(message: Uint8Array | string, signature: Uint8Array, key: VerifierKey): boolean {
  if (signature.length !== 64) return false;
  try {
    return verify(null, typeof message === "string" ? Buffer.from(message, "utf8") : message, key.keyObject, signature);
  } catch {
    return false;
  }
}

/**
 * Verifies a note against trusted Ed25519 (type 0x01) keys, per the spec:
 * signatures from unknown keys are ignored; a known key whose signature
 * fails rejects the whole note; at least one known key must verify.
 */
export function verifyNote(input: string | Uint8Array, keys: readonly VerifierKey[]): Result<{ note: ParsedNote; verifiedBy: VerifierKey[] }> {
  const parsed = parseNote(input);
  if (!parsed.ok) return parsed;
  const verifiedBy: VerifierKey[] = [];
  for (const signature of parsed.note.signatures) {
    const key = keys.find((k) => k.type === SIGNATURE_TYPE.ed25519 && signatureMatchesKey(signature, k));
    if (key === undefined) continue;
    if (!verifyEd25519(parsed.note.text, signature.signature, key)) {
      return { ok: false, reason: `signature by ${key.name} (${key.keyIdHex}) does not verify` };
    }
    if (!verifiedBy.includes(key)) verifiedBy.push(key);
  }
  if (verifiedBy.length === 0) return { ok: false, reason: "no signature from a trusted key" };
  return { ok: true, note: parsed.note, verifiedBy };
}
