/**
 * Passkeys end to end at the server level, on both databases, with a
 * software authenticator: registration sealed in the ledger, sign-in, the
 * approval challenge bound to one approval and action hash, single use, the
 * passkey threshold, removed credentials, and the offline check of an export.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createActionPipeline, installActionPipeline, submitAction } from "../actions";
import { createAdminSession } from "../admins";
import type { DatabaseHandle } from "../db";
import { adminUsers } from "../db/schema";
import type { HubRuntime } from "../hub/runtime";
import { type TRPCError } from "../trpc/init";
import { appRouter } from "../trpc/root";
import { approve, needsPasskey } from "../approvals";
import type { Database } from "../db";
import { approvals, passkeyCredentials } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { decodeEntry, hashActor } from "../ledger/entry";
import { exportLedgerToFile } from "../ledger/export";
import { integrateOnce } from "../ledger/integrate";
import type { LogKey } from "../ledger/log-key";
import { memoryLogKey } from "../ledger/test/fixtures";
import { runVerify } from "../ledger/verify-cli";
import { ledgerEntries } from "../db/schema";
import { describeEachDatabase } from "../../test/support/databases";
import { allEntries, insertAdmin, insertHost, insertToken, testDeps } from "../../test/pipeline/support";
import { approvalChallenge, approvalChallengeBase64Url, approvalChallengeText, assertionDigest, passkeyKeyDigest, toBase64Url, fromBase64Url } from "./challenge";
import { passkeyVerdictFor } from "../action-records";
import { approvalOptions, listPasskeys, registerPasskey, registrationOptions, removePasskey, signInOptions, signInWithPasskey, verifyApprovalAssertion } from "./passkeys";
import { relyingParty, type PasskeySettings } from "./relying-party";
import { SoftAuthenticator } from "./test-authenticator";
import { sessionHeaders } from "../trpc/routers/test-callers";

const SETTINGS: PasskeySettings = { publicUrl: "http://127.0.0.1:8700", host: "127.0.0.1", port: 8700, passkeyApprovalRisk: "high" };
const ORIGIN = "http://localhost:8700";

async function refusal(promise: Promise<unknown>): Promise<LeaseholdError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LeaseholdError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("approval challenge derivation", () => {
  it("is sha256 of 'leasehold.approval/1\\n' + approval id + '\\n' + action hash + '\\n' + nonce, in base64url as WebAuthn carries it", async () => {
    const id = "0b6f1c2e-9d7a-4e55-8a31-2f0f3c9a1b77";
    const hash = `sha256:${"ab".repeat(32)}`;
    const nonce = toBase64Url(new Uint8Array(32).fill(7));
    expect(approvalChallengeText(id, hash, nonce)).toBe(`leasehold.approval/1\n${id}\n${hash}\n${nonce}`);
    const expected = createHash("sha256").update(`leasehold.approval/1\n${id}\n${hash}\n${nonce}`).digest();
    expect(Buffer.from(await approvalChallenge(id, hash, nonce)).equals(expected)).toBe(true);
    expect(await approvalChallengeBase64Url(id, hash, nonce)).toBe(expected.toString("base64url"));
    // Any other approval id, hash or nonce is another challenge.
    expect(await approvalChallengeBase64Url(id, `sha256:${"cd".repeat(32)}`, nonce)).not.toBe(expected.toString("base64url"));
    expect(await approvalChallengeBase64Url(id, hash, toBase64Url(new Uint8Array(32).fill(8)))).not.toBe(expected.toString("base64url"));
  });

  it("base64url round-trips and refuses non-canonical text", () => {
    for (const n of [0, 1, 2, 3, 31, 32, 33]) {
      const bytes = crypto.getRandomValues(new Uint8Array(n));
      expect(toBase64Url(bytes)).toBe(Buffer.from(bytes).toString("base64url"));
      expect(Buffer.from(fromBase64Url(toBase64Url(bytes))!).equals(Buffer.from(bytes))).toBe(true);
    }
    expect(fromBase64Url("AB==")).toBeUndefined();
    expect(fromBase64Url("AB")).toBeUndefined(); // trailing bits not zero
    expect(fromBase64Url("a+b/")).toBeUndefined();
  });

  it("the relying party: localhost beside a loopback IP public URL; a bare non-loopback IP turns passkeys off naming LEASEHOLD_PUBLIC_URL", () => {
    expect(relyingParty(SETTINGS)).toEqual({ available: true, origins: ["http://localhost:8700"], rpIds: ["localhost"] });
    expect(relyingParty({ publicUrl: "https://admin.example.org", host: "0.0.0.0", port: 8700 })).toEqual({ available: true, origins: ["https://admin.example.org"], rpIds: ["admin.example.org"] });
    const off = relyingParty({ publicUrl: "http://10.0.0.5:8700", host: "0.0.0.0", port: 8700 });
    expect(off.available).toBe(false);
    expect(!off.available && off.reason).toContain("LEASEHOLD_PUBLIC_URL");
  });

  it("the threshold: high covers high and critical, critical only critical, off nothing; unknown risks count as critical", () => {
    expect(["read_only", "low", "medium", "high", "critical", "weird"].map((r) => needsPasskey(r, "high"))).toEqual([false, false, false, true, true, true]);
    expect(["medium", "high", "critical"].map((r) => needsPasskey(r, "critical"))).toEqual([false, false, true]);
    expect(["high", "critical"].map((r) => needsPasskey(r, "off"))).toEqual([false, false]);
  });
});

async function integrateAll(db: Database, key: LogKey): Promise<void> {
  for (;;) {
    const r = await integrateOnce(db, key, { batchSize: 1000 });
    if (r.kind === "idle") return;
    if (r.kind !== "integrated") throw new Error(`integrator: ${r.kind}`);
  }
}

async function exportAndVerify(db: Database, key: LogKey, options: { requirePasskeyFrom?: "high" | "critical" } = {}): Promise<{ code: number; text: string }> {
  await integrateAll(db, key);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "lh-passkeys-")), "ledger.export");
  await exportLedgerToFile(db, key, file);
  let text = "";
  const code = await runVerify(file, key.verifier, { write: (t: string) => (text += t) }, options);
  return { code, text };
}

describeEachDatabase("passkeys", (db) => {
  const key = memoryLogKey();

  async function heldAction(command: string) {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const caller = await insertToken(d, { createdBy: "someone-else" });
    const held = await refusal(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command }, channel: "mcp" }, { waitMs: 0 }));
    expect(held.code).toBe("APPROVAL_PENDING");
    return { approvalId: String(held.details?.["approval_id"]), risk: String(held.details?.["risk"]) };
  }

  async function registered() {
    const d = db().handle.db;
    const admin = await insertAdmin(d);
    const authenticator = new SoftAuthenticator();
    const { options } = await registrationOptions(d, admin, SETTINGS, ORIGIN);
    expect(options.rp.id).toBe("localhost");
    expect(options.authenticatorSelection?.residentKey).toBe("required");
    const passkey = await registerPasskey(d, admin, { name: "laptop", response: await authenticator.register(options, ORIGIN) }, SETTINGS, ORIGIN);
    return { admin, authenticator, passkey };
  }

  async function signedApproval(admin: { id: string; username: string }, authenticator: SoftAuthenticator, target: { approvalId: string }) {
    const d = db().handle.db;
    const { options, actionHash } = await approvalOptions(d, admin, target.approvalId, SETTINGS, ORIGIN);
    return { assertion: await authenticator.assert(options, ORIGIN), actionHash };
  }

  it("registers a passkey (sealed as admin/1 passkey.register with the key's digest), lists it, and signs in with it", async () => {
    const d = db().handle.db;
    const { admin, authenticator, passkey } = await registered();
    expect((await listPasskeys(d, admin.id)).map((p) => p.name)).toEqual(["laptop"]);
    const [row] = await d.select().from(passkeyCredentials).where(eq(passkeyCredentials.id, passkey.id));
    const sealed = (await allEntries(d)).filter((e) => e.type === "admin/1" && e.data.operation === "passkey.register");
    expect(sealed.map((e) => (e.type === "admin/1" ? e.data.settings_digest : null))).toContain(await passkeyKeyDigest(row!.credentialId, row!.publicKey));

    const options = await signInOptions(d, SETTINGS, ORIGIN);
    const session = await signInWithPasskey(d, await authenticator.assert(options, ORIGIN), SETTINGS, ORIGIN);
    expect(session.admin.id).toBe(admin.id);
    expect(session.token).toMatch(/^[a-z2-7]{32}$/);
    // A ceremony from another origin is refused before anything is verified.
    expect((await refusal(signInOptions(d, SETTINGS, "http://127.0.0.1:8700"))).message).toContain("passkeys work on this hub at http://localhost:8700");
  });

  it("threshold: a high-risk approval without a passkey signature is refused FORBIDDEN 'needs a passkey signature'; with one it is approved, stored and its digest sealed", async () => {
    const d = db().handle.db;
    const { admin, authenticator } = await registered();
    const held = await heldAction("rm -rf ./build");
    expect(held.risk).toBe("high");
    const bare = await refusal(approve(d, held.approvalId, admin, null, { passkey: { settings: SETTINGS } }));
    expect(bare.code).toBe("FORBIDDEN");
    expect(bare.message).toContain("needs a passkey signature");
    // Threshold `critical` lets a high approval through without one.
    const other = await heldAction("rm -rf ./dist");
    expect((await approve(d, other.approvalId, admin, null, { passkey: { settings: { ...SETTINGS, passkeyApprovalRisk: "critical" } } })).state).toBe("approved");

    const { assertion, actionHash } = await signedApproval(admin, authenticator, held);
    const row = await approve(d, held.approvalId, admin, "signed", { expectedActionHash: actionHash, passkey: { settings: SETTINGS, assertion } });
    expect(row.state).toBe("approved");
    expect(row.assertion?.["credential_id"]).toBe(authenticator.credentialId);
    const entry = (await allEntries(d)).find((e) => e.type === "approval/1" && e.data.approval_id === held.approvalId);
    expect(entry?.type === "approval/1" && entry.data.assertion_digest).toBe(await assertionDigest(row.assertion as never));
    // The action page checks the stored assertion the way `leasehold verify` does: verified here,
    // and failed once a byte of its signature changes.
    expect(await passkeyVerdictFor(d, row)).toMatchObject({ status: "verified", credential_id: authenticator.credentialId });
    const sig = String(row.assertion?.["signature"]);
    const flipped = (sig[5] === "A" ? "B" : "A");
    const tampered = { ...row, assertion: { ...row.assertion, signature: sig.slice(0, 5) + flipped + sig.slice(6) } as Record<string, string> };
    expect(await passkeyVerdictFor(d, tampered)).toMatchObject({ status: "failed" });
    // The same assertion presented for another approval fails its challenge derivation.
    expect(await passkeyVerdictFor(d, { ...row, id: other.approvalId })).toMatchObject({ status: "failed", detail: expect.stringContaining("made for another approval or action") });
  });

  it("fail closed: with a bare-IP public URL a high approval is refused naming LEASEHOLD_PUBLIC_URL", async () => {
    const d = db().handle.db;
    const admin = await insertAdmin(d);
    const held = await heldAction("rm -rf ./cache");
    const error = await refusal(approve(d, held.approvalId, admin, null, { passkey: { settings: { publicUrl: "http://10.0.0.5:8700", host: "0.0.0.0", port: 8700, passkeyApprovalRisk: "high" } } }));
    expect(error.code).toBe("FORBIDDEN");
    expect(error.message).toContain("needs a passkey signature");
    expect(error.message).toContain("LEASEHOLD_PUBLIC_URL");
  });

  it("an assertion made for one approval (its action hash) is refused for another, and a challenge is single use", async () => {
    const d = db().handle.db;
    const { admin, authenticator } = await registered();
    const a = await heldAction("rm -rf ./a");
    const b = await heldAction("rm -rf ./b");
    const forA = await signedApproval(admin, authenticator, a);
    const wrong = await refusal(approve(d, b.approvalId, admin, null, { passkey: { settings: SETTINGS, assertion: forA.assertion } }));
    expect(wrong.code).toBe("FORBIDDEN");
    expect(wrong.message).toContain("made for another approval or another action hash");
    expect((await d.select().from(approvals).where(eq(approvals.id, b.approvalId)))[0]?.state).toBe("pending");

    // Single use: the first verification takes the challenge; the same assertion again is refused.
    const forB = await signedApproval(admin, authenticator, b);
    const input = { approvalId: b.approvalId, actionHash: forB.actionHash, adminId: admin.id, response: forB.assertion, settings: SETTINGS };
    expect((await verifyApprovalAssertion(d, input)).credential_id).toBe(authenticator.credentialId);
    expect((await refusal(verifyApprovalAssertion(d, input))).message).toContain("unknown or was already used");
    // Another admin cannot use someone else's challenge.
    const stranger = await insertAdmin(d);
    const forB2 = await signedApproval(admin, authenticator, b);
    expect((await refusal(approve(d, b.approvalId, stranger, null, { passkey: { settings: SETTINGS, assertion: forB2.assertion } }))).message).toContain("another approver");
  });

  it("export + verify: signed approvals verify offline, also after their passkey was removed; a tampered assertion or key and an unsigned high approval are named by index", async () => {
    const d = db().handle.db;
    const { admin, authenticator, passkey } = await registered();
    const held = await heldAction("rm -rf ./x");
    const { assertion, actionHash } = await signedApproval(admin, authenticator, held);
    await approve(d, held.approvalId, admin, null, { expectedActionHash: actionHash, passkey: { settings: SETTINGS, assertion } });

    // Removed afterwards: it signs nothing new, but the approval it signed still verifies.
    await removePasskey(d, admin, passkey.id);
    expect(await listPasskeys(d, admin.id)).toEqual([]);
    const late = await heldAction("rm -rf ./late");
    expect((await refusal(approvalOptions(d, admin, late.approvalId, SETTINGS, ORIGIN))).message).toContain("register a passkey first");
    const signIn = await refusal(signInOptions(d, SETTINGS, ORIGIN).then((o) => authenticator.assert(o, ORIGIN)).then((r) => signInWithPasskey(d, r, SETTINGS, ORIGIN)));
    expect(signIn.message).toContain("removed");

    const ok = await exportAndVerify(d, key);
    console.log(`$ leasehold verify (passkeys, ${db().kind})\n${ok.text}`);
    expect(ok.code, ok.text).toBe(0);
    expect(ok.text).toMatch(/passkeys: +\d+ passkey-signed approval\(s\) verified/);
    expect(ok.text).toContain("VERIFIED");

    // An approved high action without a signature (threshold was off) is listed, and fails with --require-passkey.
    const unsigned = await heldAction("rm -rf ./unsigned");
    await approve(d, unsigned.approvalId, admin, null, { passkey: { settings: { ...SETTINGS, passkeyApprovalRisk: "off" } } });
    const listed = await exportAndVerify(d, key);
    const index = await indexOfApproval(d, unsigned.approvalId);
    expect(listed.code, listed.text).toBe(0);
    expect(listed.text).toContain(`UNSIGNED:      entry ${index}: approval ${unsigned.approvalId} of a high-risk action was not signed by any registered passkey`);
    const strict = await exportAndVerify(d, key, { requirePasskeyFrom: "high" });
    expect(strict.code).toBe(1);
    // The first unsigned high approval in the log (an earlier case approved one under threshold `critical`) is named.
    expect(strict.text).toMatch(/FAILED: line \d+, first bad index (\d+): entry \1: approval \S+ of a high-risk action was not signed by any registered passkey/);

    // The stored assertion changed after sealing (another signature): its digest no longer matches.
    const signedIndex = await indexOfApproval(d, held.approvalId);
    const [stored] = await d.select().from(approvals).where(eq(approvals.id, held.approvalId));
    const original = stored!.assertion!;
    await d.update(approvals).set({ assertion: { ...original, nonce: toBase64Url(new Uint8Array(32)) } }).where(eq(approvals.id, held.approvalId));
    const tampered = await exportAndVerify(d, key);
    expect(tampered.code).toBe(1);
    expect(tampered.text).toContain(`first bad index ${signedIndex}`);
    expect(tampered.text).toContain("does not match the assertion_digest");
    await d.update(approvals).set({ assertion: original }).where(eq(approvals.id, held.approvalId));

    // The registered key swapped for another authenticator's: no sealed registration vouches for it.
    const [cred] = await d.select().from(passkeyCredentials).where(eq(passkeyCredentials.id, passkey.id));
    const impostor = new SoftAuthenticator();
    const impostorReg = await impostor.register((await registrationOptions(d, await insertAdmin(d), SETTINGS, ORIGIN)).options, ORIGIN);
    const { verifyRegistrationResponse } = await import("@simplewebauthn/server");
    const info = await verifyRegistrationResponse({ response: impostorReg, expectedChallenge: () => true, expectedOrigin: ORIGIN, expectedRPID: "localhost" });
    await d.update(passkeyCredentials).set({ publicKey: toBase64Url(info.registrationInfo!.credential.publicKey) }).where(eq(passkeyCredentials.id, passkey.id));
    const swapped = await exportAndVerify(d, key);
    console.log(`$ leasehold verify (registered key swapped, ${db().kind})\n${swapped.text}`);
    expect(swapped.code).toBe(1);
    expect(swapped.text).toContain(`first bad index ${signedIndex}`);
    expect(swapped.text).toContain("no registered authenticator signed it");
    await d.update(passkeyCredentials).set({ publicKey: cred!.publicKey }).where(eq(passkeyCredentials.id, passkey.id));
    expect((await exportAndVerify(d, key)).code).toBe(0);

    // A hub that seals a genuine assertion made for one approval under ANOTHER approval's entry:
    // the signature verifies, but its challenge is not derived from that approval and action hash.
    const other = await heldAction("rm -rf ./other");
    const [otherRow] = await d.update(approvals).set({ state: "approved", assertion: original }).where(eq(approvals.id, other.approvalId)).returning();
    await appendEntry(d, {
      type: "approval/1",
      time: new Date(),
      action_id: otherRow!.actionId,
      actor: hashActor("admin", admin.id),
      data: { action_hash: otherRow!.actionHash as `sha256:${string}`, approval_id: other.approvalId, outcome: "approved", deadline: otherRow!.deadline.toISOString(), assertion_digest: await assertionDigest(original as never) },
    });
    const mismatched = await exportAndVerify(d, key);
    console.log(`$ leasehold verify (assertion of one approval sealed under another, ${db().kind})\n${mismatched.text}`);
    const mismatchedIndex = await indexOfApproval(d, other.approvalId);
    expect(mismatched.code).toBe(1);
    expect(mismatched.text).toContain(`first bad index ${mismatchedIndex}`);
    expect(mismatched.text).toContain("made for another approval or action");
  });
});

describeEachDatabase("passkeys over tRPC (the browser's calls)", (db) => {
  it("registration and the approval ceremony over tRPC with the page's Origin: approvals.approve refuses a high action without an assertion and approves it with one; batch items are signed one by one", async () => {
    const handle = db().handle;
    const runtime = { database: { handle }, config: { publicUrl: "http://127.0.0.1:8700", host: "127.0.0.1", port: 8700, passkeyApprovalRisk: "high", dataDir: "/nonexistent" } } as unknown as HubRuntime;
    installActionPipeline(runtime, createActionPipeline(testDeps(handle)));
    const [row] = await handle.db.insert(adminUsers).values({ username: `pk-trpc-${Math.random().toString(36).slice(2, 8)}`, passwordHash: "unused", role: "approver" }).returning();
    const session = await createAdminSession(handle.db, row!.id);
    const caller = appRouter.createCaller({ runtime, headers: sessionHeaders(session, runtime.config, { origin: ORIGIN }) });
    const authenticator = new SoftAuthenticator();
    const { options } = await caller.passkeys.registrationOptions();
    const registration = await authenticator.register(options, ORIGIN);
    await caller.passkeys.register({ name: "trpc key", response: { ...registration, clientExtensionResults: {} } });
    const listed = await caller.passkeys.list();
    expect(listed).toMatchObject({ available: true, approvalRisk: "high", passkeys: [{ name: "trpc key" }] });

    const held = await heldActionOn(handle, "rm -rf ./trpc");
    const bare = await caller.approvals.approve({ approvalId: held.approvalId, actionHash: held.actionHash }).then(
      () => undefined,
      (error: TRPCError) => error,
    );
    expect(bare?.code).toBe("FORBIDDEN");
    expect(bare?.message).toContain("needs a passkey signature");
    const issued = await caller.passkeys.approvalOptions({ approvalId: held.approvalId });
    expect(issued.actionHash).toBe(held.actionHash);
    const assertion = await authenticator.assert(issued.options, ORIGIN);
    expect(await caller.approvals.approve({ approvalId: held.approvalId, actionHash: held.actionHash, assertion: { ...assertion, clientExtensionResults: {} } })).toEqual({ id: held.approvalId, state: "approved" });

    // Batch: the unsigned high item fails alone; the signed one is approved.
    const x = await heldActionOn(handle, "rm -rf ./bx");
    const y = await heldActionOn(handle, "rm -rf ./by");
    const forY = await authenticator.assert((await caller.passkeys.approvalOptions({ approvalId: y.approvalId })).options, ORIGIN);
    const { results } = await caller.approvals.batch({ decision: "approve", items: [{ approvalId: x.approvalId, actionHash: x.actionHash }, { approvalId: y.approvalId, actionHash: y.actionHash, assertion: { ...forY, clientExtensionResults: {} } }] });
    expect(results.map((r) => (r.ok ? r.state : r.error.message))).toEqual([expect.stringContaining("needs a passkey signature"), "approved"]);
  });
});

async function heldActionOn(handle: DatabaseHandle, command: string): Promise<{ approvalId: string; actionHash: string }> {
  const host = await insertHost(handle.db);
  const caller = await insertToken(handle.db, { createdBy: "someone-else" });
  const held = await refusal(submitAction(testDeps(handle), caller, { operation: "run_command", arguments: { host: host.name, command }, channel: "mcp" }, { waitMs: 0 }));
  const approvalId = String(held.details?.["approval_id"]);
  const [row] = await handle.db.select({ actionHash: approvals.actionHash }).from(approvals).where(eq(approvals.id, approvalId));
  return { approvalId, actionHash: String(row?.actionHash) };
}

async function indexOfApproval(d: Database, approvalId: string): Promise<number> {
  const rows = await d.select({ leafIndex: ledgerEntries.leafIndex, body: ledgerEntries.body }).from(ledgerEntries);
  for (const row of rows) {
    const decoded = decodeEntry(row.body);
    if (row.leafIndex !== null && decoded.ok && decoded.entry.type === "approval/1" && decoded.entry.data.approval_id === approvalId) return Number(row.leafIndex);
  }
  throw new Error("no approval/1 entry");
}
