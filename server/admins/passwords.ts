/**
 * Password hashing: argon2id through `@node-rs/argon2` (a maintained binding
 * with a prebuilt binary), at OWASP's first argon2id profile — 19 MiB, two
 * passes, one lane. Hashes are PHC strings (`$argon2id$v=19$m=…`) so the
 * parameters travel with each hash and can be raised later.
 *
 * Hashes written before argon2 was installed are `scrypt$N$r$p$salt$key`
 * (base64url). They still verify, and `needsRehash` tells sign-in to replace
 * them with argon2id while it holds the plaintext.
 */
import { scrypt, timingSafeEqual } from "node:crypto";
import { hash, verify } from "@node-rs/argon2";

export const ARGON2_PARAMS = { memoryCost: 19_456, timeCost: 2, parallelism: 1, outputLen: 32 } as const;
/** Password length bounds: long enough to resist guessing, short enough that hashing stays cheap. */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

export async function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_PARAMS);
}

function scryptDerive(password: string, salt: Buffer, N: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keyLength, { N, r, p, maxmem: 256 * 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

async function verifyLegacyScrypt(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split("$");
  if (scheme !== "scrypt" || !n || !r || !p || !salt || !key) return false;
  const N = Number(n);
  // A stored hash is data from the database: refuse parameters that would make verification a denial of service.
  if (!Number.isInteger(N) || N < 2 || N > 2 ** 20 || Number(r) > 16 || Number(p) > 4) return false;
  const expected = Buffer.from(key, "base64url");
  const actual = await scryptDerive(password, Buffer.from(salt, "base64url"), N, Number(r), Number(p), expected.length);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (password.length > PASSWORD_MAX_LENGTH) return false;
  if (stored.startsWith("$argon2id$")) {
    try {
      return await verify(stored, password);
    } catch {
      return false; // a malformed stored hash verifies nothing
    }
  }
  return verifyLegacyScrypt(password, stored);
}

/** True when a stored hash is not argon2id at today's parameters (upgrade it at the next sign-in). */
export function needsRehash(stored: string): boolean {
  const { memoryCost, timeCost, parallelism } = ARGON2_PARAMS;
  return !stored.startsWith(`$argon2id$v=19$m=${memoryCost},t=${timeCost},p=${parallelism}$`);
}

/** Why a new password is unacceptable, or undefined. */
export function passwordProblem(password: string, username: string): string | undefined {
  if (password.length < PASSWORD_MIN_LENGTH) return `a password needs at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `a password may have at most ${PASSWORD_MAX_LENGTH} characters`;
  if (password.toLowerCase().includes(username.toLowerCase()) && username.length >= 3) return "a password must not contain the user name";
  return undefined;
}
