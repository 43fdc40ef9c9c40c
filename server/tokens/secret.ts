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

/**
 * OAuth bearer tokens the hub issues as its own authorization server
 * (server/oauth): access `lha_` + 24 random bytes (short-lived), refresh
 * `lhr_` + 32 random bytes (used once). Hashed and compared like `lh_`.
 */
export const ACCESS_TOKEN_PREFIX = "lha_";
export const REFRESH_TOKEN_PREFIX = "lhr_";
const ACCESS_PATTERN = /^lha_[A-Za-z0-9_-]{32}$/;
const REFRESH_PATTERN = /^lhr_[A-Za-z0-9_-]{43}$/;

export function generateAccessToken(): string {
  return ACCESS_TOKEN_PREFIX + randomBytes(24).toString("base64url");
}

export function generateRefreshToken(): string {
  return REFRESH_TOKEN_PREFIX + randomBytes(32).toString("base64url");
}

export function looksLikeAccessToken(value: string): boolean {
  return ACCESS_PATTERN.test(value);
}

export function looksLikeRefreshToken(value: string): boolean {
  return REFRESH_PATTERN.test(value);
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
