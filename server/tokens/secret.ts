import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Agent bearer tokens: `lh_` + 32 base64url characters of 24 random bytes
 * (192 bits). Only SHA-256 of the whole string is ever stored; the token is
 * shown once, when it is created.
 */
export const TOKEN_PREFIX = "lh_";
export const TOKEN_RANDOM_BYTES = 24;
const TOKEN_PATTERN = /^lh_[A-Za-z0-9_-]{32}$/;

export function generateTokenSecret(): string {
  return TOKEN_PREFIX + randomBytes(TOKEN_RANDOM_BYTES).toString("base64url");
}

/** True when `value` has the exact shape of a token this hub issues (cheap pre-check, not authentication). */
export function looksLikeToken(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

export function hashTokenSecret(secret: string): Uint8Array {
  return new Uint8Array(createHash("sha256").update(secret, "utf8").digest());
}

/**
 * Constant-time equality of two digests. The lookup by hash already found the
 * row; comparing again in constant time keeps the check independent of how
 * the database compared the index key.
 */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
