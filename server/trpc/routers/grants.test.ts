import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { insertHost, insertToken, testDeps } from "../../../test/pipeline/support";
import { describeEachDatabase } from "../../../test/support/databases";
import { createActionPipeline, installActionPipeline, submitAction } from "../../actions";
import { createAdminSession, type AdminRole } from "../../admins";
import { canonicalize } from "../../canonical";
import type { DatabaseHandle } from "../../db";
import { adminUsers, approvals, grants, ledgerEntries } from "../../db/schema";
import type { LeaseholdError } from "../../errors";
import type { HubRuntime } from "../../hub/runtime";
import { decodeEntry } from "../../ledger/entry";
import { assertionDigest } from "../../passkeys/challenge";
import { SoftAuthenticator } from "../../passkeys/test-authenticator";
import { listGrants } from "../../policy/grants";
import { appRouter } from "../root";
import { adminCaller, refusal, sessionHeaders } from "./test-callers";

const ORIGIN = "http://localhost:8700";

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

/** A hub at http://localhost:8700 (passkeys on) with the given threshold, and an admin of `role` signed in from that origin. */
async function passkeyHub(handle: DatabaseHandle, role: AdminRole, threshold: "high" | "critical" | "off" = "high") {
  const runtime = { database: { handle }, config: { publicUrl: ORIGIN, host: "127.0.0.1", port: 8700, passkeyApprovalRisk: threshold, dataDir: "/nonexistent" } } as unknown as HubRuntime;
  installActionPipeline(runtime, createActionPipeline(testDeps(handle)));
  const [row] = await handle.db.insert(adminUsers).values({ username: `grant-pk-${Math.random().toString(36).slice(2, 10)}`, passwordHash: "unused", role }).returning();
  const session = await createAdminSession(handle.db, row!.id);
  const caller = appRouter.createCaller({ runtime, headers: sessionHeaders(session, runtime.config, { origin: ORIGIN }) });
  return { admin: { id: row!.id, username: row!.username }, caller, runtime };
}

/** Registers a software passkey for the caller's admin (its first: no confirmation needed). */
async function withPasskey(caller: Awaited<ReturnType<typeof passkeyHub>>["caller"]): Promise<SoftAuthenticator> {
  const authenticator = new SoftAuthenticator();
  const { options } = await caller.passkeys.registrationOptions();
  await caller.passkeys.register({ name: "key", response: { ...(await authenticator.register(options, ORIGIN)), clientExtensionResults: {} } });
  return authenticator;
}

const HIGH = { ...BASE, maxRisk: "high", pattern: "rm -rf \\./build" };

async function grantCount(handle: DatabaseHandle): Promise<number> {
  return (await handle.db.select({ id: grants.id }).from(grants)).length;
}

describeEachDatabase("grants router: a grant at or above the passkey threshold is signed by a person's passkey", (database) => {
  it("hostile: an approver's session alone cannot create a high grant — FORBIDDEN 'needs a passkey signature', nothing stored; medium still works", async () => {
    const { handle } = database();
    const { caller } = await passkeyHub(handle, "approver");
    const before = await grantCount(handle);
    const bare = await refusal(caller.grants.create(HIGH));
    expect(bare.code).toBe("FORBIDDEN");
    expect(bare.message).toContain("needs a passkey signature over its scope");
    expect(bare.message).toContain("http://localhost:8700/grants");
    expect(await grantCount(handle)).toBe(before);
    expect((await caller.grants.create(BASE)).maxRisk).toBe("medium");
    expect((await caller.grants.list()).passkeyLevels).toEqual(["high"]);
  });

  it("hostile: creating any grant needs a recent re-authentication", async () => {
    const { handle } = database();
    const { caller } = await adminCaller(handle, "owner", { stale: true });
    const stale = await refusal(caller.grants.create(BASE));
    expect(stale).toMatchObject({ code: "FORBIDDEN", hint: "reauthenticate" });
    expect((await refusal(caller.console.grants.create({ tool: "run_command", host: "local", maxRisk: "low", uses: 1, expiresAt: new Date(Date.now() + 60_000).toISOString() }))).hint).toBe("reauthenticate");
  });

  it("signed: passkeyOptions fixes the exact expiry and a challenge over sha256(JCS(scope)); create with that scope and the assertion stores it and seals scope_digest + assertion_digest in grant/1 created", async () => {
    const { handle } = database();
    const { caller } = await passkeyHub(handle, "approver");
    const authenticator = await withPasskey(caller);
    const issued = await caller.grants.passkeyOptions(HIGH);
    const scope = { tool: "run_command", host: "local", max_risk: "high", pattern: "rm -rf \\./build", env: {}, stdin_sha256: null, cwd: ".", uses: 3, expires_at: issued.expiresAt };
    expect(issued.scopeDigest).toBe(`sha256:${createHash("sha256").update(canonicalize(scope)).digest("hex")}`);
    const assertion = { ...(await authenticator.assert(issued.options, ORIGIN)), clientExtensionResults: {} };
    const { expires: _ignored, ...exact } = HIGH;
    const made = await caller.grants.create({ ...exact, expiresAt: issued.expiresAt, assertion });
    expect(made).toMatchObject({ maxRisk: "high", expiresAt: issued.expiresAt, passkeySigned: true });
    const [row] = await handle.db.select().from(grants).where(eq(grants.id, made.id));
    expect(row?.assertion?.["credential_id"]).toBe(authenticator.credentialId);
    const created = (await grantEntries(handle, made.id)).find((d) => d.event === "created");
    expect(created?.scope_digest).toBe(issued.scopeDigest);
    expect(created?.assertion_digest).toBe(await assertionDigest(row!.assertion as never));
    // The challenge is derived from that digest and the stored nonce.
    const clientData = JSON.parse(Buffer.from(assertion.response.clientDataJSON, "base64url").toString("utf8")) as { challenge: string };
    expect(clientData.challenge).toBe(createHash("sha256").update(`leasehold.grant/1\n${issued.scopeDigest}\n${row!.assertion!["nonce"]}`).digest("base64url"));
  });

  it("hostile: an assertion for one scope is refused for a wider one, a used one is refused again, another admin's passkey and an approval challenge are refused; nothing is created", async () => {
    const { handle } = database();
    const { caller } = await passkeyHub(handle, "approver");
    const authenticator = await withPasskey(caller);
    const { expires: _ignored, ...exact } = HIGH;
    const issued = await caller.grants.passkeyOptions(HIGH);
    const assertion = { ...(await authenticator.assert(issued.options, ORIGIN)), clientExtensionResults: {} };
    const before = await grantCount(handle);
    for (const wider of [{ pattern: "rm -rf .*" }, { uses: 4 }, { expiresAt: new Date(Date.parse(issued.expiresAt) + 1).toISOString() }, { env: [{ name: "A", value: "1" }] }, { cwd: "sub" }]) {
      const error = await refusal(caller.grants.create({ ...exact, expiresAt: issued.expiresAt, ...wider, assertion }));
      expect(error.code, JSON.stringify(wider)).toBe("FORBIDDEN");
      expect(error.message).toContain("another grant scope");
    }
    expect(await grantCount(handle)).toBe(before);
    await caller.grants.create({ ...exact, expiresAt: issued.expiresAt, assertion });
    const replay = await refusal(caller.grants.create({ ...exact, expiresAt: issued.expiresAt, assertion }));
    expect(replay.message).toContain("unknown or was already used");
    expect(await grantCount(handle)).toBe(before + 1);

    // Another approver's challenge and passkey: refused for this admin.
    const other = await passkeyHub(handle, "approver");
    const otherKey = await withPasskey(other.caller);
    const theirs = await other.caller.grants.passkeyOptions(HIGH);
    const foreign = { ...(await otherKey.assert(theirs.options, ORIGIN)), clientExtensionResults: {} };
    expect((await refusal(caller.grants.create({ ...exact, expiresAt: theirs.expiresAt, assertion: foreign }))).message).toContain("issued to another admin");
    // My challenge, signed by their passkey (as if their authenticator answered mine).
    const mine = await caller.grants.passkeyOptions(HIGH);
    const wrongKey = { ...(await otherKey.assert(mine.options, ORIGIN)), clientExtensionResults: {} };
    expect((await refusal(caller.grants.create({ ...exact, expiresAt: mine.expiresAt, assertion: wrongKey }))).message).toContain("belongs to another account");
    // An approval's challenge is not a grant's.
    const { approvalId } = await heldActionOn(handle, "rm -rf ./approval-not-grant");
    const forApproval = { ...(await authenticator.assert((await caller.passkeys.approvalOptions({ approvalId })).options, ORIGIN)), clientExtensionResults: {} };
    expect((await refusal(caller.grants.create({ ...exact, expiresAt: issued.expiresAt, assertion: forApproval }))).message).toContain("issued for approve, not grant");
    expect(await grantCount(handle)).toBe(before + 1);
  });

  it("threshold: `critical` and `off` let a high grant through without a passkey; console.grants and approve-and-allow-similar refuse a high grant without its signature, approving nothing", async () => {
    const { handle } = database();
    for (const threshold of ["critical", "off"] as const) {
      const { caller } = await passkeyHub(handle, "approver", threshold);
      expect((await caller.grants.create(HIGH)).passkeySigned).toBe(false);
    }
    const { caller } = await passkeyHub(handle, "owner");
    const before = await grantCount(handle);
    const consoleRefusal = await refusal(caller.console.grants.create({ tool: "run_command", host: "local", maxRisk: "high", uses: 1, expiresAt: new Date(Date.now() + 60_000).toISOString() }));
    expect(consoleRefusal.code).toBe("FORBIDDEN");
    expect(consoleRefusal.message).toContain("needs a passkey signature");
    const held = await heldActionOn(handle, "rm -rf ./similar");
    const similar = await refusal(
      caller.approvals.approveAndGrant({ approvalId: held.approvalId, actionHash: held.actionHash, grant: { pattern: null, uses: 1, expiresAt: new Date(Date.now() + 60_000).toISOString(), maxRisk: "high", cwd: "." } }),
    );
    expect(similar.code).toBe("FORBIDDEN");
    expect(similar.message).toContain("needs a passkey signature over its scope");
    expect(similar.message).toContain("your passkey signs the grant in the same step");
    const [approval] = await handle.db.select().from(approvals).where(eq(approvals.id, held.approvalId));
    expect(approval?.state).toBe("pending");
    expect(await grantCount(handle)).toBe(before);
  });
});

describeEachDatabase("approve and allow similar at the passkey threshold: the grant is signed with the Grants page's ceremony", (database) => {
  const edits = (expiresAt: string) => ({ pattern: String.raw`rm -rf \./similar-signed`, uses: 2, expiresAt, maxRisk: "high", cwd: "." });

  it("the approval's assertion signs the action, the grant's assertion signs the scope built on the hub (the action's raw env included); the grant is listed as passkey-signed and sealed with its scope digest", async () => {
    const { handle } = database();
    const { caller } = await passkeyHub(handle, "approver");
    const authenticator = await withPasskey(caller);
    const held = await heldActionOn(handle, "rm -rf ./similar-signed", { LANG: "C.UTF-8" });
    const issued = await caller.approvals.grantPasskeyOptions({ approvalId: held.approvalId, actionHash: held.actionHash, grant: edits(new Date(Date.now() + 600_000).toISOString()) });
    // The scope signed is the one a grant with the action's own tool, host and exact env has: what grants.passkeyOptions would sign for it.
    const scope = { tool: "run_command", host: held.host, max_risk: "high", pattern: String.raw`rm -rf \./similar-signed`, env: { LANG: "C.UTF-8" }, stdin_sha256: null, cwd: ".", uses: 2, expires_at: issued.expiresAt };
    expect(issued.scopeDigest).toBe(`sha256:${createHash("sha256").update(canonicalize(scope)).digest("hex")}`);
    // As the browser does: the approval first, then the grant (the authenticator's counter rises in that order).
    const assertion = { ...(await authenticator.assert((await caller.passkeys.approvalOptions({ approvalId: held.approvalId })).options, ORIGIN)), clientExtensionResults: {} };
    const grantAssertion = { ...(await authenticator.assert(issued.options, ORIGIN)), clientExtensionResults: {} };
    const done = await caller.approvals.approveAndGrant({ approvalId: held.approvalId, actionHash: held.actionHash, grant: edits(issued.expiresAt), assertion, grantAssertion });
    expect(done.approval.state).toBe("approved");
    expect(done.grant).toMatchObject({ usesRemaining: 2, expiresAt: issued.expiresAt, passkeySigned: true });
    const listed = (await caller.grants.list()).grants.find((g) => g.id === done.grant.id);
    expect(listed).toMatchObject({ passkeySigned: true, maxRisk: "high", env: [["LANG", "C.UTF-8"]] });
    const created = (await grantEntries(handle, done.grant.id)).find((d) => d.event === "created");
    expect(created?.scope_digest).toBe(issued.scopeDigest);
  });

  it("hostile: a grant assertion for another scope (more uses, a later expiry, a wider Grants-page scope) or a used one is refused FORBIDDEN — and the action stays pending, no grant is created", async () => {
    const { handle } = database();
    const { caller } = await passkeyHub(handle, "approver");
    const authenticator = await withPasskey(caller);
    const held = await heldActionOn(handle, "rm -rf ./similar-signed");
    const issued = await caller.approvals.grantPasskeyOptions({ approvalId: held.approvalId, actionHash: held.actionHash, grant: edits(new Date(Date.now() + 600_000).toISOString()) });
    const sign = async (options: unknown) => ({ ...(await authenticator.assert(options as never, ORIGIN)), clientExtensionResults: {} });
    const before = await grantCount(handle);
    const elsewhere = await caller.grants.passkeyOptions({ ...HIGH, host: held.host, pattern: "rm -rf .*", uses: 2 });
    for (const [name, grant, options, said] of [
      ["more uses", { ...edits(issued.expiresAt), uses: 3 }, issued.options, "another grant scope"],
      ["a later expiry", edits(new Date(Date.parse(issued.expiresAt) + 1000).toISOString()), issued.options, "another grant scope"],
      ["a Grants-page signature over a wider pattern", edits(elsewhere.expiresAt), elsewhere.options, "another grant scope"],
    ] as const) {
      // Signed in the browser's order: the approval, then the grant.
      const assertion = await sign((await caller.passkeys.approvalOptions({ approvalId: held.approvalId })).options);
      const error = await refusal(caller.approvals.approveAndGrant({ approvalId: held.approvalId, actionHash: held.actionHash, grant, assertion, grantAssertion: await sign(options) }));
      expect(error.code, name).toBe("FORBIDDEN");
      expect(error.message, name).toContain(said);
      const [row] = await handle.db.select().from(approvals).where(eq(approvals.id, held.approvalId));
      expect(row?.state, name).toBe("pending");
      expect(await grantCount(handle), name).toBe(before);
    }
    // The exact scope signed goes through once; the same grant signature for another held action is refused, and that action stays pending.
    const approved = await caller.approvals.approveAndGrant({
      approvalId: held.approvalId,
      actionHash: held.actionHash,
      grant: edits(issued.expiresAt),
      assertion: await sign((await caller.passkeys.approvalOptions({ approvalId: held.approvalId })).options),
      grantAssertion: await sign(issued.options),
    });
    expect(approved.grant.passkeySigned).toBe(true);
    const again = await heldActionOn(handle, "rm -rf ./similar-signed");
    const replayed = await sign(issued.options);
    const replay = await refusal(
      caller.approvals.approveAndGrant({ approvalId: again.approvalId, actionHash: again.actionHash, grant: edits(issued.expiresAt), assertion: await sign((await caller.passkeys.approvalOptions({ approvalId: again.approvalId })).options), grantAssertion: replayed }),
    );
    expect(replay.code).toBe("FORBIDDEN");
    expect((await handle.db.select().from(approvals).where(eq(approvals.id, again.approvalId)))[0]?.state).toBe("pending");
    expect(await grantCount(handle)).toBe(before + 1);
  });

  it("hostile: a pattern holding a raw U+200B is refused INVALID_ARGUMENT naming the code point, by grants.create, grants.passkeyOptions and approvals.grantPasskeyOptions alike; nothing is created", async () => {
    const { handle } = database();
    const { caller } = await passkeyHub(handle, "approver");
    const before = await grantCount(handle);
    const held = await heldActionOn(handle, "rm -rf ./zw");
    for (const call of [
      () => caller.grants.create({ ...BASE, pattern: "r\u200bm -rf x" }),
      () => caller.grants.passkeyOptions({ ...HIGH, pattern: "r\u200bm -rf x" }),
      () => caller.approvals.grantPasskeyOptions({ approvalId: held.approvalId, actionHash: held.actionHash, grant: { ...edits(new Date(Date.now() + 600_000).toISOString()), pattern: "r\u200bm -rf x" } }),
    ]) {
      const error = await refusal(call());
      expect(error.code).toBe("INVALID_ARGUMENT");
      expect(error.message).toContain("U+200B at 2");
      expect(error.message).toContain(String.raw`r\u200bm -rf x`);
    }
    // Written as an escape it is accepted.
    expect((await caller.grants.create({ ...BASE, pattern: String.raw`r\u200bm -rf x` })).pattern).toBe(String.raw`r\u200bm -rf x`);
    expect(await grantCount(handle)).toBe(before + 1);
  });
});

async function grantEntries(handle: DatabaseHandle, grantId: string): Promise<Array<Record<string, unknown>>> {
  const rows = await handle.db.select({ body: ledgerEntries.body }).from(ledgerEntries);
  return rows.flatMap((r) => {
    const d = decodeEntry(r.body);
    return d.ok && d.entry.type === "grant/1" && d.entry.data.grant_id === grantId ? [d.entry.data as Record<string, unknown>] : [];
  });
}

async function heldActionOn(handle: DatabaseHandle, command: string, env?: Record<string, string>): Promise<{ approvalId: string; actionHash: string; host: string }> {
  const host = await insertHost(handle.db);
  const token = await insertToken(handle.db, { createdBy: "someone-else" });
  let approvalId = "";
  try {
    await submitAction(testDeps(handle), token, { operation: "run_command", arguments: { host: host.name, command, ...(env === undefined ? {} : { env }) }, channel: "mcp" }, { waitMs: 0 });
  } catch (error) {
    approvalId = String((error as LeaseholdError).details?.["approval_id"]);
  }
  const [row] = await handle.db.select({ actionHash: approvals.actionHash }).from(approvals).where(eq(approvals.id, approvalId));
  return { approvalId, actionHash: String(row?.actionHash), host: host.name };
}
