/**
 * End to end: the official SDK's MCP client, holding a READ-ONLY
 * token, triages real APKs (built by Debian's aapt/zipalign/apksigner in
 * agent-guest/workers/apk-static/test/fixtures.ts) on a real hub
 * (`leasehold start`, embedded PGlite, its local guest as host "local"):
 *
 * - a large file goes up with `artifact_upload` in chunks, interrupted and
 *   resumed from the status the hub reports; `apk_inspect {sha256}` then runs
 *   the content-addressed worker in a no-network sandbox and returns facts
 *   with their evidence states, and the signed evidence names the input's
 *   SHA-256 and the verified worker digest — the digest the hub pinned and
 *   the host reported;
 * - a small file goes inline (`{base64}`) to `apk_preflight`;
 * - a file that is not an APK is INVALID_ARGUMENT with the worker's reason;
 * - another token cannot name this token's upload;
 * - a worker bundle changed in the guest's store is refused with
 *   WORKER_DIGEST_MISMATCH before anything runs.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apkFixtures, type FixtureName } from "../../agent-guest/workers/apk-static/test/fixtures";
import type { DatabaseKind } from "../../server/db";
import { hubDatabaseFor, testPostgresUrl } from "../support/databases";
import { startHub, type RunningHub } from "../support/hub-process";
import { connectClient, createTokenViaCli } from "../mcp/support";
import { waitFor } from "../guest/support";

type Fact = { id: string; value: unknown; state: "observed" | "derived" | "hypothesized"; source: string; from?: string[] };
type Check = { id: string; status: string; state: string; detail: string };
type Structured = Record<string, unknown> & {
  code?: string;
  message?: string;
  status?: string;
  action_id?: string;
  decision?: string;
  risk?: unknown;
  result?: { structured?: { facts?: Fact[]; checks?: Check[]; artifact?: { sha256: string; bytes: number }; limitations?: string[] } | null };
  evidence?: { digest: string; envelope?: Record<string, unknown> };
  receipt?: unknown;
};
const structured = (r: unknown): Structured => ((r as CallToolResult).structuredContent ?? {}) as Structured;
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const fact = (s: Structured, id: string) => s.result?.structured?.facts?.find((f) => f.id === id);

describe.each(["pglite", "postgres"] as DatabaseKind[])("apk-static through MCP: uploads, content-addressed worker, facts with evidence states [%s]", (kind) => {
  if (kind === "postgres" && !testPostgresUrl()) {
    it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
      throw new Error("TEST_POSTGRES_URL is not set: run `npm test`");
    });
    return;
  }
  let hub: RunningHub | undefined;
  let drop: (() => Promise<void>) | undefined;
  let reader: Client | undefined;
  let other: Client | undefined;
  let apks: Record<FixtureName, string>;
  let pinned = "";

  beforeAll(async () => {
    apks = await apkFixtures();
    const database = await hubDatabaseFor(kind);
    drop = database.drop;
    hub = await startHub({ DATABASE_URL: database.url, LEASEHOLD_MCP_APPROVAL_WAIT_S: "5", LEASEHOLD_MCP_RATE_PER_MINUTE: "100000" }, 120_000);
    const address = { url: hub.url, port: hub.port, dataDir: hub.dataDir, ...(database.url === undefined ? {} : { databaseUrl: database.url }) };
    const triage = await createTokenViaCli(address, ["--name", "apk-triage", "--read-only", "--expires", "1h"]);
    const second = await createTokenViaCli(address, ["--name", "apk-other", "--read-only", "--expires", "1h"]);
    ({ client: reader } = await connectClient(hub.url, triage.secret));
    ({ client: other } = await connectClient(hub.url, second.secret));
    // Ready only once the host reports the worker's digest and the hub's pin matches it.
    pinned = await waitFor(
      "apk-static ready on host local",
      async () => {
        const listing = structured(await reader!.callTool({ name: "list_capabilities", arguments: {} }, CallToolResultSchema)) as {
          capabilities?: Array<{ id: string; readiness?: { state: string }; worker_digest?: string | null }>;
        };
        const apk = listing.capabilities?.find((c) => c.id === "apk-static");
        return apk?.readiness?.state === "ready" ? (apk.worker_digest ?? "pinned digest not listed") : undefined;
      },
      90_000,
      500,
    );
  }, 240_000);

  afterAll(async () => {
    await reader?.close();
    await other?.close();
    await hub?.stop();
    await drop?.();
  }, 60_000);

  const call = async (client: Client, name: string, args: Record<string, unknown>) => {
    let s = structured(await client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: 120_000 }));
    for (let i = 0; i < 20 && s.status === "dispatched" && typeof s.action_id === "string"; i += 1) {
      s = structured(await client.callTool({ name: "approval_wait", arguments: { action_id: s.action_id } }, CallToolResultSchema, { timeout: 120_000 }));
    }
    return s;
  };

  /** Uploads `bytes` in `chunk`-sized pieces; after the first piece the client "loses" its place and asks the hub. */
  const upload = async (client: Client, bytes: Buffer, chunk: number) => {
    const whole = { sha256: sha256(bytes), bytes: bytes.length };
    const first = bytes.subarray(0, chunk);
    const r1 = structured(await client.callTool({ name: "artifact_upload", arguments: { ...whole, offset: 0, chunk: first.toString("base64"), chunk_sha256: sha256(first) } }, CallToolResultSchema));
    expect(r1).toMatchObject({ received: first.length, complete: false });
    const status = structured(await client.callTool({ name: "artifact_upload", arguments: whole }, CallToolResultSchema)) as { next_offset?: number; complete?: boolean };
    expect(status).toMatchObject({ next_offset: first.length, complete: false });
    let offset = status.next_offset ?? 0;
    let last: Structured = {};
    while (offset < bytes.length) {
      const piece = bytes.subarray(offset, offset + chunk);
      last = structured(await client.callTool({ name: "artifact_upload", arguments: { ...whole, offset, chunk: piece.toString("base64"), chunk_sha256: sha256(piece) } }, CallToolResultSchema));
      offset += piece.length;
    }
    expect(last).toMatchObject({ complete: true });
    return whole;
  };

  it("a read-only token sees the triage tools; an upload resumed mid-way feeds apk_inspect, whose facts carry states and whose evidence names the input and the pinned worker", async () => {
    const tools = (await reader!.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(["artifact_upload", "apk_inspect", "apk_preflight"]));
    expect(tools).not.toContain("run_command");
    expect(pinned).toMatch(/^sha256:[0-9a-f]{64}$/);

    const bytes = fs.readFileSync(apks.dangerous);
    const ref = await upload(reader!, bytes, Math.ceil(bytes.length / 3));
    const s = await call(reader!, "apk_inspect", { host: "local", artifact: { sha256: ref.sha256 } });
    expect(s.status, JSON.stringify(s).slice(0, 2000)).toBe("completed");
    expect(s.decision).toBe("auto_allow");
    expect((s.risk as { level?: string }).level).toBe("read_only");
    expect(s.result?.structured?.artifact).toEqual(ref);
    expect(fact(s, "package.name")).toMatchObject({ value: "org.leasehold.fixture.dangerous", state: "observed" });
    expect(fact(s, "permissions.dangerous")).toMatchObject({ state: "derived", from: ["permissions.requested"] });
    expect(fact(s, "permissions.dangerous")?.value).toEqual(expect.arrayContaining(["android.permission.CAMERA", "android.permission.READ_CONTACTS"]));
    expect(fact(s, "components.exported_without_permission")?.state).toBe("derived");
    expect(fact(s, "components.exported_without_permission")?.value).toEqual(expect.arrayContaining(["component.provider:org.leasehold.fixture.dangerous.OpenProvider"]));
    expect(fact(s, "application.debuggable")).toMatchObject({ value: true, state: "observed" });
    expect(fact(s, "signing.schemes")?.value).toEqual(["v1", "v2", "v3"]);
    for (const f of s.result?.structured?.facts ?? []) expect(["observed", "derived", "hypothesized"]).toContain(f.state);
    expect(JSON.stringify(s.result?.structured)).not.toMatch(/confidence/i);

    // The evidence summary is the signed envelope's (server/actions/completion.ts): the verified worker and the input it read.
    expect(s.evidence).toMatchObject({ worker_digest: pinned, inputs: [{ name: "input", sha256: ref.sha256, bytes: ref.bytes }] });
    expect(s.receipt ?? null).not.toBeNull();
    const listing = structured(await reader!.callTool({ name: "hosts_list", arguments: {} }, CallToolResultSchema)) as { hosts?: Array<{ name: string; capabilities: Array<{ id: string; state: string; worker_digest?: string | null }> }> };
    expect(listing.hosts?.find((h) => h.name === "local")?.capabilities.find((c) => c.id === "apk-static")).toMatchObject({ state: "ready", worker_digest: pinned });
    // For the record (the closing note): one whole apk_inspect result with its evidence states.
    if (kind === "pglite") console.log(`apk_inspect (dangerous fixture) →\n${JSON.stringify({ status: s.status, decision: s.decision, result: s.result?.structured, evidence: s.evidence }, null, 1)}`);
  });

  it("apk_preflight with the file inline: REQUIRE_SECURE_ENV=1 fails the preflight, as a derived check; misaligned native libraries fail the 16 KB check", async () => {
    const secure = await call(reader!, "apk_preflight", { host: "local", artifact: { base64: fs.readFileSync(apks.secure_env).toString("base64") } });
    expect(secure.status, JSON.stringify(secure).slice(0, 2000)).toBe("completed");
    expect(fact(secure, "manifest.require_secure_env")).toMatchObject({ value: true, state: "observed" });
    expect(secure.result?.structured?.checks?.find((c) => c.id === "manifest.require_secure_env")).toMatchObject({ status: "fail", state: "derived" });

    const misaligned = await call(reader!, "apk_preflight", { host: "local", artifact: { base64: fs.readFileSync(apks.native_misaligned).toString("base64") } });
    expect(misaligned.status).toBe("completed");
    expect(misaligned.result?.structured?.checks?.find((c) => c.id === "native.alignment_16k")?.status).toBe("fail");
    const aligned = await call(reader!, "apk_preflight", { host: "local", artifact: { base64: fs.readFileSync(apks.native_aligned).toString("base64") } });
    expect(aligned.result?.structured?.checks?.find((c) => c.id === "native.alignment_16k")?.status).toBe("pass");
  });

  it("a file that is not an APK is INVALID_ARGUMENT with the worker's reason; another token cannot name this token's upload (NOT_FOUND)", async () => {
    const notApk = Buffer.from("this is a text file, not a ZIP archive\n".repeat(20));
    const refused = structured(await reader!.callTool({ name: "apk_inspect", arguments: { host: "local", artifact: { base64: notApk.toString("base64") } } }, CallToolResultSchema, { timeout: 120_000 }));
    const text = JSON.stringify(refused);
    expect(text).toContain("INVALID_ARGUMENT");
    expect(text).toMatch(/ZIP/);

    const mine = fs.readFileSync(apks.v1_only); // not used inline by this token elsewhere: its upload starts empty
    const ref = await upload(reader!, mine, Math.ceil(mine.length / 2));
    const theirs = structured(await other!.callTool({ name: "apk_inspect", arguments: { host: "local", artifact: { sha256: ref.sha256 } } }, CallToolResultSchema));
    expect(theirs.code).toBe("NOT_FOUND");
  });

  it("a worker bundle changed in the guest's store is refused with WORKER_DIGEST_MISMATCH before anything runs; restored, it runs again", async () => {
    const store = path.join(hub!.dataDir, "guest", "workers");
    const entry = path.join(store, `sha256-${pinned.slice(7)}`, "worker.mjs");
    const original = fs.readFileSync(entry);
    const mode = fs.statSync(entry).mode & 0o777;
    const apk = fs.readFileSync(apks.minimal).toString("base64");
    try {
      fs.chmodSync(entry, 0o644);
      fs.writeFileSync(entry, Buffer.concat([original, Buffer.from("\n// changed after installation\n")]));
      fs.chmodSync(entry, mode);
      const s = await call(reader!, "apk_inspect", { host: "local", artifact: { base64: apk } });
      expect(JSON.stringify(s)).toContain("WORKER_DIGEST_MISMATCH");
      expect(s.result?.structured ?? null).toBeNull();
    } finally {
      fs.chmodSync(entry, 0o644);
      fs.writeFileSync(entry, original);
      fs.chmodSync(entry, mode);
    }
    const again = await call(reader!, "apk_inspect", { host: "local", artifact: { base64: apk } });
    expect(again.status).toBe("completed");
    expect(fact(again, "package.name")?.state).toBe("observed");
  });
});
