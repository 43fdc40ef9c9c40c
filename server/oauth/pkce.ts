import { createHash, timingSafeEqual } from "node:crypto";

/**
 * PKCE (RFC 7636), S256 only — OAuth 2.1 and the MCP authorization spec
 * forbid `plain`. A challenge is BASE64URL(SHA-256(verifier)): 43 characters.
 */
const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

export function isCodeChallenge(value: string): boolean {
  return CHALLENGE_PATTERN.test(value);
}

export function isCodeVerifier(value: string): boolean {
  return VERIFIER_PATTERN.test(value);
}

export function challengeOf(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

/** Constant-time: the verifier is the client's secret for this one code. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!isCodeVerifier(verifier) || !isCodeChallenge(challenge)) return false;
  const a = Buffer.from(challengeOf(verifier));
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}
