/**
 * Admin accounts: create (with a generated one-time password), list,
 * disable, change role, set or change a password, and sign in. Every change
 * is sealed as admin/1 (operation, target, settings digests) in the same
 * transaction as the change itself.
 *
 * Generated passwords have 144 random bits and must be replaced at the first
 * sign-in (`must_change_password`). Hashing: ./passwords.ts (argon2id).
 */
import { randomBytes } from "node:crypto";
import { asc, eq } from "drizzle-orm";
import type { Database } from "../db";
import { adminUsers } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { digestOf, hashActor } from "../ledger/entry";
import { removeAllPasskeys } from "../passkeys/passkeys";
import { hashPassword, needsRehash, passwordProblem, verifyPassword } from "./passwords";
import { adminRoleSchema, type AdminRole } from "./roles";
import { createAdminSession, invalidateUserSessions } from "./sessions";
import { signInThrottle, type SignInThrottle } from "./throttle";

export const ADMIN_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;

export interface AdminRecord {
  id: string;
  username: string;
  role: AdminRole;
  disabled: boolean;
  mustChangePassword: boolean;
  createdAt: Date;
}

/** Who made a change: an admin (browser or `--as`) or the hub/CLI itself. */
export type AdminActor = { kind: "admin"; id: string } | { kind: "system"; id: "cli" | "first-start" };

function actorDigest(actor: AdminActor): `sha256:${string}` {
  return hashActor(actor.kind === "admin" ? "admin" : "system", actor.id);
}

type Row = typeof adminUsers.$inferSelect;

function record(row: Row): AdminRecord {
  return { id: row.id, username: row.username, role: row.role as AdminRole, disabled: row.disabledAt !== null, mustChangePassword: row.mustChangePassword, createdAt: row.createdAt };
}

async function seal(db: Database, actor: AdminActor, operation: string, targetId: string, settings: string | null): Promise<void> {
  await appendEntry(db, {
    type: "admin/1",
    time: new Date(),
    action_id: null,
    actor: actorDigest(actor),
    data: { operation, target_digest: hashActor("admin", targetId), settings_digest: settings === null ? null : digestOf(settings) },
  });
}

function generatedPassword(): string {
  return randomBytes(18).toString("base64url");
}

/** Creates an admin and returns the generated one-time password (shown once; only its hash is stored). */
export async function createAdmin(
  db: Database,
  name: string,
  options: { role?: AdminRole; actor?: AdminActor } = {},
): Promise<{ admin: AdminRecord; password: string }> {
  if (!ADMIN_NAME_PATTERN.test(name)) throw new LeaseholdError("INVALID_ARGUMENT", "admin name must be 1–63 of a-z 0-9 . _ - (starting with a letter or digit)", { tier: "hub" });
  const role = adminRoleSchema.parse(options.role ?? "owner");
  if ((await findAdminByName(db, name)) !== undefined) throw new LeaseholdError("INVALID_ARGUMENT", `an admin named ${name} already exists`, { tier: "hub" });
  const password = generatedPassword();
  const passwordHash = await hashPassword(password);
  const row = await db.transaction(async (tx) => {
    const [inserted] = await tx.insert(adminUsers).values({ username: name, passwordHash, role, mustChangePassword: true }).returning();
    if (inserted === undefined) throw new LeaseholdError("INTERNAL", "admin insert returned no row", { tier: "database" });
    await seal(tx as unknown as Database, options.actor ?? { kind: "system", id: "cli" }, "admin.create", inserted.id, `${name}\n${role}`);
    return inserted;
  });
  return { admin: record(row), password };
}

export async function findAdminByName(db: Database, name: string): Promise<AdminRecord | undefined> {
  const [row] = await db.select().from(adminUsers).where(eq(adminUsers.username, name));
  return row === undefined ? undefined : record(row);
}

export async function listAdmins(db: Database): Promise<AdminRecord[]> {
  return (await db.select().from(adminUsers).orderBy(asc(adminUsers.createdAt), asc(adminUsers.username))).map(record);
}

/** The acting admin for a CLI command (`--as NAME`): must exist and not be disabled. */
export async function requireActiveAdmin(db: Database, name: string): Promise<AdminRecord> {
  const admin = await findAdminByName(db, name);
  if (admin === undefined || admin.disabled) {
    throw new LeaseholdError("NOT_FOUND", `no active admin named ${JSON.stringify(name)}`, { tier: "hub", hint: "create one with: leasehold admin create --name NAME" });
  }
  return admin;
}

async function requireAdmin(db: Database, name: string): Promise<AdminRecord> {
  const admin = await findAdminByName(db, name);
  if (admin === undefined) throw new LeaseholdError("NOT_FOUND", `no admin named ${JSON.stringify(name)}`, { tier: "hub" });
  return admin;
}

/** Refuses a change that would leave the hub without an active owner. */
async function keepAnOwner(db: Database, changing: AdminRecord): Promise<void> {
  if (changing.role !== "owner" || changing.disabled) return;
  const owners = (await listAdmins(db)).filter((a) => a.role === "owner" && !a.disabled && a.id !== changing.id);
  if (owners.length === 0) throw new LeaseholdError("FORBIDDEN", `${changing.username} is the last active owner`, { tier: "hub", hint: "make another admin an owner first" });
}

/** Disables an admin and ends every session of theirs. */
export async function disableAdmin(db: Database, name: string, actor: AdminActor): Promise<AdminRecord> {
  const admin = await requireAdmin(db, name);
  if (admin.disabled) return admin;
  await keepAnOwner(db, admin);
  const row = await db.transaction(async (tx) => {
    const [updated] = await tx.update(adminUsers).set({ disabledAt: new Date() }).where(eq(adminUsers.id, admin.id)).returning();
    await invalidateUserSessions(tx as unknown as Database, admin.id);
    await seal(tx as unknown as Database, actor, "admin.disable", admin.id, null);
    return updated;
  });
  if (row === undefined) throw new LeaseholdError("INTERNAL", "admin update returned no row", { tier: "database" });
  return record(row);
}

export async function setAdminRole(db: Database, name: string, role: AdminRole, actor: AdminActor): Promise<AdminRecord> {
  const parsed = adminRoleSchema.parse(role);
  const admin = await requireAdmin(db, name);
  if (admin.role === parsed) return admin;
  await keepAnOwner(db, admin);
  const row = await db.transaction(async (tx) => {
    const [updated] = await tx.update(adminUsers).set({ role: parsed }).where(eq(adminUsers.id, admin.id)).returning();
    await seal(tx as unknown as Database, actor, "admin.role", admin.id, parsed);
    return updated;
  });
  if (row === undefined) throw new LeaseholdError("INTERNAL", "admin update returned no row", { tier: "database" });
  return record(row);
}

/**
 * An owner's reset is account recovery: a new generated one-time password,
 * every session ended, and every passkey of the account marked removed (each
 * sealed as admin/1 `passkey.remove`; rows and keys kept so what they signed
 * stays verifiable). A reset happens because the account may be in someone
 * else's hands; a passkey that person added would otherwise outlive it and
 * still sign in. The admin registers passkeys again after signing in.
 */
export async function resetAdminPassword(db: Database, name: string, actor: AdminActor): Promise<{ admin: AdminRecord; password: string; passkeysRemoved: number }> {
  const admin = await requireAdmin(db, name);
  const password = generatedPassword();
  const passwordHash = await hashPassword(password);
  const passkeysRemoved = await db.transaction(async (tx) => {
    await tx.update(adminUsers).set({ passwordHash, mustChangePassword: true, passwordChangedAt: new Date() }).where(eq(adminUsers.id, admin.id));
    await invalidateUserSessions(tx as unknown as Database, admin.id);
    await seal(tx as unknown as Database, actor, "admin.password_reset", admin.id, null);
    return removeAllPasskeys(tx as unknown as Database, admin.id, actorDigest(actor));
  });
  return { admin: { ...admin, mustChangePassword: true }, password, passkeysRemoved };
}

/** The signed-in admin replaces their password (after proving the current one); their other sessions end. */
export async function changeOwnPassword(
  db: Database,
  input: { adminId: string; sessionId: string; current: string; next: string },
): Promise<void> {
  const [row] = await db.select().from(adminUsers).where(eq(adminUsers.id, input.adminId));
  if (row === undefined || row.disabledAt !== null) throw new LeaseholdError("UNAUTHENTICATED", "sign in again", { tier: "hub" });
  if (!(await verifyPassword(input.current, row.passwordHash))) throw new LeaseholdError("FORBIDDEN", "the current password is wrong", { tier: "hub" });
  const problem = passwordProblem(input.next, row.username);
  if (problem !== undefined) throw new LeaseholdError("INVALID_ARGUMENT", problem, { tier: "hub" });
  if (input.next === input.current) throw new LeaseholdError("INVALID_ARGUMENT", "the new password must differ from the current one", { tier: "hub" });
  const passwordHash = await hashPassword(input.next);
  await db.transaction(async (tx) => {
    await tx.update(adminUsers).set({ passwordHash, mustChangePassword: false, passwordChangedAt: new Date() }).where(eq(adminUsers.id, row.id));
    await invalidateUserSessions(tx as unknown as Database, row.id, input.sessionId);
    await seal(tx as unknown as Database, { kind: "admin", id: row.id }, "admin.password_change", row.id, null);
  });
}

/** True when `password` is the admin's current password (re-authentication). */
export async function checkAdminPassword(db: Database, adminId: string, password: string): Promise<boolean> {
  const [row] = await db.select().from(adminUsers).where(eq(adminUsers.id, adminId));
  return row !== undefined && row.disabledAt === null && (await verifyPassword(password, row.passwordHash));
}

const WRONG = "wrong user name or password";

/** How long a password check takes here (moving average), so refusing a made-up name without hashing can take as long. */
let passwordCheckMs = 50;

async function timedPasswordCheck(password: string, hash: string): Promise<boolean> {
  const began = performance.now();
  try {
    return await verifyPassword(password, hash);
  } finally {
    passwordCheckMs = 0.8 * passwordCheckMs + 0.2 * (performance.now() - began);
  }
}

/**
 * Password sign-in, throttled as ./throttle.ts describes (per address and
 * name, per existing admin, and a ceiling on made-up names per address that
 * never blocks an admin's correct password), a fresh session each time, and
 * a legacy or weaker hash upgraded to argon2id while the plaintext is at
 * hand. Unknown names cost the same time as known ones: hashing below the
 * spray ceiling, a wait past it (hashing there would hand a sprayer the
 * hub's CPU).
 */
export async function signIn(
  db: Database,
  input: { username: string; password: string; client: string },
  throttle: SignInThrottle = signInThrottle,
): Promise<{ token: string; binding: string; expiresAt: Date; admin: AdminRecord }> {
  const pairRefusal = await throttle.pairRefusal(db, input.username, input.client);
  if (pairRefusal !== undefined) throw pairRefusal;
  const [row] = ADMIN_NAME_PATTERN.test(input.username) ? await db.select().from(adminUsers).where(eq(adminUsers.username, input.username)) : [];
  const sprayRefusal = await throttle.sprayRefusal(db, input.client);
  if (row === undefined) {
    if (sprayRefusal !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, passwordCheckMs));
      throw sprayRefusal;
    }
    await hashPassword(input.password);
    await throttle.failUnknown(db, input.username, input.client);
    throw new LeaseholdError("UNAUTHENTICATED", WRONG, { tier: "hub" });
  }
  const userRefusal = await throttle.userRefusal(db, row.id, input.client);
  if (userRefusal !== undefined) throw userRefusal;
  const ok = await timedPasswordCheck(input.password, row.passwordHash);
  if (!ok || row.disabledAt !== null) {
    await throttle.failKnown(db, input.username, input.client, row.id);
    if (ok) throw new LeaseholdError("UNAUTHENTICATED", "this account is disabled", { tier: "hub" });
    // Past the spray ceiling a wrong password reads like a made-up name's refusal: the answer does not say the name exists.
    throw sprayRefusal ?? new LeaseholdError("UNAUTHENTICATED", WRONG, { tier: "hub" });
  }
  await throttle.succeed(db, input.username, input.client, row.id);
  if (needsRehash(row.passwordHash)) {
    await db.update(adminUsers).set({ passwordHash: await hashPassword(input.password) }).where(eq(adminUsers.id, row.id));
  }
  const session = await createAdminSession(db, row.id);
  return { token: session.token, binding: session.binding, expiresAt: session.expiresAt, admin: record(row) };
}
