/**
 * Through MCP, on `leasehold start` (embedded PGlite, its local guest as
 * host "local", a small 8 MiB / 256-inode workspace in the ceiling written
 * before the first start): what one token's approved job does to the
 * workspace never denies another token's apk_inspect.
 *
 * - a write-capable token's approved command moves `.leasehold-jobs` aside
 *   and plants a symlink to /etc in its place: a read-only token's
 *   apk_inspect still completes;
 * - the same token fills the workspace: its fs_write is WORKSPACE_FULL with
 *   the workspace's size and use, never INTERNAL, and the other token's
 *   apk_inspect still completes.
 */
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apkFixtures } from "../../agent-guest/workers/apk-static/test/fixtures";
import { defaultCeiling, localGuestPaths } from "../../server/hosts/local-guest";
import { runCli, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { connectClient, createTokenViaCli } from "../mcp/support";
import { waitFor } from "../guest/support";

type Structured = Record<string, unknown> & {
  code?: string;
  message?: string;
  status?: string;
  action_id?: string;
  approval_id?: string;
  details?: Record<string, unknown>;
  result?: { exit?: { code: number } | null; structured?: { artifact?: { sha256: string; bytes: number } } | null };
};
const structured = (r: unknown): Structured => ((r as CallToolResult).structuredContent ?? {}) as Structured;

describe("through MCP: one token's job cannot deny apk_inspect to another; a full workspace is WORKSPACE_FULL [pglite]", () => {
  let hub: RunningHub | undefined;
  let writer: Client | undefined;
  let reader: Client | undefined;
  let apk: string;
  const env = () => ({ LEASEHOLD_DATA_DIR: hub!.dataDir });

  beforeAll(async () => {
    apk = fs.readFileSync((await apkFixtures()).minimal).toString("base64");
    const dataDir = path.join(tempDir("lh-guest-paths-mcp-"), "data");
    fs.mkdirSync(dataDir, { mode: 0o700 });
    const paths = localGuestPaths(dataDir);
    fs.writeFileSync(paths.ceiling, JSON.stringify({ ...defaultCeiling(paths.workspace), workspace_max_bytes: 8 * 1024 * 1024, workspace_max_inodes: 256 }), { mode: 0o600 });
    // The admin approves through the CLI (passkeys are a browser step): cleaning up the fill is rated high.
    hub = await startHub({ LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_MCP_APPROVAL_WAIT_S: "0", LEASEHOLD_MCP_RATE_PER_MINUTE: "100000", LEASEHOLD_PASSKEY_APPROVAL_RISK: "off" }, 120_000);
    const address = { url: hub.url, port: hub.port, dataDir: hub.dataDir };
    const admin = await runCli(["admin", "create", "--name", "ops"], env());
    expect(admin.code, admin.stderr).toBe(0);
    ({ client: writer } = await connectClient(hub.url, (await createTokenViaCli(address, ["--name", "writer", "--expires", "1h"])).secret));
    ({ client: reader } = await connectClient(hub.url, (await createTokenViaCli(address, ["--name", "reader", "--read-only", "--expires", "1h"])).secret));
    await waitFor(
      "apk-static ready on host local",
      async () => {
        const listing = structured(await reader!.callTool({ name: "list_capabilities", arguments: {} }, CallToolResultSchema)) as { capabilities?: Array<{ id: string; readiness?: { state: string } }> };
        return listing.capabilities?.find((c) => c.id === "apk-static")?.readiness?.state === "ready";
      },
      90_000,
      500,
    );
  }, 240_000);

  afterAll(async () => {
    await writer?.close();
    await reader?.close();
    await hub?.stop();
  }, 60_000);

  const call = async (client: Client, name: string, args: Record<string, unknown>) => structured(await client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: 120_000 }));

  /** A mutating call of the writer: held, approved by the admin through the CLI, then its result. */
  const approved = async (name: string, args: Record<string, unknown>): Promise<Structured> => {
    const held = await call(writer!, name, args);
    expect(held.code, JSON.stringify(held)).toBe("APPROVAL_PENDING");
    const approve = await runCli(["approvals", "approve", held.approval_id!, "--as", "ops"], env());
    expect(approve.code, approve.stderr + approve.stdout).toBe(0);
    return call(writer!, "approval_wait", { action_id: held.action_id });
  };

  const inspectCompletes = async () => {
    const s = await call(reader!, "apk_inspect", { host: "local", artifact: { base64: apk } });
    expect(s.status, JSON.stringify(s).slice(0, 1500)).toBe("completed");
    expect(s.result?.structured?.artifact?.bytes).toBe(Buffer.from(apk, "base64").length);
  };

  it("a write-capable token moves .leasehold-jobs aside and plants a symlink to /etc: the read-only token's apk_inspect still completes", async () => {
    await inspectCompletes();
    const s = await approved("run_command", { host: "local", command: "mkdir -p .leasehold-jobs && mv .leasehold-jobs moved-aside && ln -s /etc .leasehold-jobs && readlink .leasehold-jobs" });
    expect(s.status, JSON.stringify(s).slice(0, 1500)).toBe("completed");
    expect(s.result?.exit?.code).toBe(0);
    await inspectCompletes();
  }, 180_000);

  it("the write-capable token fills the workspace: its fs_write is WORKSPACE_FULL with the size and use, and the other token's apk_inspect still completes", async () => {
    const fill = await approved("run_command", { host: "local", command: "for b in 1048576:64 65536:64 4096:256 1024:256; do dd if=/dev/zero of=fill-${b%:*} bs=${b%:*} count=${b#*:} 2>/dev/null; sync; done; df -k ." });
    expect(fill.status, JSON.stringify(fill).slice(0, 1500)).toBe("completed");
    const write = await approved("fs_write", { host: "local", path: "note.txt", content: "x".repeat(64 * 1024) });
    const text = JSON.stringify(write);
    expect(text).toContain("WORKSPACE_FULL");
    expect(text).not.toContain("guest failure before launch");
    expect(text).toMatch(/bytes free/);
    await inspectCompletes();
    const emptied = await approved("run_command", { host: "local", command: "rm -f fill-*" });
    expect(emptied.result?.exit?.code).toBe(0);
  }, 180_000);
});
