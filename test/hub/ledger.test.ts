/**
 * The ledger through the hub, as users reach it: the CLI (`ledger key`,
 * `export`, `verify` — including a tampered export), the public HTTP routes
 * and a witness submitting a cosignature over HTTP.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeBase64Strict } from "../../server/ledger/base64";
import { generateSignerKey, SIGNATURE_TYPE } from "../../server/ledger/note";
import { initialWitnessState, witnessCosign } from "../../server/ledger/witness";
import { fullHealth, runCli, startHub, tempDir, type RunningHub } from "../support/hub-process";

let hub: RunningHub;
beforeAll(async () => {
  hub = await startHub();
});
afterAll(async () => {
  await hub?.stop();
});

async function waitForCheckpoint(): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const res = await fetch(`${hub.url}/api/ledger/checkpoint`);
    if (res.ok) return res.text();
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("no checkpoint appeared");
}

describe("the ledger through a running hub", () => {
  it("serves its key at the well-known URL and through `leasehold ledger key` (run inside the hub)", async () => {
    const wellKnown = await (await fetch(`${hub.url}/.well-known/leasehold/ledger-key`)).text();
    const cli = await runCli(["ledger", "key"], { LEASEHOLD_DATA_DIR: hub.dataDir });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout.trim()).toBe(wellKnown.trim());
    expect(wellKnown.trim()).toMatch(/^127\.0\.0\.1:\d+\/leasehold\/[0-9a-f]{12}\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/);
  });

  it("witnesses cosign over HTTP; export → verify passes; one changed byte fails and is located", async () => {
    // Register a witness and make the log non-empty (registration is itself sealed).
    const witness = generateSignerKey("witness.test/e2e", SIGNATURE_TYPE.cosignatureV1);
    const added = await runCli(["ledger", "witness", "add", witness.verifier], { LEASEHOLD_DATA_DIR: hub.dataDir });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain("registered");
    const note = await waitForCheckpoint();
    const logKey = (await (await fetch(`${hub.url}/api/ledger/key`)).text()).trim();
    const size = Number(note.split("\n")[1]);
    const proof = (await (await fetch(`${hub.url}/api/ledger/proof/consistency?from=0&to=${size}`)).json()) as { proof: string[] };
    const signed = witnessCosign(initialWitnessState(note.split("\n")[0]!), note, proof.proof.map((p) => decodeBase64Strict(p)!), logKey, witness.signer);
    if (!signed.ok) throw new Error(signed.reason);
    const post = await fetch(`${hub.url}/api/ledger/cosignature`, { method: "POST", body: JSON.stringify({ size, line: signed.line }) });
    expect(post.status, await post.clone().text()).toBe(200);
    const bad = await fetch(`${hub.url}/api/ledger/cosignature`, { method: "POST", body: "{" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe("INVALID_ARGUMENT");

    const inclusion = await fetch(`${hub.url}/api/ledger/proof/inclusion?index=0`);
    expect(inclusion.status).toBe(200);
    expect((await fetch(`${hub.url}/api/ledger/proof/inclusion?index=abc`)).status).toBe(400);
    expect((await fetch(`${hub.url}/api/ledger/proof/inclusion?index=99999`)).status).toBe(404);

    // Wait until the cosignature's own ledger entry is integrated, then export.
    await new Promise((r) => setTimeout(r, 600));
    const dir = tempDir();
    // Runs inside the hub (control socket), but a relative path is the caller's.
    const out = await runCli(["export", "--out", "log.export"], { LEASEHOLD_DATA_DIR: hub.dataDir }, 60_000, dir);
    expect(out.code, out.stderr).toBe(0);
    const file = path.join(dir, "log.export");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const keyFile = path.join(dir, "log.pub");
    fs.writeFileSync(keyFile, `${logKey}\n`);

    const good = await runCli(["verify", file, "--key", keyFile, "--witness", witness.verifier]);
    expect(good.code, good.stdout + good.stderr).toBe(0);
    expect(good.stdout).toContain("VERIFIED");
    expect(good.stdout).toMatch(/cosignatures:\s+1 verified/);

    // Flip one byte inside the first entry's base64 payload.
    const text = fs.readFileSync(file, "utf8");
    const at = text.indexOf('{"entry":"') + 20;
    const flipped = text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1);
    fs.writeFileSync(file, flipped);
    const tampered = await runCli(["verify", file, "--key", keyFile]);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toMatch(/entry 0|line 2/);
    console.log(`leasehold verify on a tampered export:\n${tampered.stdout}`);
  });

  it("health reports the ledger head", async () => {
    const h = await fullHealth<{ ledger: { head: { size: number } | null; integrator: { state: string } } }>(hub);
    expect(h.ledger.integrator.state).toBe("running");
    expect(h.ledger.head?.size).toBeGreaterThan(0);
  });

  it("refuses bad CLI use with a usage error", async () => {
    expect((await runCli(["export"])).code).toBe(2);
    expect((await runCli(["verify", "nofile"])).code).toBe(2);
    const r = await runCli(["verify", "/nonexistent", "--key", "x+00000000+AQ=="]);
    expect(r.code).toBe(2);
  });
});
