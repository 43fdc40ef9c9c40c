/**
 * RFC 8291 message encryption for Web Push, with the `aes128gcm` content
 * coding of RFC 8188, written with node:crypto alone: the three primitives it
 * needs (P-256 ECDH, HKDF-SHA-256, AES-128-GCM) are there, and the `web-push`
 * package would add its own HTTP client, a proxy agent and the obsolete
 * `aesgcm` coding to the hub for what is some forty lines here. The test's
 * push service decrypts with an independent implementation of the receiving
 * side (server/push/push.test.ts).
 */
import { createCipheriv, createECDH, hkdfSync, randomBytes } from "node:crypto";

/** One record of at most 4096 bytes: what every push service must accept. */
export const RECORD_SIZE = 4096;
const HEADER_BYTES = 16 + 4 + 1 + 65;
const TAG_BYTES = 16;
/** Plaintext that fits one record: the record less tag and the 0x02 delimiter, less the header the body also carries. */
export const MAX_PLAINTEXT_BYTES = RECORD_SIZE - HEADER_BYTES - TAG_BYTES - 1;

export interface BrowserKeys {
  /** `ua_public`: the browser's uncompressed P-256 point (65 bytes). */
  p256dh: Buffer;
  /** The 16-byte authentication secret. */
  auth: Buffer;
}

function hkdf(ikm: Buffer, salt: Buffer, info: Buffer, length: number): Buffer {
  return Buffer.from(hkdfSync("sha256", ikm, salt, info, length));
}

/**
 * The body of one push message: `salt ‖ rs ‖ idlen ‖ as_public ‖ ciphertext`,
 * a single record ending in the 0x02 delimiter. A fresh sender key pair and
 * salt per message (RFC 8291 §3.3: never reused).
 */
export function encryptPushPayload(plaintext: Buffer, keys: BrowserKeys, random: { salt?: Buffer; ecdh?: ReturnType<typeof createECDH> } = {}): Buffer {
  if (keys.p256dh.length !== 65 || keys.p256dh[0] !== 0x04) throw new Error("p256dh is not an uncompressed P-256 point");
  if (keys.auth.length !== 16) throw new Error("auth is not 16 bytes");
  if (plaintext.length > MAX_PLAINTEXT_BYTES) throw new Error(`push payload is ${plaintext.length} bytes; at most ${MAX_PLAINTEXT_BYTES} fit one record`);
  const sender = random.ecdh ?? createECDH("prime256v1");
  if (random.ecdh === undefined) sender.generateKeys();
  const senderPublic = sender.getPublicKey();
  // Throws for a point not on the curve: a bad subscription fails here, not at the push service.
  const shared = sender.computeSecret(keys.p256dh);
  const keyInfo = Buffer.concat([Buffer.from("WebPush: info\0", "latin1"), keys.p256dh, senderPublic]);
  const ikm = hkdf(shared, keys.auth, keyInfo, 32);
  const salt = random.salt ?? randomBytes(16);
  const cek = hkdf(ikm, salt, Buffer.from("Content-Encoding: aes128gcm\0", "latin1"), 16);
  const nonce = hkdf(ikm, salt, Buffer.from("Content-Encoding: nonce\0", "latin1"), 12);
  const cipher = createCipheriv("aes-128-gcm", cek, nonce);
  const sealed = Buffer.concat([cipher.update(Buffer.concat([plaintext, Buffer.from([0x02])])), cipher.final(), cipher.getAuthTag()]);
  const header = Buffer.alloc(21);
  salt.copy(header, 0);
  header.writeUInt32BE(RECORD_SIZE, 16);
  header.writeUInt8(senderPublic.length, 20);
  return Buffer.concat([header, senderPublic, sealed]);
}
