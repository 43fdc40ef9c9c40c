import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import { describeEachDatabase } from "../../../test/support/databases";
import { ledgerEntries } from "../../db/schema";
import { decodeEntry } from "../../ledger/entry";
import { listGrants } from "../../policy/grants";
import { adminCaller, refusal } from "./test-callers";

const BASE = { tool: "run_command", host: "local", maxRisk: "medium", uses: 3, expires: "2h", pattern: null, env: [], stdinSha256: null, cwd: null };

async function grantEvents(handle: { db: Parameters<typeof listGrants>[0] }, grantId: string): Promise<string[]> {
  const rows = await handle.db.select({ body: ledgerEntries.body }).from(ledgerEntries);
  return rows.flatMap((r) => {
    const d = decodeEntry(r.body);
    return d.ok && d.entry.type === "grant/1" && d.entry.data.grant_id === grantId ? [d.entry.data.event] : [];
  });
}

describeEachDatabase("grants router", (database) => {
  it("an approver creates a grant with its whole scope (pattern, exact env, stdin sha256, cwd); it is listed and sealed as grant/1 created", async () => {
    const { handle } = database();
    const { caller } = await adminCaller(handle, "approver");
    const stdin = createHash("sha256").update("yes\n").digest("hex");
    const made = await caller.grants.create({ ...BASE, pattern: "npm test( --silent)?", env: [{ name: "NODE_ENV", value: "test" }, { name: "CI", value: "1" }], stdinSha256: stdin, cwd: "app/./web" });
    expect(made).toMatchObject({ tool: "run_command", host: "local", maxRisk: "medium", usesRemaining: 3, pattern: "npm test( --silent)?", env: [["CI", "1"], ["NODE_ENV", "test"]], stdinSha256: stdin, cwd: "app/web" });
    expect(Date.parse(made.expiresAt) - Date.now()).toBeGreaterThan(3600_000);
    const listed = await caller.grants.list();
    expect(listed.grants.find((g) => g.id === made.id)).toEqual(made);
    expect(listed.levels).toEqual(["read_only", "low", "medium", "high"]);
    expect(await grantEvents(handle, made.id)).toEqual(["created"]);
  });

  it("critical is never grantable (POLICY_REFUSED); a name given twice, a bad stdin digest and a bad duration are INVALID_ARGUMENT; nothing is stored", async () => {
    const { handle } = database();
    const { caller } = await adminCaller(handle, "owner");
    const before = (await listGrants(handle.db)).length;
    expect((await refusal(caller.grants.create({ ...BASE, maxRisk: "critical" }))).code).toBe("POLICY_REFUSED");
    expect((await refusal(caller.grants.create({ ...BASE, env: [{ name: "A", value: "1" }, { name: "A", value: "2" }] }))).code).toBe("INVALID_ARGUMENT");
    expect((await refusal(caller.grants.create({ ...BASE, stdinSha256: "abc" }))).code).toBe("INVALID_ARGUMENT");
    expect((await refusal(caller.grants.create({ ...BASE, expires: "soon" }))).code).toBe("INVALID_ARGUMENT");
    expect((await listGrants(handle.db)).length).toBe(before);
  });

  it("revoke takes a grant out of the list, sealed as grant/1 revoked; revoking it again is NOT_FOUND; an auditor may not", async () => {
    const { handle } = database();
    const { caller } = await adminCaller(handle, "owner");
    const made = await caller.grants.create(BASE);
    const auditor = await adminCaller(handle, "auditor");
    expect((await refusal(auditor.caller.grants.revoke({ id: made.id }))).code).toBe("FORBIDDEN");
    expect(await caller.grants.revoke({ id: made.id })).toEqual({ id: made.id });
    expect((await caller.grants.list()).grants.some((g) => g.id === made.id)).toBe(false);
    expect(await grantEvents(handle, made.id)).toEqual(["created", "revoked"]);
    expect((await refusal(caller.grants.revoke({ id: made.id }))).code).toBe("NOT_FOUND");
  });
});
