/**
 * `leasehold verify --require-passkey` over grants, with a real exported
 * ledger: an action at or above the level that ran under a grant created
 * without a passkey signature fails, naming the action and the grant; one
 * that ran under a passkey-signed grant passes.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { insertAdmin, insertHost, insertToken, PASSKEY_OFF, testDeps } from "../../test/pipeline/support";
import { describeEachDatabase } from "../../test/support/databases";
import { submitAction } from "../actions";
import type { Database } from "../db";
import { registerPasskey, registrationOptions } from "../passkeys/passkeys";
import type { PasskeySettings } from "../passkeys/relying-party";
import { SoftAuthenticator } from "../passkeys/test-authenticator";
import { createGrant, grantPasskeyOptions } from "../policy/grants";
import { exportLedgerToFile } from "./export";
import { integrateOnce } from "./integrate";
import type { LogKey } from "./log-key";
import { memoryLogKey } from "./test/fixtures";
import { runVerify } from "./verify-cli";

const SETTINGS: PasskeySettings = { publicUrl: "http://127.0.0.1:8700", host: "127.0.0.1", port: 8700, passkeyApprovalRisk: "high" };
const ORIGIN = "http://localhost:8700";
const HOUR = 3600_000;

async function exportAndVerify(db: Database, key: LogKey, options: { requirePasskeyFrom?: "high" | "critical" } = {}): Promise<{ code: number; text: string }> {
  for (;;) {
    const r = await integrateOnce(db, key, { batchSize: 1000 });
    if (r.kind === "idle") break;
    if (r.kind !== "integrated") throw new Error(`integrator: ${r.kind}`);
  }
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "lh-verify-grants-")), "ledger.export");
  await exportLedgerToFile(db, key, file);
  let text = "";
  const code = await runVerify(file, key.verifier, { write: (t: string) => (text += t) }, options);
  return { code, text };
}

describeEachDatabase("verify --require-passkey: actions that ran under a grant", (database) => {
  const key = memoryLogKey();

  it("hostile: a high action under a grant made without a passkey fails --require-passkey high naming the action and the grant; under a passkey-signed grant it verifies", async () => {
    const d = database().handle.db;
    const deps = testDeps(database().handle);
    const admin = await insertAdmin(d);
    const token = await insertToken(d, { createdBy: "someone-else" });

    // A passkey-signed high grant: the action it covers verifies under --require-passkey high.
    const authenticator = new SoftAuthenticator();
    const { options } = await registrationOptions(d, admin, SETTINGS, ORIGIN);
    await registerPasskey(d, admin, { name: "laptop", response: await authenticator.register(options, ORIGIN) }, SETTINGS, ORIGIN);
    const signedHost = await insertHost(d);
    const input = { tool: "run_command", host: signedHost.name, maxRisk: "high", uses: 2, expiresAt: new Date(Date.now() + HOUR), pattern: "rm -rf \\./signed" };
    const ceremony = await grantPasskeyOptions(d, admin, input, SETTINGS, ORIGIN);
    const signedGrant = await createGrant(d, admin, { ...input, expiresAt: new Date(ceremony.scope.expires_at) }, { settings: SETTINGS, assertion: await authenticator.assert(ceremony.options, ORIGIN) });
    const signedRun = await submitAction(deps, token, { operation: "run_command", arguments: { host: signedHost.name, command: "rm -rf ./signed" }, channel: "mcp" }, { waitMs: 0 });
    expect(signedRun).toMatchObject({ decision: "grant", grant_id: signedGrant.id });
    // A medium action under an unsigned medium grant is below the level: never reported.
    const mediumHost = await insertHost(d);
    await createGrant(d, admin, { tool: "run_command", host: mediumHost.name, maxRisk: "medium", uses: 2, expiresAt: new Date(Date.now() + HOUR), pattern: "chmod -f 600 lh-m; echo m" });
    const mediumRun = await submitAction(deps, token, { operation: "run_command", arguments: { host: mediumHost.name, command: "chmod -f 600 lh-m; echo m" }, channel: "mcp" }, { waitMs: 0 });
    expect(mediumRun.decision).toBe("grant");

    const clean = await exportAndVerify(d, key, { requirePasskeyFrom: "high" });
    console.log(`$ leasehold verify --require-passkey high (signed grant, ${database().kind})\n${clean.text}`);
    expect(clean.code, clean.text).toBe(0);
    expect(clean.text).not.toContain("UNSIGNED");

    // A high grant made with the threshold off (no passkey), and the high action it let through.
    const unsignedHost = await insertHost(d);
    const unsignedGrant = await createGrant(d, admin, { tool: "run_command", host: unsignedHost.name, maxRisk: "high", uses: 2, expiresAt: new Date(Date.now() + HOUR), pattern: "rm -rf \\./unsigned" }, PASSKEY_OFF);
    const unsignedRun = await submitAction(deps, token, { operation: "run_command", arguments: { host: unsignedHost.name, command: "rm -rf ./unsigned" }, channel: "mcp" }, { waitMs: 0 });
    expect(unsignedRun).toMatchObject({ decision: "grant", grant_id: unsignedGrant.id });

    const listed = await exportAndVerify(d, key);
    expect(listed.code, listed.text).toBe(0);
    expect(listed.text).toMatch(new RegExp(`UNSIGNED: +entry \\d+: action ${unsignedRun.action_id} \\(high risk\\) ran under grant ${unsignedGrant.id}, which was created without a passkey signature over its scope`));
    expect(listed.text).not.toContain(signedGrant.id);

    const strict = await exportAndVerify(d, key, { requirePasskeyFrom: "high" });
    console.log(`$ leasehold verify --require-passkey high (unsigned grant, ${database().kind})\n${strict.text}`);
    expect(strict.code).toBe(1);
    expect(strict.text).toMatch(new RegExp(`FAILED: line \\d+, first bad index (\\d+): entry \\1: action ${unsignedRun.action_id} \\(high risk\\) ran under grant ${unsignedGrant.id}, which was created without a passkey signature`));
    expect(strict.text).not.toContain("VERIFIED");
    // --require-passkey critical: a high action under an unsigned grant is below that level.
    expect((await exportAndVerify(d, key, { requirePasskeyFrom: "critical" })).code).toBe(0);
  });
});
