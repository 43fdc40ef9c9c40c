import { expect, it } from "vitest";
import { submitAction } from "../../server/actions";
import { verifyPassword, findAdminByName } from "../../server/admins";
import { main } from "../../server/cli/main";
import { type LeaseholdError } from "../../server/errors";
import { adminUsers } from "../../server/db/schema";
import { eq } from "drizzle-orm";
import { describeEachDatabase } from "../support/databases";
import { allEntries, insertHost, insertToken, testDeps, uniqueName, captureCli } from "./support";

describeEachDatabase("CLI: admin, approvals, grant (acting as a named admin, sealed)", (db) => {
  const cli = () => captureCli(db().handle);

  it("creates an admin, grants, approves and denies", async () => {
    const name = uniqueName("ops");
    const a = cli();
    expect(await main(["admin", "create", "--name", name], a.ctx)).toBe(0);
    const password = a.out.find((line) => line.startsWith("password: "))?.slice(10) ?? "";
    const [row] = await db().handle.db.select().from(adminUsers).where(eq(adminUsers.username, name));
    expect(await verifyPassword(password, String(row?.passwordHash))).toBe(true);
    expect(row?.passwordHash).not.toContain(password);
    expect((await findAdminByName(db().handle.db, name))?.username).toBe(name);

    const host = await insertHost(db().handle.db);
    const g = cli();
    expect(await main(["grant", "create", "--tool", "run_command", "--host", host.name, "--max-risk", "critical", "--uses", "2", "--expires", "1h", "--as", name], g.ctx)).toBe(1);
    expect(g.err.join("\n")).toContain("POLICY_REFUSED");
    expect(await main(["grant", "create", "--tool", "run_command", "--host", host.name, "--max-risk", "medium", "--uses", "2", "--expires", "1h", "--pattern", "mkdir [a-z]+", "--as", name], g.ctx)).toBe(0);
    expect(await main(["grant", "list"], g.ctx)).toBe(0);
    expect(g.out.join("\n")).toContain(`run_command on ${host.name}`);
    const grantId = g.out[0]?.split(" ")[1] ?? "";
    expect(await main(["grant", "revoke", grantId, "--as", name], g.ctx)).toBe(0);
    expect(await main(["grant", "revoke", grantId, "--as", "nobody-by-that-name"], g.ctx)).toBe(1);

    const deps = testDeps(db().handle);
    const caller = await insertToken(db().handle.db);
    const held = async (command: string) => {
      try {
        await submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command }, channel: "mcp" }, { waitMs: 0 });
      } catch (error) {
        return String((error as LeaseholdError).details?.["approval_id"]);
      }
      throw new Error("expected a hold");
    };
    const first = await held("touch one");
    const second = await held("touch two");
    const p = cli();
    expect(await main(["approvals", "list"], p.ctx)).toBe(0);
    expect(p.out.join("\n")).toContain(first);
    expect(await main(["approvals", "deny", second, "--as", name], p.ctx)).toBe(2); // --reason is required
    expect(await main(["approvals", "approve", first, "--reason", "ok", "--as", name], p.ctx)).toBe(0);
    expect(await main(["approvals", "deny", second, "--reason", "no", "--as", name], p.ctx)).toBe(0);
    expect(p.out.join("\n")).toMatch(/approved by/);
    // A grant over the whole action: its env, stdin digest and cwd are listed and validated.
    const w = cli();
    const digest = "5f".repeat(32);
    expect(await main(["grant", "create", "--tool", "run_command", "--host", host.name, "--max-risk", "medium", "--uses", "1", "--expires", "1h", "--pattern", "tar -xf a\\.tar", "--env", "LANG=C.UTF-8", "--env", "TZ=UTC", "--stdin-sha256", digest, "--cwd", "./rel//x/", "--as", name], w.ctx)).toBe(0);
    expect(w.out[0]).toContain(`env LANG="C.UTF-8" TZ="UTC"  stdin sha256:${digest}  cwd "rel/x"`);
    expect(await main(["grant", "list"], w.ctx)).toBe(0);
    expect(w.out.join("\n")).toContain(`pattern "tar -xf a\\\\.tar"  env LANG="C.UTF-8" TZ="UTC"  stdin sha256:${digest}  cwd "rel/x"`);
    expect(await main(["grant", "create", "--tool", "run_command", "--host", host.name, "--max-risk", "low", "--uses", "1", "--expires", "1h", "--env", "NOEQUALS", "--as", name], w.ctx)).toBe(2);
    expect(await main(["grant", "create", "--tool", "run_command", "--host", host.name, "--max-risk", "low", "--uses", "1", "--expires", "1h", "--env", "A=1", "--env", "A=2", "--as", name], w.ctx)).toBe(2);
    expect(await main(["grant", "create", "--tool", "run_command", "--host", host.name, "--max-risk", "low", "--uses", "1", "--expires", "1h", "--stdin-sha256", "xyz", "--as", name], w.ctx)).toBe(1);
    expect(await main(["grant", "create", "--tool", "run_command", "--host", host.name, "--max-risk", "low", "--uses", "1", "--expires", "1h", "--cwd", "../up", "--as", name], w.ctx)).toBe(1);
    expect(w.err.join("\n")).toContain("INVALID_ARGUMENT");

    // Revoking the requesting token through the CLI says what it ended.
    const third = await held("touch three");
    const t = cli();
    expect(await main(["token", "revoke", caller.tokenId], t.ctx)).toBe(0);
    expect(t.out.join("\n")).toContain("its next request is refused; 1 held approval(s) denied, 0 queued job(s) cancelled");
    const s = cli();
    expect(await main(["approvals", "show", third], s.ctx)).toBe(0);
    expect(s.out[0]).toContain("denied (token revoked)");

    const types = (await allEntries(db().handle.db)).map((e) => (e.type === "grant/1" ? `grant:${e.data.event}` : e.type === "approval/1" ? `approval:${e.data.outcome}` : e.type === "admin/1" ? e.data.operation : ""));
    for (const expected of ["admin.create", "grant:created", "grant:revoked", "approval:approved", "approval:denied"]) expect(types).toContain(expected);
  });
});
