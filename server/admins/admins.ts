/**
 * Admin accounts, minimal: create one with a generated password (printed
 * once by the CLI), look one up by name, verify a password.
 *
 * Password hashing: argon2id is the first choice, but no maintained argon2
 * package is installed and this issue may not add one, so passwords are
 * hashed with node:crypto scrypt (RFC 7914) at N=2^17, r=8, p=1 (128 MiB,
 * OWASP's scrypt recommendation is N≥2^17) with a 16-byte random salt and a
 * 32-byte key, stored as `scrypt$N$r$p$salt$hash` (base64url) so parameters
 * can be raised later. The generated password has 144 bits of entropy.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { eq } from "drizzle-orm";
import type { Database } from "../db";
import { adminUsers } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { digestOf, hashActor } from "../ledger/entry";

export const SCRYPT_PARAMS = { N: 2 ** 17, r: 8, p: 1, keyLength: 32, maxmem: 256 * 1024 * 1024 } as const;
export const ADMIN_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;

function derive(password: string, salt: Buffer, N: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keyLength, { N, r, p, maxmem: SCRYPT_PARAMS.maxmem }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p, keyLength } = SCRYPT_PARAMS;
  const key = await derive(password, salt, N, r, p, keyLength);
  return `scrypt$${N}$${r}$${p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const actual = await derive(password, Buffer.from(salt, "base64url"), Number(n), Number(r), Number(p), expected.length);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

export interface AdminRecord {
  id: string;
  username: string;
  disabled: boolean;
}

/** Creates an admin and returns the generated password (shown once; only its hash is stored). Sealed as admin/1. */
export async function createAdmin(db: Database, name: string): Promise<{ admin: AdminRecord; password: string }> {
  if (!ADMIN_NAME_PATTERN.test(name)) throw new LeaseholdError("INVALID_ARGUMENT", "admin name must be 1–63 of a-z 0-9 . _ - (starting with a letter or digit)", { tier: "hub" });
  if ((await findAdminByName(db, name)) !== undefined) throw new LeaseholdError("INVALID_ARGUMENT", `an admin named ${name} already exists`, { tier: "hub" });
  const password = randomBytes(18).toString("base64url");
  const passwordHash = await hashPassword(password);
  const admin = await db.transaction(async (tx) => {
    const [row] = await tx.insert(adminUsers).values({ username: name, passwordHash }).returning();
    if (row === undefined) throw new LeaseholdError("INTERNAL", "admin insert returned no row", { tier: "database" });
    await appendEntry(tx as unknown as Database, {
      type: "admin/1",
      time: new Date(),
      action_id: null,
      actor: hashActor("system", "cli"),
      data: { operation: "admin.create", target_digest: hashActor("admin", row.id), settings_digest: digestOf(name) },
    });
    return row;
  });
  return { admin: { id: admin.id, username: admin.username, disabled: false }, password };
}

export async function findAdminByName(db: Database, name: string): Promise<AdminRecord | undefined> {
  const [row] = await db.select().from(adminUsers).where(eq(adminUsers.username, name));
  return row === undefined ? undefined : { id: row.id, username: row.username, disabled: row.disabledAt !== null };
}

/** The acting admin for a CLI command (`--as NAME`): must exist and not be disabled. */
export async function requireActiveAdmin(db: Database, name: string): Promise<AdminRecord> {
  const admin = await findAdminByName(db, name);
  if (admin === undefined || admin.disabled) {
    throw new LeaseholdError("NOT_FOUND", `no active admin named ${JSON.stringify(name)}`, { tier: "hub", hint: "create one with: leasehold admin create --name NAME" });
  }
  return admin;
}
