/**
 * Passkey-signed grants checked offline, with real exported ledgers: every
 * grant/1 `created` entry that seals `assertion_digest` must have its
 * exported `grant_assertion` record, matching the digest, over the grant
 * challenge of the sealed `scope_digest`, signed by a registered passkey.
 *
 * Two kinds of attacker. One edits the export file (the lines are not
 * signed; only entries and checkpoints are): a changed signature, swapped
 * records, a removed record with the end line recounted, a downgrade to the
 * older end line. The other is the hub itself, which seals whatever it likes
 * before integration — a wider scope than the person signed, a forged
 * signature with its digest sealed to match, another grant's assertion —
 * so the log's hashes and checkpoints are all genuine and only the passkey
 * check can catch it. A forged entry stays in the log for good, so each hub
 * forgery gets a database of its own.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq, and, isNull, sql } from "drizzle-orm";
import { beforeAll, expect, it } from "vitest";
import { insertAdmin, insertHost, insertToken, testDeps } from "../../test/pipeline/support";
import { describeEachDatabase } from "../../test/support/databases";
import { submitAction } from "../actions";
import { canonicalize } from "../canonical";
import type { Database } from "../db";
import { grants, ledgerEntries } from "../db/schema";
import { assertionDigest, fromBase64Url, toBase64Url, type StoredAssertion } from "../passkeys/challenge";
import { registerPasskey, registrationOptions } from "../passkeys/passkeys";
import type { PasskeySettings } from "../passkeys/relying-party";
import { SoftAuthenticator } from "../passkeys/test-authenticator";
import { createGrant, grantPasskeyOptions, grantScopeSigningDigest, type GrantScope } from "../policy/grants";
import { exportLedgerToFile } from "./export";
import { integrateOnce } from "./integrate";
import type { LogKey } from "./log-key";
import { memoryLogKey } from "./test/fixtures";
import { runVerify } from "./verify-cli";

const SETTINGS: PasskeySettings = { publicUrl: "http://127.0.0.1:8700", host: "127.0.0.1", port: 8700, passkeyApprovalRisk: "high" };
const ORIGIN = "http://localhost:8700";
const HOUR = 3600_000;

type Verdict = { code: number; text: string };

async function exportLedger(db: Database, key: LogKey): Promise<string> {
  for (;;) {
    const r = await integrateOnce(db, key, { batchSize: 1000 });
    if (r.kind === "idle") break;
    if (r.kind !== "integrated") throw new Error(`integrator: ${r.kind}`);
  }
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "lh-grant-signatures-")), "ledger.export");
  await exportLedgerToFile(db, key, file);
  return file;
}

async function verifyFile(file: string, key: LogKey, options: { requirePasskeyFrom?: "high" | "critical" } = {}): Promise<Verdict> {
  let text = "";
  const code = await runVerify(file, key.verifier, { write: (t: string) => (text += t) }, options);
  return { code, text };
}

type ExportRecord = Record<string, unknown>;

function records(file: string): ExportRecord[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as ExportRecord);
}

/** A copy of the export with its records edited, written back in canonical form (what a careful forger produces). */
function rewritten(file: string, edit: (records: ExportRecord[]) => ExportRecord[]): string {
  const out = `${file}.edited-${Math.random().toString(36).slice(2)}`;
  fs.writeFileSync(out, edit(records(file)).map((r) => `${canonicalize(r)}\n`).join(""));
  return out;
}

/** The end line recounted for the grant_assertion records that remain: the end line is not signed. */
function recounted(list: ExportRecord[]): ExportRecord[] {
  const grantAssertions = list.filter((r) => r.kind === "grant_assertion").length;
  return list.map((r) => (r.kind === "end" ? { ...r, grant_assertions: grantAssertions } : r));
}

function grantAssertionRecord(list: ExportRecord[], grantId: string): ExportRecord {
  const found = list.find((r) => r.kind === "grant_assertion" && r.grant_id === grantId);
  if (found === undefined) throw new Error(`the export carries no grant_assertion for grant ${grantId}`);
  return found;
}

/** The leaf index of a grant's `created` entry in the export. */
function createdIndex(file: string, grantId: string): number {
  for (const r of records(file)) {
    if (r.kind !== "entry") continue;
    const entry = JSON.parse(Buffer.from(String(r.entry), "base64").toString("utf8")) as { type: string; data: Record<string, unknown> };
    if (entry.type === "grant/1" && entry.data.event === "created" && entry.data.grant_id === grantId) return Number(r.index);
  }
  throw new Error(`no grant/1 created entry for ${grantId}`);
}

/** One bit of the signature flipped: same length, still base64url, no longer the authenticator's. */
function flippedSignature(signature: string): string {
  const bytes = fromBase64Url(signature)!;
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x01;
  return toBase64Url(bytes);
}

/** An admin with a registered passkey, and a way to make grants that passkey signs. */
async function signer(d: Database) {
  const admin = await insertAdmin(d);
  const authenticator = new SoftAuthenticator();
  const { options } = await registrationOptions(d, admin, SETTINGS, ORIGIN);
  await registerPasskey(d, admin, { name: "laptop", response: await authenticator.register(options, ORIGIN) }, SETTINGS, ORIGIN);
  return {
    admin,
    /** A high grant signed over its whole scope, as the Grants page makes it. */
    async grant(pattern: string): Promise<{ id: string; host: string; scope: GrantScope }> {
      const host = await insertHost(d);
      const input = { tool: "run_command", host: host.name, maxRisk: "high", uses: 2, expiresAt: new Date(Date.now() + HOUR), pattern };
      const ceremony = await grantPasskeyOptions(d, admin, input, SETTINGS, ORIGIN);
      const grant = await createGrant(d, admin, { ...input, expiresAt: new Date(ceremony.scope.expires_at) }, { settings: SETTINGS, assertion: await authenticator.assert(ceremony.options, ORIGIN) });
      return { id: grant.id, host: host.name, scope: ceremony.scope };
    },
  };
}

async function storedAssertion(d: Database, grantId: string): Promise<StoredAssertion> {
  const [row] = await d.select({ assertion: grants.assertion }).from(grants).where(eq(grants.id, grantId));
  const a = row?.assertion;
  if (a == null) throw new Error(`grant ${grantId} has no stored assertion`);
  return { credential_id: a.credential_id!, authenticator_data: a.authenticator_data!, client_data_json: a.client_data_json!, signature: a.signature!, nonce: a.nonce! };
}

/**
 * What a lying hub does before integration: rewrites the sealed grant/1
 * `created` entry of `grantId` (still pending, so the integrator hashes the
 * rewritten bytes and every checkpoint over it is genuine).
 */
async function resealCreated(d: Database, grantId: string, change: (data: Record<string, unknown>) => void): Promise<void> {
  const pending = await d.select({ id: ledgerEntries.id, body: ledgerEntries.body }).from(ledgerEntries).where(and(isNull(ledgerEntries.leafIndex), sql`position(${grantId}::text::bytea in ${ledgerEntries.body}) > 0`));
  const target = pending
    .map((row) => ({ id: row.id, entry: JSON.parse(Buffer.from(row.body).toString("utf8")) as { type: string; data: Record<string, unknown> } }))
    .find((row) => row.entry.type === "grant/1" && row.entry.data.event === "created" && row.entry.data.grant_id === grantId);
  if (target === undefined) throw new Error(`no pending grant/1 created entry for ${grantId}`);
  change(target.entry.data);
  await d.update(ledgerEntries).set({ body: Buffer.from(canonicalize(target.entry), "utf8") }).where(eq(ledgerEntries.id, target.id));
}

describeEachDatabase("verify: passkey-signed grants in an edited export", (database) => {
  const key = memoryLogKey();
  let clean = "";
  let first: { id: string; host: string; scope: GrantScope };
  let second: { id: string; host: string; scope: GrantScope };
  let run: unknown;

  // The export every case reads: two signed grants, the first one used. A hook, not a case: cases run in any order.
  beforeAll(async () => {
    const d = database().handle.db;
    const person = await signer(d);
    first = await person.grant("rm -rf \\./first");
    second = await person.grant("rm -rf \\./second");
    // The grant is used, so --require-passkey high holds it to its signature too.
    const token = await insertToken(d, { createdBy: "someone-else" });
    run = await submitAction(testDeps(database().handle), token, { operation: "run_command", arguments: { host: first.host, command: "rm -rf ./first" }, channel: "mcp" }, { waitMs: 0 });
    clean = await exportLedger(d, key);
  });

  it("hostile: a grant signed by a registered passkey over its sealed scope verifies and is counted; the export carries its grant_assertion line", async () => {
    const d = database().handle.db;
    expect(run).toMatchObject({ decision: "grant", grant_id: first.id });
    const list = records(clean);
    const line = grantAssertionRecord(list, first.id);
    expect(Object.keys(line).sort()).toEqual(["authenticator_data", "client_data_json", "credential_id", "grant_id", "kind", "nonce", "signature"]);
    expect(await assertionDigest(line as unknown as StoredAssertion)).toBe(await assertionDigest(await storedAssertion(d, first.id)));
    expect(list.at(-1)).toMatchObject({ kind: "end", grant_assertions: 2 });

    const verdict = await verifyFile(clean, key, { requirePasskeyFrom: "high" });
    console.log(`$ leasehold verify --require-passkey high (signed grants, ${database().kind})\n${verdict.text}`);
    expect(verdict.code, verdict.text).toBe(0);
    expect(verdict.text).toMatch(/grants: +2 passkey-signed grant\(s\) verified/);
    expect(verdict.text).toContain("VERIFIED");
  });

  it("hostile: a changed signature in the grant_assertion line fails, naming the grant's created entry", async () => {
    const index = createdIndex(clean, first.id);
    const file = rewritten(clean, (list) => list.map((r) => (r.kind === "grant_assertion" && r.grant_id === first.id ? { ...r, signature: flippedSignature(String(r.signature)) } : r)));
    const verdict = await verifyFile(file, key);
    console.log(`$ leasehold verify (grant signature edited in the file, ${database().kind})\n${verdict.text}`);
    expect(verdict.code).toBe(1);
    expect(verdict.text).toContain(`first bad index ${index}: entry ${index}: grant ${first.id}: the assertion does not match the assertion_digest sealed in its grant/1 created entry`);
    expect(verdict.text).not.toContain("VERIFIED");
  });

  it("hostile: assertions swapped between two grants fail, naming the grant and where its sealed assertion went", async () => {
    const file = rewritten(clean, (list) =>
      list.map((r) => {
        if (r.kind !== "grant_assertion") return r;
        if (r.grant_id === first.id) return { ...r, grant_id: second.id };
        if (r.grant_id === second.id) return { ...r, grant_id: first.id };
        return r;
      }),
    );
    const index = createdIndex(clean, first.id);
    const verdict = await verifyFile(file, key);
    expect(verdict.code).toBe(1);
    expect(verdict.text).toContain(`first bad index ${index}: entry ${index}: grant ${first.id}: the assertion does not match the assertion_digest sealed in its grant/1 created entry`);
    expect(verdict.text).toContain(`the assertion it sealed is exported under grant ${second.id} (swapped)`);
  });

  it("hostile: a removed grant_assertion line fails naming the grant, with the end line recounted and with it downgraded to the older form", async () => {
    const index = createdIndex(clean, second.id);
    const without = (list: ExportRecord[]) => list.filter((r) => !(r.kind === "grant_assertion" && r.grant_id === second.id));

    const recountedFile = rewritten(clean, (list) => recounted(without(list)));
    const verdict = await verifyFile(recountedFile, key);
    console.log(`$ leasehold verify (grant_assertion line removed, ${database().kind})\n${verdict.text}`);
    expect(verdict.code).toBe(1);
    expect(verdict.text).toContain(`first bad index ${index}: entry ${index}: grant ${second.id}: its grant/1 created entry seals a passkey assertion, but the export carries no assertion for it`);

    // Left uncounted, the end line says so.
    const uncounted = await verifyFile(rewritten(clean, without), key);
    expect(uncounted.code).toBe(1);
    expect(uncounted.text).toContain("end line promises 2 grant assertions; the file has 1");

    // Every grant_assertion line removed and the end line in the form exports had before grants were signed: still named.
    const downgraded = rewritten(clean, (list) =>
      list.filter((r) => r.kind !== "grant_assertion").map((r) => (r.kind === "end" ? Object.fromEntries(Object.entries(r).filter(([k]) => k !== "grant_assertions")) : r)),
    );
    const old = await verifyFile(downgraded, key);
    expect(old.code).toBe(1);
    expect(old.text).toMatch(new RegExp(`entry \\d+: grant (${first.id}|${second.id}): its grant/1 created entry seals a passkey assertion, but the export carries no assertion for it`));
  });
});

describeEachDatabase("verify: a hub that seals a wider scope than the person signed", (database) => {
  const key = memoryLogKey();

  it("hostile: the sealed scope_digest changed before integration (one more use) fails: the passkey signed a challenge for another scope", async () => {
    const d = database().handle.db;
    const person = await signer(d);
    const grant = await person.grant("rm -rf \\./scoped");
    const wider = grantScopeSigningDigest({ ...grant.scope, uses: grant.scope.uses + 1 });
    await resealCreated(d, grant.id, (data) => {
      data.scope_digest = wider;
    });
    const file = await exportLedger(d, key);
    const index = createdIndex(file, grant.id);
    const verdict = await verifyFile(file, key);
    console.log(`$ leasehold verify (scope digest changed, ${database().kind})\n${verdict.text}`);
    expect(verdict.code).toBe(1);
    expect(verdict.text).toContain(
      `first bad index ${index}: entry ${index}: grant ${grant.id}: the passkey signed a challenge that is not derived from the scope_digest ${wider} sealed for this grant — it was made for another scope`,
    );
  });
});

describeEachDatabase("verify: a hub that seals a forged grant signature", (database) => {
  const key = memoryLogKey();

  it("hostile: a tampered signature whose digest the hub sealed to match fails the signature check against the registered key", async () => {
    const d = database().handle.db;
    const person = await signer(d);
    const grant = await person.grant("rm -rf \\./forged");
    const genuine = await storedAssertion(d, grant.id);
    const forged = { ...genuine, signature: flippedSignature(genuine.signature) };
    await d.update(grants).set({ assertion: { ...forged } }).where(eq(grants.id, grant.id));
    const digest = await assertionDigest(forged);
    await resealCreated(d, grant.id, (data) => {
      data.assertion_digest = digest;
    });
    const file = await exportLedger(d, key);
    const index = createdIndex(file, grant.id);
    const verdict = await verifyFile(file, key);
    console.log(`$ leasehold verify (forged grant signature, ${database().kind})\n${verdict.text}`);
    expect(verdict.code).toBe(1);
    expect(verdict.text).toContain(`first bad index ${index}: entry ${index}: grant ${grant.id}: the passkey signature does not verify with the registered public key of ${genuine.credential_id}`);
  });
});

describeEachDatabase("verify: a hub that reuses one grant's signature for another", (database) => {
  const key = memoryLogKey();

  it("hostile: grant B sealed with grant A's assertion (stored and sealed to match) fails: the challenge is for A's scope", async () => {
    const d = database().handle.db;
    const person = await signer(d);
    const a = await person.grant("rm -rf \\./a");
    const b = await person.grant("rm -rf \\./b");
    const borrowed = await storedAssertion(d, a.id);
    await d.update(grants).set({ assertion: { ...borrowed } }).where(eq(grants.id, b.id));
    const digest = await assertionDigest(borrowed);
    await resealCreated(d, b.id, (data) => {
      data.assertion_digest = digest;
    });
    const file = await exportLedger(d, key);
    const index = createdIndex(file, b.id);
    const verdict = await verifyFile(file, key);
    expect(verdict.code).toBe(1);
    expect(verdict.text).toContain(`first bad index ${index}: entry ${index}: grant ${b.id}: the passkey signed a challenge that is not derived from the scope_digest`);
    expect(verdict.text).toContain("it was made for another scope");
  });
});
