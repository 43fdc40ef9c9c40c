/**
 * The approval challenge: what a passkey signs when a person approves one
 * held action. Pure (WebCrypto and TextEncoder only, no `node:` imports) so
 * the hub, `leasehold verify` and the browser verifier derive it with the
 * same code.
 *
 *   challenge = SHA-256("leasehold.approval/1\n" + approval_id + "\n" + action_hash + "\n" + nonce)
 *
 * `nonce` is 32 fresh random bytes in base64url (no padding), stored with the
 * challenge (single use, 2 minutes) and kept with the assertion, so a
 * verifier can recompute the challenge from the approval/1 entry's
 * `approval_id` and `action_hash` alone: the signature covers exactly that
 * action, and an assertion made for one approval or hash fails for another.
 */

export const APPROVAL_CHALLENGE_DOMAIN = "leasehold.approval/1";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** base64url without padding (RFC 4648 §5), as WebAuthn's clientDataJSON writes challenges. */
export function toBase64Url(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  if (i < bytes.length) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8);
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]!;
    if (i + 1 < bytes.length) out += ALPHABET[(n >> 6) & 63]!;
  }
  return out;
}

/** Strict base64url (no padding, canonical trailing bits); undefined for anything else. */
export function fromBase64Url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let o = 0;
  for (const ch of text) {
    value = (value << 6) | ALPHABET.indexOf(ch);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (value >> bits) & 0xff;
    }
  }
  // Leftover bits must be zero: one spelling per byte string.
  if ((value & ((1 << bits) - 1)) !== 0) return undefined;
  return out;
}

export async function sha256(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
}

/** The text the approval challenge hashes. */
export function approvalChallengeText(approvalId: string, actionHash: string, nonce: string): string {
  return `${APPROVAL_CHALLENGE_DOMAIN}\n${approvalId}\n${actionHash}\n${nonce}`;
}

/** The challenge bytes for approving `approvalId` bound to `actionHash` with `nonce` (base64url). */
export async function approvalChallenge(approvalId: string, actionHash: string, nonce: string): Promise<Uint8Array> {
  return sha256(new TextEncoder().encode(approvalChallengeText(approvalId, actionHash, nonce)));
}

/** The same challenge as WebAuthn carries it (clientDataJSON `challenge`): base64url, no padding. */
export async function approvalChallengeBase64Url(approvalId: string, actionHash: string, nonce: string): Promise<string> {
  return toBase64Url(await approvalChallenge(approvalId, actionHash, nonce));
}

/**
 * The grant challenge: what a passkey signs when a person creates a grant at
 * or above the passkey threshold.
 *
 *   challenge = SHA-256("leasehold.grant/1\n" + scope_digest + "\n" + nonce)
 *
 * `scope_digest` is `sha256:<hex>` of the RFC 8785 form of the grant's whole
 * scope (server/policy/grants `grantScope`: tool, host, ceiling, pattern,
 * env, stdin digest, cwd, uses, exact expiry), sealed in grant/1 `created`
 * beside the assertion's digest, so the signature covers exactly the grant
 * that was created and nothing wider.
 */
export const GRANT_CHALLENGE_DOMAIN = "leasehold.grant/1";

export function grantChallengeText(scopeDigest: string, nonce: string): string {
  return `${GRANT_CHALLENGE_DOMAIN}\n${scopeDigest}\n${nonce}`;
}

export async function grantChallenge(scopeDigest: string, nonce: string): Promise<Uint8Array> {
  return sha256(new TextEncoder().encode(grantChallengeText(scopeDigest, nonce)));
}

export async function grantChallengeBase64Url(scopeDigest: string, nonce: string): Promise<string> {
  return toBase64Url(await grantChallenge(scopeDigest, nonce));
}

/** A fresh 32-byte nonce, base64url. */
export function freshNonce(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return toBase64Url(bytes);
}

/** What approvals.assertion stores and the export carries: all base64url (no padding). */
export interface StoredAssertion {
  credential_id: string;
  authenticator_data: string;
  client_data_json: string;
  signature: string;
  nonce: string;
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** `sha256:<hex>` of the RFC 8785 form of an object of base64url strings (sorted keys; such strings need no escaping). */
async function digestOfStrings(fields: Record<string, string>): Promise<`sha256:${string}`> {
  const keys = Object.keys(fields).sort();
  for (const key of keys) if (!/^[A-Za-z0-9_-]*$/.test(fields[key]!)) throw new RangeError(`${key} must be base64url`);
  const text = `{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(fields[k])}`).join(",")}}`;
  return `sha256:${hex(await sha256(new TextEncoder().encode(text)))}`;
}

/** The digest sealed in approval/1 `assertion_digest`. */
export function assertionDigest(a: StoredAssertion): Promise<`sha256:${string}`> {
  return digestOfStrings({ credential_id: a.credential_id, authenticator_data: a.authenticator_data, client_data_json: a.client_data_json, signature: a.signature, nonce: a.nonce });
}

/** The digest sealed as admin/1 `passkey.register` / `passkey.remove` settings_digest: the credential id and its COSE public key. */
export function passkeyKeyDigest(credentialId: string, publicKey: string): Promise<`sha256:${string}`> {
  return digestOfStrings({ credential_id: credentialId, public_key: publicKey });
}

const RISK_ORDER = ["read_only", "low", "medium", "high", "critical"] as const;

/**
 * Whether approving an action at `risk` needs a passkey under `threshold`
 * (LEASEHOLD_PASSKEY_APPROVAL_RISK). Unknown risks count as above critical
 * (fail closed); an unknown threshold counts as `high`. Shared by the hub and
 * the approvals page (which asks for the ceremony before calling).
 */
export function needsPasskey(risk: string, threshold: "high" | "critical" | "off" | undefined): boolean {
  if (threshold === "off") return false;
  const at = RISK_ORDER.indexOf(risk as (typeof RISK_ORDER)[number]);
  return (at < 0 ? RISK_ORDER.length : at) >= RISK_ORDER.indexOf(threshold === "critical" ? "critical" : "high");
}
