/**
 * The sandbox-first observe scope, end to end: `leasehold start` on embedded
 * PGlite with its local guest, tokens made with the CLI (`--observe any` and
 * the default), and the official MCP SDK client over Streamable HTTP.
 *
 * With observe any, a run_command the gate rates above read_only runs at once
 * under the observe lease: a write to the workspace fails in the kernel
 * (EROFS), /tmp works and is thrown away, and the ledger's decision/1 says
 * `observe_scope` with lease `observe` — ran under observe, not judged
 * read-only. The default token, a call asking for a write lease, and a
 * network operation are held for a person as before.
 */
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeBase64Strict } from "../../server/trust/ledger/base64";
import { runCli, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { connectClient } from "../mcp/support";
import { waitFor } from "./support";

type Structured = Record<string, unknown> & {
  code?: string;
  status?: string;
  action_id?: string;
  decision?: string;
  sandbox?: { lease: string; reason: string };
  risk?: { level: string };
  result?: { exit: { code: number } | null; output: { stdout: string; stderr: string }; structured: { sandbox?: { lease?: string; workspace?: string } } | null };
};

const structured = (r: unknown): Structured => ((r as CallToolResult).structuredContent ?? {}) as Structured;
const textOf = (r: CallToolResult): string => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");

const ADMIN = "ops";

describe("the observe scope through a real MCP client → hub → local guest [pglite]", () => {
  let hub: RunningHub;
  let observeClient: Client;
  let judgedClient: Client;
  const env = () => ({ LEASEHOLD_DATA_DIR: hub.dataDir });
  const createToken = async (args: string[]): Promise<string> => {
    const created = await runCli(["token", "create", "--expires", "1h", ...args], env());
    expect(created.code, created.stderr).toBe(0);
    const secret = created.stdout.split("\n").find((line) => line.startsWith("lh_"));
    expect(secret).toBeDefined();
    return secret!;
  };
  const callOn = async (client: Client, name: string, args: Record<string, unknown>): Promise<{ s: Structured; text: string }> => {
    const result = (await client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: 60_000 })) as CallToolResult;
    let s = structured(result);
    let text = textOf(result);
    // A result not sealed within the tool's wait comes back "dispatched": wait on, as an agent would.
    for (let i = 0; i < 20 && s.status === "dispatched" && typeof s.action_id === "string"; i += 1) {
      const again = (await client.callTool({ name: "approval_wait", arguments: { action_id: s.action_id } }, CallToolResultSchema, { timeout: 60_000 })) as CallToolResult;
      s = structured(again);
      text = textOf(again);
    }
    return { s, text };
  };

  beforeAll(async () => {
    hub = await startHub({ LEASEHOLD_MCP_APPROVAL_WAIT_S: "0" });
    ({ client: observeClient } = await connectClient(hub.url, await createToken(["--name", "sandbox-first", "--observe", "any"])));
    ({ client: judgedClient } = await connectClient(hub.url, await createToken(["--name", "judged"])));
    await waitFor(
      "host local online",
      async () => {
        const listing = structured(await observeClient.callTool({ name: "hosts_list", arguments: {} }, CallToolResultSchema)) as { hosts?: Array<{ name: string; online: boolean }> };
        return listing.hosts?.find((h) => h.name === "local" && h.online);
      },
      30_000,
      300,
    );
    const admin = await runCli(["admin", "create", "--name", ADMIN, "--role", "owner"], env());
    expect(admin.code, admin.stderr).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await observeClient?.close();
    await judgedClient?.close();
    await hub?.stop();
  }, 30_000);

  it("the CLI refuses read-only together with observe any, and an unknown observe value; token list shows each token's observe scope", async () => {
    const both = await runCli(["token", "create", "--name", "contradiction", "--read-only", "--observe", "any", "--expires", "1h"], env());
    expect(both.code).not.toBe(0);
    expect(both.stderr + both.stdout).toContain("read-only token cannot have observe scope any");
    const odd = await runCli(["token", "create", "--name", "odd", "--observe", "all", "--expires", "1h"], env());
    expect(odd.code).not.toBe(0);
    expect(odd.stderr + odd.stdout).toContain("--observe must be judged");
    const list = await runCli(["token", "list"], env());
    expect(list.stdout).toMatch(/"sandbox-first"\s+read-write; observe=any;/);
    expect(list.stdout).toMatch(/"judged"\s+read-write; observe=judged;/);
    expect(list.stdout).not.toContain("contradiction");
  }, 30_000);

  it("tools/list: run_command says what observe any does and offers lease \"write\" (and nothing else) to opt out", async () => {
    const { tools } = await observeClient.listTools();
    const run = tools.find((t) => t.name === "run_command");
    expect(run?.description).toContain("observe scope is any");
    expect((run?.inputSchema.properties as Record<string, { enum?: string[] }>)["lease"]?.enum).toEqual(["write"]);
  }, 30_000);

  it("observe any: `touch x` (rated above read_only) runs at once without approval and fails with EROFS; /tmp works; the result and the ledger say observe_scope, not judged read-only", async () => {
    const { s: touched, text } = await callOn(observeClient, "run_command", { host: "local", command: "touch x" });
    expect(touched.status, JSON.stringify(touched)).toBe("completed");
    expect(touched.decision).toBe("observe_scope");
    expect(touched.risk?.level).not.toBe("read_only");
    expect(touched.sandbox).toEqual({ lease: "observe", reason: "observe_scope" });
    expect(touched.result?.exit?.code).not.toBe(0);
    expect(touched.result?.output.stderr).toContain("Read-only file system");
    expect(touched.result?.structured?.sandbox).toMatchObject({ lease: "observe", workspace: "read-only" });
    expect(text).toContain("ran under observe, not judged read-only");

    const { s: tmp } = await callOn(observeClient, "run_command", { host: "local", command: "echo hi > /tmp/y && cat /tmp/y" });
    expect(tmp.status, JSON.stringify(tmp)).toBe("completed");
    expect(tmp.result?.exit?.code).toBe(0);
    expect(tmp.result?.output.stdout).toBe("hi\n");

    // The ledger, from the offline export: the decision of the touch names the path and the lease.
    const out = path.join(tempDir("lh-observe-e2e-"), "ledger.jsonl");
    const exported = await runCli(["export", "--out", out], env());
    expect(exported.code, exported.stderr).toBe(0);
    const entries = fs
      .readFileSync(out, "utf8")
      .split("\n")
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as { kind: string; entry?: string })
      .filter((l) => l.kind === "entry" && typeof l.entry === "string")
      .map((l) => JSON.parse(new TextDecoder().decode(decodeBase64Strict(l.entry!)!)) as { type: string; action_id: string | null; data: Record<string, unknown> });
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
    const ofTouch = entries.filter((e) => e.action_id === touched.action_id);
    expect(ofTouch.map((e) => e.type)).toEqual(expect.arrayContaining(["decision/1", "dispatch/1", "evidence/1"]));
    expect(ofTouch.find((e) => e.type === "decision/1")?.data).toMatchObject({ outcome: "observe_scope", lease: "observe", risk: touched.risk?.level });
    expect(ofTouch.some((e) => e.type === "approval/1")).toBe(false);
  }, 90_000);

  it("the same call on a default token is held; on the observe-any token with lease \"write\" it is held too", async () => {
    const { s: judged } = await callOn(judgedClient, "run_command", { host: "local", command: "touch x" });
    expect(judged.code, JSON.stringify(judged)).toBe("APPROVAL_PENDING");
    const { s: write } = await callOn(observeClient, "run_command", { host: "local", command: "touch x", lease: "write" });
    expect(write.code, JSON.stringify(write)).toBe("APPROVAL_PENDING");
  }, 60_000);

  it("hostile: arguments cannot turn observe any on (a default token passing observe/lease values is refused, not run)", async () => {
    for (const extra of [{ observe: "any" }, { lease: "observe" }]) {
      const { s } = await callOn(judgedClient, "run_command", { host: "local", command: "touch x", ...extra });
      expect(s.code, JSON.stringify(s)).toBe("INVALID_ARGUMENT");
    }
  }, 60_000);

  it("hostile: an observe-any token cannot get run_command_net run without a person", async () => {
    const cli = async (args: string[]) => {
      const r = await runCli([...args, "--as", ADMIN], env());
      expect(r.code, r.stderr + r.stdout).toBe(0);
    };
    await cli(["capability", "enable", "egress-shell"]);
    await cli(["capability", "egress", "egress-shell", "--set", "127.0.0.1/32:9"]);
    // A new session sees the newly enabled tool.
    const { client } = await connectClient(hub.url, await createToken(["--name", "sandbox-first-net", "--observe", "any"]));
    try {
      const net = (await client.listTools()).tools.find((t) => t.name === "run_command_net");
      expect(net, "run_command_net is listed once egress-shell is enabled").toBeDefined();
      expect(net?.inputSchema.properties ?? {}).not.toHaveProperty("lease");
      const { s } = await callOn(client, "run_command_net", { host: "local", command: "touch x" });
      expect(s.status, JSON.stringify(s)).not.toBe("completed");
      expect(s.code, JSON.stringify(s)).toBe("APPROVAL_PENDING");
    } finally {
      await client.close();
    }
  }, 60_000);
});
