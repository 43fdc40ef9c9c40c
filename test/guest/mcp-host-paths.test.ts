/**
 * Host paths end to end (docs/design.md#host-paths): `leasehold start` on
 * embedded PGlite with its local guest, whose ceiling file lists a log
 * directory read-only and an app directory read-write (temporary
 * directories), and the official MCP SDK client over Streamable HTTP.
 *
 * The agent reads a host log through a `ro` label at once; writes under the
 * `rw` label only after a person approves (risk medium, naming the host
 * path), and the host file changes; the guest's snapshot of the label shows
 * up in hosts_list and `leasehold snapshot list`; a `rollback` to it is
 * rated high, held, approved, and puts the host file back byte for byte.
 *
 * Approvals here go through the CLI with passkeys required from `critical`
 * up (LEASEHOLD_PASSKEY_APPROVAL_RISK): this test is about the host paths,
 * not who signs; a high approval's passkey is tested with the passkeys.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultCeiling } from "../../server/hosts/local-guest";
import { runCli, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { connectClient } from "../mcp/support";
import { waitFor } from "./support";

type Structured = Record<string, unknown> & {
  code?: string;
  message?: string;
  status?: string;
  action_id?: string;
  decision?: string;
  risk?: { level: string; reasons: Array<{ rule: string; message: string }> };
  result?: { state: string; exit: { code: number } | null; output: { stdout: string; stderr: string } };
  evidence?: { mounts?: Array<{ label: string; mode: string; tree_before?: string; tree_after?: string; snapshot_id?: string }> };
};
type HostListing = { hosts?: Array<{ name: string; online: boolean; host_paths: Array<{ label: string; path: string; mode: string }> | null; snapshots: Array<{ id: string; label: string; tree_digest: string }> }> };

const structured = (r: unknown): Structured => ((r as CallToolResult).structuredContent ?? {}) as Structured;
const sha256 = (file: string): string => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

const ADMIN = "ops";

describe("host paths through a real MCP client → hub → local guest [pglite]", () => {
  let hub: RunningHub;
  let client: Client;
  const work = tempDir();
  const logs = path.join(work, "var-log");
  const app = path.join(work, "srv-app");
  const env = () => ({ LEASEHOLD_DATA_DIR: hub.dataDir });
  const call = async (name: string, args: Record<string, unknown>): Promise<Structured> => {
    let s = structured(await client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: 60_000 }));
    // A result not sealed within the tool's wait comes back "dispatched": wait on, as an agent would.
    for (let i = 0; i < 20 && s.status === "dispatched" && typeof s.action_id === "string"; i += 1) {
      s = structured(await client.callTool({ name: "approval_wait", arguments: { action_id: s.action_id } }, CallToolResultSchema, { timeout: 60_000 }));
    }
    return s;
  };
  const approve = async (actionId: string): Promise<void> => {
    const approved = await runCli(["approvals", "approve", actionId, "--as", ADMIN], env());
    expect(approved.code, approved.stderr).toBe(0);
  };
  const hostsList = async (): Promise<HostListing> => structured(await client.callTool({ name: "hosts_list", arguments: {} }, CallToolResultSchema)) as HostListing;

  beforeAll(async () => {
    fs.mkdirSync(logs, { recursive: true, mode: 0o755 });
    fs.mkdirSync(app, { recursive: true, mode: 0o755 });
    fs.writeFileSync(path.join(logs, "app.log"), "GET /health 200\n");
    fs.writeFileSync(path.join(app, "index.html"), "<h1>v1</h1>\n");
    fs.chownSync(app, 1000, 1000);
    fs.chownSync(path.join(app, "index.html"), 1000, 1000);
    const dataDir = path.join(work, "data");
    fs.mkdirSync(dataDir, { mode: 0o700 });
    const ceiling = {
      ...defaultCeiling(path.join(dataDir, "workspace")),
      host_paths: [
        { label: "logs", path: logs, mode: "ro" },
        { label: "app", path: app, mode: "rw", owner: { uid: 1000, gid: 1000 }, max_bytes: 16 << 20, max_inodes: 1000 },
      ],
    };
    // The local guest writes its default ceiling only when none exists: this one lists the two labels.
    fs.writeFileSync(path.join(dataDir, "guest-ceiling.json"), `${JSON.stringify(ceiling, null, 2)}\n`, { mode: 0o600 });
    hub = await startHub({ LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_MCP_APPROVAL_WAIT_S: "0", LEASEHOLD_PASSKEY_APPROVAL_RISK: "critical" });
    const created = await runCli(["token", "create", "--expires", "1h", "--name", "deployer"], env());
    expect(created.code, created.stderr).toBe(0);
    ({ client } = await connectClient(hub.url, created.stdout.split("\n").find((line) => line.startsWith("lh_")) ?? ""));
    const admin = await runCli(["admin", "create", "--name", ADMIN, "--role", "owner"], env());
    expect(admin.code, admin.stderr).toBe(0);
    await waitFor("host local online with its host paths", async () => (await hostsList()).hosts?.find((h) => h.name === "local" && h.online && (h.host_paths?.length ?? 0) === 2), 60_000, 300);
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await hub?.stop();
  });

  it("hosts_list shows the ceiling's host paths", async () => {
    const local = (await hostsList()).hosts?.find((h) => h.name === "local");
    expect(local?.host_paths).toEqual([
      { label: "logs", path: logs, mode: "ro" },
      { label: "app", path: app, mode: "rw", owner: { uid: 1000, gid: 1000 }, max_bytes: 16 << 20, max_inodes: 1000 },
    ]);
  });

  it("reads a host log through the ro label at once (run_command and fs_read of a label path); an unlisted label (INVALID_ARGUMENT, the field named) and rw on the ro label (POLICY_REFUSED) are refused naming the label", async () => {
    const read = await call("run_command", { host: "local", command: "cat /host/logs/app.log", mounts: ["logs"] });
    expect(read).toMatchObject({ status: "completed", decision: "auto_allow", risk: { level: "read_only" }, result: { exit: { code: 0 } } });
    expect(read.result?.output.stdout).toBe("GET /health 200\n");
    expect(read.evidence?.mounts).toEqual([{ label: "logs", path: logs, mode: "ro" }]);

    const page = await call("fs_read", { host: "local", path: "logs:app.log" });
    expect(page).toMatchObject({ status: "completed", decision: "auto_allow" });
    expect(JSON.stringify(page.result)).toContain("GET /health 200");

    const unlisted = await call("run_command", { host: "local", command: "cat /host/etc/shadow", mounts: ["etc"] });
    expect(unlisted).toMatchObject({ code: "INVALID_ARGUMENT", details: { field: "mounts", label: "etc" } });
    expect(unlisted.message).toMatch(/^mounts: .*lists no host path labelled etc/);
    const widened = await call("run_command", { host: "local", command: "touch /host/logs/x", mounts: [{ label: "logs", mode: "rw" }] });
    expect(widened).toMatchObject({ code: "POLICY_REFUSED" });
    expect(widened.message).toMatch(/read-only; rw is refused, not narrowed/);
  });

  it("writes under the rw label after an approval, then rolls the host file back byte for byte after a second (high) approval", async () => {
    const before = sha256(path.join(app, "index.html"));
    const held = await call("run_command", { host: "local", command: "printf '<h1>v2</h1>\\n' > /host/app/index.html && echo new > /host/app/added.txt", mounts: [{ label: "app", mode: "rw" }] });
    expect(held).toMatchObject({ code: "APPROVAL_PENDING" });
    const writeId = String(held.action_id);
    const show = await runCli(["approvals", "show", writeId], env());
    expect(show.stdout).toContain(`${app} becomes writable as uid 1000, gid 1000 (label app;`);
    await approve(writeId);
    const wrote = await call("approval_wait", { action_id: writeId });
    expect(wrote, JSON.stringify(wrote)).toMatchObject({ status: "completed", risk: { level: "medium" }, result: { exit: { code: 0 } } });
    expect(fs.readFileSync(path.join(app, "index.html"), "utf8")).toBe("<h1>v2</h1>\n");
    // Files the job made belong on the host to the label's owner, not to a lease uid.
    expect(fs.statSync(path.join(app, "added.txt")).uid).toBe(1000);
    const mount = wrote.evidence?.mounts?.find((m) => m.label === "app");
    expect(mount).toMatchObject({ mode: "rw" });
    const snapshotId = String(mount?.snapshot_id);

    // The guest reports its snapshots as soon as the job that took one has delivered its result:
    // well before the next periodic health report (every 30 s).
    const snapshot = await waitFor("the snapshot in hosts_list", async () => (await hostsList()).hosts?.find((h) => h.name === "local")?.snapshots.find((s) => s.id === snapshotId), 25_000, 200);
    expect(snapshot.tree_digest).toBe(mount?.tree_before);
    const listed = await runCli(["snapshot", "list", "--host", "local", "--json"], env());
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { snapshots: Array<{ id: string; path: string }> }).snapshots).toContainEqual(expect.objectContaining({ id: snapshotId, path: app }));

    const unknown = await call("rollback", { host: "local", label: "app", snapshot_id: "no-such-snapshot" });
    expect(unknown).toMatchObject({ code: "NOT_FOUND" });
    const rollback = await call("rollback", { host: "local", label: "app", snapshot_id: snapshotId });
    expect(rollback).toMatchObject({ code: "APPROVAL_PENDING" });
    expect((rollback as { risk?: unknown }).risk).toBe("high");
    await approve(String(rollback.action_id));
    const restored = await call("approval_wait", { action_id: String(rollback.action_id) });
    expect(restored, JSON.stringify(restored)).toMatchObject({ status: "completed", operation: "rollback", risk: { level: "high" } });
    expect(sha256(path.join(app, "index.html"))).toBe(before);
    expect(fs.existsSync(path.join(app, "added.txt"))).toBe(false);
    expect(restored.evidence?.mounts?.find((m) => m.label === "app")?.tree_after).toBe(snapshot.tree_digest);
  }, 180_000);
});
