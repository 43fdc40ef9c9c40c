import { scrypt, randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyMigrations, openPglite, type DatabaseHandle } from "../db";
import { adminSessions, adminUsers } from "../db/schema";
import { changeOwnPassword, createAdmin, signIn } from "./admins";
import { hashPassword, needsRehash, verifyPassword } from "./passwords";
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS, createAdminSession, sessionCookie, sessionIdOf, validateSessionToken } from "./sessions";
import { SignInThrottle } from "./throttle";

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openPglite(undefined);
  await applyMigrations(handle);
});
afterAll(async () => handle.close());

function legacyScrypt(password: string): Promise<string> {
  const salt = randomBytes(16);
  return new Promise((resolve, reject) =>
    scrypt(password, salt, 32, { N: 2 ** 14, r: 8, p: 1 }, (error, key) => (error ? reject(error) : resolve(`scrypt$${2 ** 14}$8$1$${salt.toString("base64url")}$${key.toString("base64url")}`))),
  );
}

describe("passwords (argon2id, legacy scrypt upgraded)", () => {
  it("hashes with argon2id and verifies only the right password", async () => {
    const stored = await hashPassword("correct horse battery");
    expect(stored.startsWith("$argon2id$v=19$m=19456,t=2,p=1$")).toBe(true);
    expect(await verifyPassword("correct horse battery", stored)).toBe(true);
    expect(await verifyPassword("correct horse batterY", stored)).toBe(false);
    expect(needsRehash(stored)).toBe(false);
  });

  it("signing in with a legacy scrypt hash works once and leaves an argon2id hash behind", async () => {
    const { admin } = await createAdmin(handle.db, "legacy-user");
    await handle.db.update(adminUsers).set({ passwordHash: await legacyScrypt("an old long password") }).where(eq(adminUsers.id, admin.id));
    expect(await verifyPassword("an old long password", (await handle.db.select().from(adminUsers).where(eq(adminUsers.id, admin.id)))[0]?.passwordHash ?? "")).toBe(true);
    await signIn(handle.db, { username: "legacy-user", password: "an old long password", client: "t" }, new SignInThrottle());
    const [row] = await handle.db.select().from(adminUsers).where(eq(adminUsers.id, admin.id));
    expect(row?.passwordHash.startsWith("$argon2id$")).toBe(true);
    expect(await verifyPassword("an old long password", String(row?.passwordHash))).toBe(true);
  });
});

describe("sessions (Lucia-style)", () => {
  it("stores only sha256 of a 160-bit token and issues a new session on every sign-in", async () => {
    const { admin, password } = await createAdmin(handle.db, "sess-user");
    const a = await signIn(handle.db, { username: "sess-user", password, client: "t" }, new SignInThrottle());
    const b = await signIn(handle.db, { username: "sess-user", password, client: "t" }, new SignInThrottle());
    expect(a.token).toMatch(/^[a-z2-7]{32}$/); // 20 bytes in base32
    expect(a.token).not.toBe(b.token);
    const rows = await handle.db.select().from(adminSessions).where(eq(adminSessions.userId, admin.id));
    expect(rows.map((r) => r.id).sort()).toEqual([sessionIdOf(a.token), sessionIdOf(b.token)].sort());
    expect(rows.some((r) => r.id === a.token)).toBe(false);
  });

  it("slides the idle expiry when used in its second half, but never past the absolute lifetime", async () => {
    const { admin } = await createAdmin(handle.db, "slide-user");
    const t0 = new Date("2026-12-01T00:00:00Z");
    const s = await createAdminSession(handle.db, admin.id, t0);
    const late = new Date(t0.getTime() + SESSION_IDLE_MS * 0.75);
    expect((await validateSessionToken(handle.db, s.token, s.binding, late))?.expiresAt.getTime()).toBe(late.getTime() + SESSION_IDLE_MS);
    expect(await validateSessionToken(handle.db, s.token, s.binding, new Date(late.getTime() + SESSION_IDLE_MS + 1))).toBeUndefined();
    const s2 = await createAdminSession(handle.db, admin.id, t0);
    let now = t0.getTime();
    while (now + SESSION_IDLE_MS * 0.6 < t0.getTime() + SESSION_ABSOLUTE_MS) {
      now += SESSION_IDLE_MS * 0.6;
      expect(await validateSessionToken(handle.db, s2.token, s2.binding, new Date(now))).toBeDefined();
    }
    expect(await validateSessionToken(handle.db, s2.token, s2.binding, new Date(t0.getTime() + SESSION_ABSOLUTE_MS))).toBeUndefined();
  });

  it("changing the password ends every other session of the user", async () => {
    const { admin, password } = await createAdmin(handle.db, "change-user");
    const keep = await createAdminSession(handle.db, admin.id);
    const other = await createAdminSession(handle.db, admin.id);
    await expect(changeOwnPassword(handle.db, { adminId: admin.id, sessionId: keep.sessionId, current: "wrong", next: "a brand new passphrase" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(changeOwnPassword(handle.db, { adminId: admin.id, sessionId: keep.sessionId, current: password, next: "short" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await changeOwnPassword(handle.db, { adminId: admin.id, sessionId: keep.sessionId, current: password, next: "a brand new passphrase" });
    expect(await validateSessionToken(handle.db, keep.token, keep.binding)).toMatchObject({ mustChangePassword: false });
    expect(await validateSessionToken(handle.db, other.token, other.binding)).toBeUndefined();
  });

  it("cookies are HttpOnly and SameSite=Lax, and Secure with the __Host- prefix over HTTPS", () => {
    const expires = new Date("2026-12-02T00:00:00Z");
    expect(sessionCookie("t", expires, false)).toBe("leasehold_session=t; HttpOnly; SameSite=Lax; Path=/; Expires=Wed, 02 Dec 2026 00:00:00 GMT");
    expect(sessionCookie("t", expires, true)).toBe("__Host-leasehold_session=t; HttpOnly; SameSite=Lax; Path=/; Expires=Wed, 02 Dec 2026 00:00:00 GMT; Secure");
  });
});

describe("sign-in", () => {
  it("a disabled admin cannot sign in even with the right password", async () => {
    const { admin, password } = await createAdmin(handle.db, "gone-user");
    await handle.db.update(adminUsers).set({ disabledAt: new Date() }).where(eq(adminUsers.id, admin.id));
    await expect(signIn(handle.db, { username: "gone-user", password, client: "t" }, new SignInThrottle())).rejects.toMatchObject({ code: "UNAUTHENTICATED", message: "this account is disabled" });
  });
});
