/**
 * docs/verify.md's recipe, exactly as written there (the Python block is
 * extracted from the page, so the page and this test cannot drift), run
 * against a real result: `leasehold start` on PGlite with its local guest,
 * a token made with the CLI, the official MCP SDK client calling run_command
 * and host_key. The recipe uses Python's `cryptography` and nothing of the
 * hub. Tampered inputs must make it fail. The key's HTTP route serves the
 * same record to a bearer token, and only to one.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { connectClient, createTokenViaCli } from "../mcp/support";
import { waitFor } from "./support";

type Json = Record<string, unknown>;

/** The first ```python block of docs/verify.md. */
function recipeFromDocs(): string {
  const page = fs.readFileSync(path.join(ROOT, "docs", "verify.md"), "utf8");
  const match = /```python\n([\s\S]*?)```/.exec(page);
  if (match?.[1] === undefined) throw new Error("docs/verify.md has no python block");
  return match[1];
}

describe("docs/verify.md: a result's evidence verified with Python's cryptography alone [pglite]", () => {
  let hub: RunningHub;
  let client: Client;
  let secret: string;
  let dir: string;
  let script: string;
  let result: Json;
  let key: Json;

  const call = async (name: string, args: Json): Promise<Json> =>
    ((await client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: 60_000 })) as CallToolResult).structuredContent as Json;

  /** Runs the recipe on these documents; exit status and output. */
  function verify(resultDoc: unknown, keyDoc: unknown): { code: number | null; out: string } {
    const r = path.join(dir, "result.json");
    const k = path.join(dir, "key.json");
    fs.writeFileSync(r, JSON.stringify(resultDoc));
    fs.writeFileSync(k, JSON.stringify(keyDoc));
    const run = spawnSync("python3", [script, r, k], { encoding: "utf8", timeout: 30_000 });
    return { code: run.status, out: `${run.stdout}${run.stderr}` };
  }

  beforeAll(async () => {
    hub = await startHub({ LEASEHOLD_MCP_APPROVAL_WAIT_S: "0" });
    ({ secret } = await createTokenViaCli(hub, ["--name", "verifier", "--expires", "1h"]));
    ({ client } = await connectClient(hub.url, secret));
    await waitFor("host local online", async () => ((await call("hosts_list", {})).hosts as Array<{ name: string; online: boolean }>).find((h) => h.name === "local" && h.online), 60_000, 300);
    dir = tempDir("lh-verify-");
    script = path.join(dir, "verify.py");
    fs.writeFileSync(script, recipeFromDocs());
    // One completed result and its host's key, which every case checks (made here: the cases run in any order).
    result = await call("run_command", { host: "local", command: "echo verify-me; echo to-stderr >&2" });
    key = await call("host_key", { host: result.host });
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await hub?.stop();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it("the recipe verifies a completed run_command result against the key host_key serves and the ledger entry that sealed it", async () => {
    expect(result.status, JSON.stringify(result)).toBe("completed");
    const evidence = result.evidence as { key_id: string; signed?: { envelope: Json; signature: Json } };
    expect(evidence.signed?.signature).toMatchObject({ alg: "Ed25519", key_id: evidence.key_id });
    expect(key).toMatchObject({ host: "local", key_id: evidence.key_id, removed: false, ledger: { event: "enrolled" } });
    const verdict = verify(result, key);
    expect(verdict.out).toMatch(new RegExp(`^verified: action ${String(result.action_id)} on host local signed by ${evidence.key_id}, evidence sha256:[0-9a-f]{64}\\n$`));
    expect(verdict.code).toBe(0);
  }, 90_000);

  it("the recipe refuses a changed envelope, a changed output, another key, and a key the ledger did not seal", async () => {
    const clone = <T>(v: T): T => structuredClone(v);
    const signed = (r: Json) => (r.evidence as { signed: { envelope: Json & { exit: { code: number } } } }).signed;

    const exitChanged = clone(result);
    signed(exitChanged).envelope.exit.code = 1;
    expect(verify(exitChanged, key)).toMatchObject({ code: 1, out: expect.stringMatching(/InvalidSignature/) });

    const outputChanged = clone(result);
    (outputChanged.result as { output: { stdout: string } }).output.stdout = "verify-mE\n";
    expect(verify(outputChanged, key)).toMatchObject({ code: 1, out: expect.stringMatching(/stdout is not what the host signed/) });

    const otherAction = clone(result);
    otherAction.action_id = "00000000-0000-4000-8000-000000000000";
    expect(verify(otherAction, key)).toMatchObject({ code: 1, out: expect.stringMatching(/another action's/) });

    // A PEM the ledger never sealed (a fresh key), with its own key id: the ledger check refuses it first.
    const other = spawnSync("python3", ["-c", "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey as K\nfrom cryptography.hazmat.primitives import serialization as s\nprint(K.generate().public_key().public_bytes(s.Encoding.PEM, s.PublicFormat.SubjectPublicKeyInfo).decode(), end='')"], { encoding: "utf8" });
    expect(other.status, other.stderr).toBe(0);
    expect(verify(result, { ...key, public_key_pem: other.stdout })).toMatchObject({ code: 1, out: expect.stringMatching(/the PEM is not the one the ledger sealed/) });
    // The entry of another kind, or of another host.
    const entry = JSON.parse((key.ledger as { entry: string }).entry) as { type: string; data: Json };
    expect(verify(result, { ...key, ledger: { ...(key.ledger as Json), entry: JSON.stringify({ ...entry, data: { ...entry.data, host_id: "another" } }) } })).toMatchObject({ code: 1, out: expect.stringMatching(/another host's/) });
    expect(verify(result, { ...key, ledger: { ...(key.ledger as Json), entry: JSON.stringify({ ...entry, type: "token/1" }) } })).toMatchObject({ code: 1, out: expect.stringMatching(/not a host\/1 enrolment entry/) });
  }, 60_000);

  it("GET /api/hosts/<id or name>/key serves the same record to a bearer token; no token → 401, a host outside a --hosts scope → 404 like an unknown one", async () => {
    const byId = await fetch(`${hub.url}/api/hosts/${String(key.host_id)}/key`, { headers: { authorization: `Bearer ${secret}` } });
    expect(byId.status).toBe(200);
    expect(await byId.json()).toEqual(key);
    const byName = await fetch(`${hub.url}/api/hosts/local/key`, { headers: { authorization: `Bearer ${secret}` } });
    expect(await byName.json()).toEqual(key);
    const anonymous = await fetch(`${hub.url}/api/hosts/local/key`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ code: "UNAUTHENTICATED" });
    const bad = await fetch(`${hub.url}/api/hosts/local/key`, { headers: { authorization: "Bearer lh_not-a-token" } });
    expect(bad.status).toBe(401);
    const scoped = await createTokenViaCli(hub, ["--name", "elsewhere", "--hosts", "web-9", "--expires", "1h"]);
    const outside = await fetch(`${hub.url}/api/hosts/local/key`, { headers: { authorization: `Bearer ${scoped.secret}` } });
    expect(outside.status).toBe(404);
    const unknown = await fetch(`${hub.url}/api/hosts/no-such-host/key`, { headers: { authorization: `Bearer ${secret}` } });
    expect(unknown.status).toBe(404);
    expect(await outside.json()).toMatchObject({ code: "NOT_FOUND" });
  }, 60_000);
});
