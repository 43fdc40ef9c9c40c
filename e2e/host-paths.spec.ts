/**
 * Host paths as a person sees them in the browser: a hub of its own whose
 * local guest's ceiling lists a log label (ro) and an app label (rw) over
 * temporary directories; an MCP agent (the official SDK client) asks for a
 * command that writes the app label; the approval card says which host
 * paths become readable and which writable as whom, and the hosts page
 * lists the host's host paths with mode, owner and budget. Then the whole
 * loop with approvals given in the browser: the agent reads a host file
 * through the `ro` label, edits a file under the `rw` label once a person
 * approves it, and rolls the label back — a `high` action, approved with
 * the passkey (Chromium's virtual authenticator) — to a tree whose digest
 * equals the snapshot's, byte for byte.
 *
 * Why a hub of its own: the Playwright config's hub runs the default local
 * guest ceiling, which lists no host paths (an operator opts in).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect, test } from "@playwright/test";
import { freePort } from "../tools/lib/postgres.mjs";
import { defaultCeiling } from "../server/hosts/local-guest";
import { runCli, startHub, tempDir, type RunningHub } from "../test/support/hub-process";
import { signedInOnOwnHub } from "./support/admins";
import { virtualAuthenticator } from "./support/passkeys";
import { approveButton, openItem, queueItem } from "./support/queue";

let hub: RunningHub | undefined;
let base = "";
let client: Client | undefined;
const work = tempDir("lh-e2e-hostpaths-");
const logs = path.join(work, "var-log");
const app = path.join(work, "srv-app");

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  test.setTimeout(240_000);
  fs.mkdirSync(logs, { recursive: true, mode: 0o755 });
  fs.mkdirSync(app, { recursive: true, mode: 0o755 });
  const dataDir = path.join(work, "data");
  fs.mkdirSync(dataDir, { mode: 0o700 });
  const ceiling = {
    ...defaultCeiling(path.join(dataDir, "workspace")),
    host_paths: [
      { label: "logs", path: logs, mode: "ro" },
      { label: "app", path: app, mode: "rw", owner: { uid: 1000, gid: 1000 }, max_bytes: 64 << 20 },
    ],
  };
  fs.writeFileSync(path.join(dataDir, "guest-ceiling.json"), `${JSON.stringify(ceiling, null, 2)}\n`, { mode: 0o600 });
  const port = await freePort();
  hub = await startHub({ LEASEHOLD_PORT: String(port), LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_MCP_APPROVAL_WAIT_S: "0" }, 180_000);
  base = `http://localhost:${port}`;
  const token = await runCli(["token", "create", "--name", "deployer", "--expires", "1h"], { LEASEHOLD_DATA_DIR: dataDir });
  const secret = token.stdout.split("\n").find((line) => line.startsWith("lh_")) ?? "";
  client = new Client({ name: "e2e-host-paths", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${hub.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
  // The guest reports its host paths with its first health report.
  await expect
    .poll(async () => {
      const listing = ((await client!.callTool({ name: "hosts_list", arguments: {} }, CallToolResultSchema)) as CallToolResult).structuredContent as { hosts?: Array<{ name: string; host_paths: unknown[] | null }> };
      return listing.hosts?.find((h) => h.name === "local")?.host_paths?.length ?? 0;
    }, { timeout: 60_000 })
    .toBe(2);
});

type Structured = Record<string, unknown> & {
  code?: string;
  status?: string;
  action_id?: string;
  result?: { output?: { stdout?: string } };
  evidence?: { mounts?: Array<{ label: string; mode: string; tree_before?: string; tree_after?: string; snapshot_id?: string }> };
};

/** One tool call; a result not sealed within the tool's wait ("dispatched") is waited on with approval_wait, as an agent would. */
async function call(name: string, args: Record<string, unknown>): Promise<Structured> {
  const options = { timeout: 120_000, resetTimeoutOnProgress: true };
  let s = ((await client!.callTool({ name, arguments: args }, CallToolResultSchema, options)) as CallToolResult).structuredContent as Structured;
  for (let i = 0; i < 20 && s.status === "dispatched" && typeof s.action_id === "string"; i += 1) {
    s = ((await client!.callTool({ name: "approval_wait", arguments: { action_id: s.action_id } }, CallToolResultSchema, options)) as CallToolResult).structuredContent as Structured;
  }
  return s;
}

/** approval_wait until the action is no longer held (this hub answers a held action at once: its MCP wait is 0 s). */
async function decided(actionId: string): Promise<Structured> {
  let s: Structured = {};
  await expect
    .poll(async () => {
      s = await call("approval_wait", { action_id: actionId });
      return s.code ?? s.status;
    }, { timeout: 120_000, intervals: [500, 1_000, 2_000] })
    .not.toBe("APPROVAL_PENDING");
  return s;
}

const sha256Of = (file: string): string => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

test.afterAll(async () => {
  await client?.close();
  await hub?.stop();
});

test("the approval card says which host paths become readable and which writable as whom; the hosts page lists the host paths", async ({ page }) => {
  test.setTimeout(180_000);
  const marker = `deploy-${process.pid}`;
  const held = (await client!.callTool(
    { name: "run_command", arguments: { host: "local", command: `cp /host/logs/${marker}.log /host/app/`, mounts: ["logs", { label: "app", mode: "rw" }] } },
    CallToolResultSchema,
  )) as CallToolResult;
  expect((held.structuredContent as { code?: string }).code).toBe("APPROVAL_PENDING");

  await signedInOnOwnHub(page, base, "owner", (args) => runCli(args, { LEASEHOLD_DATA_DIR: hub!.dataDir }));
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${base}/approvals`);
  const card = await openItem(queueItem(page, marker));
  const paths = card.getByTestId("approval-host-paths");
  await expect(paths).toContainText(`${app} becomes writable as uid 1000, gid 1000 (label app; snapshotted before the job runs, snapshot budget 67108864 bytes)`);
  await expect(paths).toContainText(`${logs} becomes readable (label logs)`);
  await expect(card).toContainText("host_path.rw");
  await page.screenshot({ path: path.join("test-results", "approval-host-paths-1280.png"), fullPage: true });

  await page.goto(`${base}/hosts`);
  const listed = page.getByTestId("host-paths-local");
  await expect(listed).toContainText("logs");
  await expect(listed).toContainText(logs);
  await expect(listed).toContainText("owner uid 1000, gid 1000");
  await expect(listed).toContainText("budget 64 MiB");
  // The guest took the rw label's baseline snapshot when it started (docs/design.md#snapshots): listed before any job ran.
  await expect(page.getByTestId("host-snapshots-local")).toContainText(" of app at ");
});

test("an agent reads through the ro label, edits under the rw label after a browser approval, and rolls it back byte for byte after a passkey approval", async ({ page }) => {
  test.setTimeout(300_000);
  const marker = `loop-${process.pid}-${Date.now().toString(36)}`;
  fs.writeFileSync(path.join(logs, `${marker}.log`), `GET /${marker} 200\n`);
  const index = path.join(app, "index.html");
  fs.writeFileSync(index, "<h1>v1</h1>\n");
  // The job writes as the label's owner (idmapped): the tree is theirs.
  fs.chownSync(app, 1000, 1000);
  fs.chownSync(index, 1000, 1000);
  const original = sha256Of(index);

  // 1. Read a host file through the ro label: read-only, decided at once.
  const read = await call("fs_read", { host: "local", path: `logs:${marker}.log` });
  expect(read, JSON.stringify(read)).toMatchObject({ status: "completed", decision: "auto_allow" });
  expect(JSON.stringify(read.result)).toContain(`GET /${marker} 200`);

  // 2. Edit under the rw label: held; a person approves it in the browser.
  await virtualAuthenticator(page);
  await signedInOnOwnHub(page, base, "owner", (args) => runCli(args, { LEASEHOLD_DATA_DIR: hub!.dataDir }));
  const section = page.getByTestId("passkeys-section");
  await section.getByLabel("Name for a new passkey").fill("e2e host-paths key");
  await section.getByRole("button", { name: "Register a passkey" }).click();
  await expect(section.getByRole("status")).toContainText('Passkey "e2e host-paths key" registered.');

  const held = await call("run_command", { host: "local", command: `sed -i s/v1/${marker}/ /host/app/index.html`, mounts: [{ label: "app", mode: "rw" }] });
  expect(held, JSON.stringify(held)).toMatchObject({ code: "APPROVAL_PENDING" });
  await page.goto(`${base}/approvals`);
  const editRow = await openItem(queueItem(page, `s/v1/${marker}/`));
  await approveButton(editRow).click();
  const wrote = await decided(String(held.action_id));
  expect(wrote, JSON.stringify(wrote)).toMatchObject({ status: "completed", result: { exit: { code: 0 } } });
  expect(fs.readFileSync(index, "utf8")).toBe(`<h1>${marker}</h1>\n`);
  const mount = wrote.evidence?.mounts?.find((m) => m.label === "app");
  expect(mount?.snapshot_id, JSON.stringify(wrote.evidence)).toMatch(/^s/);
  expect(mount?.tree_after).not.toBe(mount?.tree_before);

  // The snapshot reaches the hub with the guest's next health report; rollback names only reported ones.
  const snapshotId = String(mount?.snapshot_id);
  let snapshotDigest = "";
  await expect
    .poll(async () => {
      const listing = ((await client!.callTool({ name: "hosts_list", arguments: {} }, CallToolResultSchema)) as CallToolResult).structuredContent as { hosts?: Array<{ name: string; snapshots: Array<{ id: string; tree_digest: string }> }> };
      snapshotDigest = listing.hosts?.find((h) => h.name === "local")?.snapshots.find((s) => s.id === snapshotId)?.tree_digest ?? "";
      return snapshotDigest;
    }, { timeout: 60_000 })
    .toBe(mount?.tree_before);

  // 3. Roll back: high, held for a person, approved with the passkey in the browser.
  const rollback = await call("rollback", { host: "local", label: "app", snapshot_id: snapshotId });
  expect(rollback, JSON.stringify(rollback)).toMatchObject({ code: "APPROVAL_PENDING" });
  await page.goto(`${base}/approvals`);
  // A rollback has no command: its row is named by the operation; opened, it names the snapshot.
  const rollbackRow = await openItem(page.getByRole("article", { name: /^high rollback on local$/ }));
  await expect(rollbackRow).toContainText(snapshotId);
  await expect(rollbackRow.locator(".badge.risk-high").first()).toBeVisible();
  await page.screenshot({ path: path.join("test-results", "approval-rollback-1280.png"), fullPage: true });
  // Named by the operation (no command to quote in backticks).
  await rollbackRow.getByRole("button", { name: "Approve with passkey: rollback on local" }).click();
  const restored = await decided(String(rollback.action_id));
  expect(restored, JSON.stringify(restored)).toMatchObject({ status: "completed", operation: "rollback", risk: { level: "high" } });
  expect(restored.evidence?.mounts?.find((m) => m.label === "app")?.tree_after).toBe(snapshotDigest);
  expect(sha256Of(index)).toBe(original);
  expect(fs.statSync(index).uid).toBe(1000);
});
