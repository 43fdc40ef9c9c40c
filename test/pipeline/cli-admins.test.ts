import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { createAdminSession, signIn, SignInThrottle, validateSessionToken, verifyPassword } from "../../server/admins";
import { main } from "../../server/cli/main";
import { adminSessions, adminUsers } from "../../server/db/schema";
import { describeEachDatabase } from "../support/databases";
import { allEntries, captureCli, uniqueName } from "./support";

describeEachDatabase("CLI: admin accounts with roles (create, list, role, disable, password)", (db) => {
  const cli = () => captureCli(db().handle);
  const passwordIn = (out: string[]) => out.find((line) => line.startsWith("password: "))?.slice(10).split(" ")[0] ?? "";

  it("creates an approver with a one-time password that must be changed, lists it, and seals the change", async () => {
    const name = uniqueName("appr");
    const c = cli();
    expect(await main(["admin", "create", "--name", name, "--role", "approver"], c.ctx)).toBe(0);
    const [row] = await db().handle.db.select().from(adminUsers).where(eq(adminUsers.username, name));
    expect(row?.role).toBe("approver");
    expect(row?.mustChangePassword).toBe(true);
    expect(row?.passwordHash.startsWith("$argon2id$")).toBe(true);
    expect(await verifyPassword(passwordIn(c.out), String(row?.passwordHash))).toBe(true);
    const l = cli();
    expect(await main(["admin", "list"], l.ctx)).toBe(0);
    expect(l.out.find((line) => line.startsWith(`${name} `))).toMatch(/approver {2}active, must change password/);
    expect((await allEntries(db().handle.db)).filter((e) => e.type === "admin/1" && (e.data as { operation: string }).operation === "admin.create").length).toBeGreaterThan(0);
  });

  it("refuses an unknown role with a usage error naming the roles", async () => {
    const c = cli();
    expect(await main(["admin", "create", "--name", uniqueName("x"), "--role", "root"], c.ctx)).toBe(2);
    expect(c.err.join("\n")).toContain("--role must be one of owner, approver, auditor");
  });

  it("changes a role and disables an admin, ending every session of theirs", async () => {
    const name = uniqueName("aud");
    expect(await main(["admin", "create", "--name", name, "--role", "auditor"], cli().ctx)).toBe(0);
    const [row] = await db().handle.db.select().from(adminUsers).where(eq(adminUsers.username, name));
    const session = await createAdminSession(db().handle.db, String(row?.id));
    expect(await validateSessionToken(db().handle.db, session.token, session.binding)).toBeDefined();
    expect(await main(["admin", "role", name, "--role", "approver"], cli().ctx)).toBe(0);
    expect((await validateSessionToken(db().handle.db, session.token, session.binding))?.role).toBe("approver");
    expect(await main(["admin", "disable", name], cli().ctx)).toBe(0);
    expect(await validateSessionToken(db().handle.db, session.token, session.binding)).toBeUndefined();
    expect(await db().handle.db.select().from(adminSessions).where(eq(adminSessions.userId, String(row?.id)))).toEqual([]);
  });

  it("refuses to disable or demote the last active owner", async () => {
    const owners = (await db().handle.db.select().from(adminUsers)).filter((a) => a.role === "owner" && a.disabledAt === null);
    for (const o of owners) await db().handle.db.update(adminUsers).set({ disabledAt: new Date() }).where(eq(adminUsers.id, o.id));
    try {
      const name = uniqueName("own");
      expect(await main(["admin", "create", "--name", name], cli().ctx)).toBe(0);
      const d = cli();
      expect(await main(["admin", "disable", name], d.ctx)).toBe(1);
      expect(d.err.join("\n")).toContain("last active owner");
      expect(await main(["admin", "role", name, "--role", "auditor"], cli().ctx)).toBe(1);
    } finally {
      for (const o of owners) await db().handle.db.update(adminUsers).set({ disabledAt: null }).where(eq(adminUsers.id, o.id));
    }
  });

  it("resets a password: the old one stops working, the new one signs in and must be changed", async () => {
    const name = uniqueName("pw");
    const c = cli();
    expect(await main(["admin", "create", "--name", name], c.ctx)).toBe(0);
    const first = passwordIn(c.out);
    const r = cli();
    expect(await main(["admin", "password", name], r.ctx)).toBe(0);
    const second = passwordIn(r.out);
    expect(second).not.toBe(first);
    const throttle = new SignInThrottle();
    await expect(signIn(db().handle.db, { username: name, password: first, client: "t" }, throttle)).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    const ok = await signIn(db().handle.db, { username: name, password: second, client: "t" }, throttle);
    expect(ok.admin.mustChangePassword).toBe(true);
  });
});
