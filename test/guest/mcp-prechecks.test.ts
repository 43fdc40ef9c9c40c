/**
 * Pre-checks and the agent's reason end to end (docs/design.md#prechecks,
 * #agent-reason): `leasehold start` on embedded PGlite with its local
 * guest, and the official MCP SDK client over Streamable HTTP.
 *
 * A run_command whose `cwd` does not exist in the workspace is refused at
 * once, INVALID_ARGUMENT naming `cwd`, and nothing is held for a person —
 * the hub knows from the directories the idle guest reported. After an
 * approved job creates the directory, the same cwd is not refused (held for
 * a person as usual), and the agent's `reason` is in `leasehold approvals
 * show`. A reason with a control character is refused naming `reason`.
 */
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { connectClient } from "../mcp/support";
import { waitFor } from "./support";

type Structured = Record<string, unknown> & { code?: string; message?: string; status?: string; action_id?: string; details?: Record<string, unknown> };
const structured = (r: unknown): Structured => ((r as CallToolResult).structuredContent ?? {}) as Structured;

const ADMIN = "ops";

describe("pre-checks through a real MCP client → hub → local guest [pglite]", () => {
  let hub: RunningHub;
  let client: Client;
  const work = tempDir();
  const env = () => ({ LEASEHOLD_DATA_DIR: hub.dataDir });
  const call = async (name: string, args: Record<string, unknown>): Promise<Structured> => structured(await client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: 60_000 }));
  const pendingListing = async (): Promise<string> => {
    const listed = await runCli(["approvals", "list"], env());
    expect(listed.code, listed.stderr).toBe(0);
    return listed.stdout;
  };

  beforeAll(async () => {
    const dataDir = path.join(work, "data");
    fs.mkdirSync(dataDir, { mode: 0o700 });
    hub = await startHub({ LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_MCP_APPROVAL_WAIT_S: "0", LEASEHOLD_PASSKEY_APPROVAL_RISK: "critical" });
    const created = await runCli(["token", "create", "--expires", "1h", "--name", "builder"], env());
    expect(created.code, created.stderr).toBe(0);
    ({ client } = await connectClient(hub.url, created.stdout.split("\n").find((line) => line.startsWith("lh_")) ?? ""));
    const admin = await runCli(["admin", "create", "--name", ADMIN, "--role", "owner"], env());
    expect(admin.code, admin.stderr).toBe(0);
    await waitFor(
      "host local online",
      async () => (structured(await client.callTool({ name: "hosts_list", arguments: {} }, CallToolResultSchema)).hosts as Array<{ name: string; online: boolean }> | undefined)?.find((h) => h.name === "local" && h.online),
      60_000,
      300,
    );
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await hub?.stop();
  });

  // One case, in order: the refusal needs a fresh workspace listing, which the mkdir job below changes.
  it("a run_command whose cwd is missing from the workspace is INVALID_ARGUMENT naming cwd at once and no approval is created; after an approved job makes the directory the same cwd is held for a person, the agent's reason in approvals show; a reason with a control character is refused naming reason", async () => {
    const started = Date.now();
    const refused = await call("run_command", { host: "local", command: "chmod -f 600 lh-nowhere", cwd: "no/such/dir", reason: "tidy the build output" });
    expect(refused.code, JSON.stringify(refused)).toBe("INVALID_ARGUMENT");
    expect(refused.message).toMatch(/^cwd: "no\/such\/dir" is not a directory of host local's workspace/);
    expect(refused.details).toMatchObject({ field: "cwd", cwd: "no/such/dir" });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await pendingListing()).not.toContain("no/such/dir");

    const mkdir = await call("run_command", { host: "local", command: "mkdir -p no/such/dir", reason: "make the output directory" });
    expect(mkdir.code).toBe("APPROVAL_PENDING");
    const approved = await runCli(["approvals", "approve", String(mkdir.action_id), "--as", ADMIN], env());
    expect(approved.code, approved.stderr).toBe(0);
    let done: Structured = {};
    await waitFor(
      "the mkdir job completed",
      async () => {
        done = await call("approval_wait", { action_id: String(mkdir.action_id) });
        return done.status === "completed";
      },
      60_000,
      200,
    );
    const held = await call("run_command", { host: "local", command: "chmod -f 600 lh-somewhere", cwd: "no/such/dir", reason: "tidy the build output \u200b" });
    expect(held.code, JSON.stringify(held)).toBe("APPROVAL_PENDING");
    const shown = await runCli(["approvals", "show", String(held.action_id)], env());
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("  agent's reason: tidy the build output ⟨U+200B⟩");
    expect(shown.stdout).toContain("cwd: no/such/dir");

    const bad = await call("run_command", { host: "local", command: "chmod -f 600 lh-x", reason: "first line\nsecond line" });
    expect(bad).toMatchObject({ code: "INVALID_ARGUMENT", details: { field: "reason" } });
  });
});
