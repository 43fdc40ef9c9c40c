/**
 * A grant covers the whole prepared action — command pattern AND
 * exactly the env, stdin and cwd it lists (none unless listed). Anything else
 * is held for a person, and the grant keeps its use.
 */
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { submitAction } from "../../server/actions";
import { grants, jobs } from "../../server/db/schema";
import { createGrant } from "../../server/policy/grants";
import { describeEachDatabase } from "../support/databases";
import { codeOf, rejectionOf } from "../support/refusals";
import { allEntries, insertAdmin, insertHost, insertToken, testDeps, PASSKEY_OFF } from "./support";

const HOUR = 3600_000;
const TAR_SHELL = "--checkpoint=1 --checkpoint-action=exec=sh -c 'rm notes.txt'";

describeEachDatabase("grants over the whole prepared action", (db) => {
  async function setup(grant: { env?: Record<string, string>; stdinSha256?: string; cwd?: string } = {}) {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const admin = await insertAdmin(d);
    const row = await createGrant(d, admin, { tool: "run_command", host: host.name, maxRisk: "high", uses: 1, expiresAt: new Date(Date.now() + HOUR), pattern: "tar -xf a\\.tar", ...grant }, PASSKEY_OFF);
    const caller = await insertToken(d);
    const usesLeft = async () => (await d.select().from(grants).where(eq(grants.id, row.id)))[0]?.usesRemaining;
    const jobCount = async () => (await d.select().from(jobs)).length;
    const consumed = async () => (await allEntries(d)).filter((e) => e.type === "grant/1" && e.data.grant_id === row.id && e.data.event === "consumed").length;
    const run = (args: Record<string, unknown>) => submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "tar -xf a.tar", ...args }, channel: "mcp" }, { waitMs: 0 });
    return { row, usesLeft, jobCount, consumed, run };
  }

  it("hostile: a grant for exactly `tar -xf a.tar` does not cover the same command with TAR_OPTIONS=--checkpoint-action=exec=… (held, use kept, no job)", async () => {
    const t = await setup();
    const jobsBefore = await t.jobCount();
    const held = await rejectionOf(t.run({ env: { TAR_OPTIONS: TAR_SHELL } }));
    expect(held.code).toBe("APPROVAL_PENDING");
    expect(await t.usesLeft()).toBe(1);
    expect(await t.consumed()).toBe(0);
    expect(await t.jobCount()).toBe(jobsBefore);
    // The exact action the grant names is granted, once.
    const ok = await t.run({});
    expect(ok.decision).toBe("grant");
    expect(ok.grant_id).toBe(t.row.id);
    expect(await t.usesLeft()).toBe(0);
    expect(await t.consumed()).toBe(1);
  });

  it("hostile: stdin and cwd the grant does not list are held; a listed env value, stdin digest and cwd match exactly", async () => {
    const stdin = "a.tar\n";
    const digest = createHash("sha256").update(stdin, "utf8").digest("hex");
    const none = await setup();
    expect(await codeOf(none.run({ stdin: "x" }))).toBe("APPROVAL_PENDING");
    expect(await codeOf(none.run({ cwd: "sub" }))).toBe("APPROVAL_PENDING");
    expect(await none.usesLeft()).toBe(1);

    const listed = await setup({ env: { LANG: "C.UTF-8" }, stdinSha256: digest, cwd: "sub/dir" });
    expect(await codeOf(listed.run({ env: { LANG: "C.UTF-8" }, stdin, cwd: "sub" }))).toBe("APPROVAL_PENDING"); // other cwd
    expect(await codeOf(listed.run({ env: { LANG: "C.UTF-8" }, stdin: "b.tar\n", cwd: "sub/dir" }))).toBe("APPROVAL_PENDING"); // other stdin
    expect(await codeOf(listed.run({ env: { LANG: "de_DE.UTF-8" }, stdin, cwd: "sub/dir" }))).toBe("APPROVAL_PENDING"); // other value
    expect(await codeOf(listed.run({ env: { LANG: "C.UTF-8", TAR_OPTIONS: "-v" }, stdin, cwd: "sub/dir" }))).toBe("APPROVAL_PENDING"); // extra key
    expect(await codeOf(listed.run({ stdin, cwd: "sub/dir" }))).toBe("APPROVAL_PENDING"); // listed key missing
    expect(await listed.usesLeft()).toBe(1);
    expect((await listed.run({ env: { LANG: "C.UTF-8" }, stdin, cwd: "./sub//dir/" })).decision).toBe("grant");
    expect(await listed.usesLeft()).toBe(0);
  });

  it("grant creation validates env names, the stdin digest and the cwd", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    const admin = await insertAdmin(d);
    const base = { tool: "run_command", host: host.name, maxRisk: "low", uses: 1, expiresAt: new Date(Date.now() + HOUR) };
    expect(await codeOf(createGrant(d, admin, { ...base, env: { "BAD NAME": "x" } }))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(createGrant(d, admin, { ...base, stdinSha256: "abc" }))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(createGrant(d, admin, { ...base, cwd: "../etc" }))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(createGrant(d, admin, { ...base, cwd: "/etc" }))).toBe("INVALID_ARGUMENT");
    const ok = await createGrant(d, admin, { ...base, env: { LANG: "C" }, stdinSha256: "A".repeat(64), cwd: "a/./b/" });
    expect(ok.env).toEqual({ LANG: "C" });
    expect(ok.stdinSha256).toBe("a".repeat(64));
    expect(ok.cwd).toBe("a/b");
  });
});
