/**
 * Host paths as a person sees them in the browser: a hub of its own whose
 * local guest's ceiling lists a log label (ro) and an app label (rw) over
 * temporary directories; an MCP agent (the official SDK client) asks for a
 * command that writes the app label; the approval card says which host
 * paths become readable and which writable as whom, and the hosts page
 * lists the host's host paths with mode, owner and budget.
 *
 * Why a hub of its own: the Playwright config's hub runs the default local
 * guest ceiling, which lists no host paths (an operator opts in).
 */
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
import { openItem, queueItem } from "./support/queue";

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
  await expect(page.getByTestId("host-snapshots-local")).toContainText("none");
});
