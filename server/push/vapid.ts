/**
 * The hub's VAPID key (RFC 8292): a P-256 key that identifies this hub to
 * push services. Browsers subscribe with its public half
 * (`applicationServerKey`) and a push service accepts messages for that
 * subscription only when signed by it, so every hub process must hold the
 * same key: it lives in the key directory beside the job and log keys
 * (`push/vapid.key`, PKCS#8 PEM, 0600 — server/keys), created at the first
 * start (docs/deploy.md#identity).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import path from "node:path";
import { LeaseholdError } from "../errors";
import { ensureSecretFile, readSecretFile } from "../keys/secret-file";

export const VAPID_KEY_FILE = path.join("push", "vapid.key");
/** A token is good for at most 24 h (RFC 8292 §2); 12 h leaves room for clock skew. */
const TOKEN_LIFETIME_S = 12 * 3600;

export interface VapidKey {
  privateKey: KeyObject;
  /** The uncompressed public point, base64url: the browser's `applicationServerKey` and the `k=` parameter. */
  publicKey: string;
  /** First 16 hex of sha256(public point): names the key on each subscription. */
  keyId: string;
}

function b64url(bytes: Buffer | string): string {
  return Buffer.from(bytes).toString("base64url");
}

function fromPrivate(privateKey: KeyObject): VapidKey {
  const jwk = createPublicKey(privateKey).export({ format: "jwk" });
  if (jwk.crv !== "P-256" || jwk.x === undefined || jwk.y === undefined) throw new Error("not a P-256 key");
  const point = Buffer.concat([Buffer.from([0x04]), Buffer.from(jwk.x, "base64url"), Buffer.from(jwk.y, "base64url")]);
  return { privateKey, publicKey: b64url(point), keyId: createHash("sha256").update(point).digest("hex").slice(0, 16) };
}

/** A key only in memory (tests). */
export function generateVapidKey(): VapidKey {
  return fromPrivate(generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey);
}

export function loadOrCreateVapidKey(keyDir: string): VapidKey {
  const file = path.join(keyDir, VAPID_KEY_FILE);
  ensureSecretFile(file, () => generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString());
  const pem = readSecretFile(file, "VAPID key", "hub");
  try {
    return fromPrivate(createPrivateKey(pem));
  } catch (error) {
    throw new LeaseholdError("CONFIG_INVALID", `VAPID key ${file} is unreadable`, { tier: "hub", cause: error });
  }
}

/**
 * The `Authorization` header for a push to `endpoint`: `vapid t=<ES256 JWT>,
 * k=<public key>` (RFC 8292 §3), the JWT's `aud` the endpoint's origin and
 * `sub` the hub's public URL (how a push service's operator reaches us).
 */
export function vapidAuthorization(key: VapidKey, endpoint: string, subject: string, now: Date): string {
  const header = b64url(JSON.stringify({ typ: "JWT", alg: "ES256" }));
  const claims = b64url(JSON.stringify({ aud: new URL(endpoint).origin, exp: Math.floor(now.getTime() / 1000) + TOKEN_LIFETIME_S, sub: subject }));
  // JOSE wants r ‖ s (64 bytes), not DER.
  const signature = sign("sha256", Buffer.from(`${header}.${claims}`), { key: key.privateKey, dsaEncoding: "ieee-p1363" });
  return `vapid t=${header}.${claims}.${b64url(signature)}, k=${key.publicKey}`;
}
