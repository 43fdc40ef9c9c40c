/**
 * Dashboard, actions and console end to end: a real MCP client (the SDK,
 * with an `lh_` token) runs commands on the hub's real local guest, one of
 * them held and approved by an owner (CLI); then the browser shows them —
 * dashboard figures and charts from that data, the actions list found by
 * command text, the detail page's timeline, output, verified envelope and
 * receipt; the console runs `ls` on host local; an auditor reads actions
 * but has no console. Screenshots at 1280 and 390 px go to test-results/.
 */
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect, test, type Page } from "@playwright/test";
import { boundHeaders, createAccount, leaseholdCli, sharedSignIn, signedInAs } from "./support/admins";
import { E2E_BASE_URL } from "./support/hub";

const marker = `dash-e2e-${randomBytes(4).toString("hex")}`;
// Two tests need only "an auditor, signed in": one sign-in (two argon2id hashes) serves both.
const signedInAsAuditor = sharedSignIn("auditor");
let ownerName = "";

async function mcpClient(token: string): Promise<{ client: Client; close(): Promise<void> }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${E2E_BASE_URL}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "dashboard-e2e", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    async close() {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}

async function runCommand(client: Client, command: string): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name: "run_command", arguments: { host: "local", command } }, undefined, { timeout: 120_000 });
  expect(result.isError, JSON.stringify(result.structuredContent)).not.toBe(true);
  return result.structuredContent as Record<string, unknown>;
}

/** The id of the one pending approval the CLI lists for run_command on local. */
/** The pending approval whose command carries `text` (other specs on the same hub may leave pending ones). */
async function pendingApprovalId(text: string): Promise<string> {
  for (let i = 0; i < 60; i++) {
    const listed = leaseholdCli(["approvals", "list"]);
    // One block per approval, each starting with its id line.
    const blocks = listed.split(/\n(?=[0-9a-f-]{36} {2})/);
    const block = blocks.find((b) => /^[0-9a-f-]{36} {2}run_command on local {2}risk \S+ {2}pending/.test(b) && b.includes(text));
    if (block !== undefined) return block.slice(0, 36);
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`no pending approval for ${text} appeared`);
}

async function waitForGuest(page: Page): Promise<void> {
  // The local guest reports in shortly after the hub starts.
  await expect(async () => {
    const out = leaseholdCli(["host", "list"]);
    expect(out).toMatch(/local\s+online/);
  }).toPass({ timeout: 90_000 });
  void page;
}

/** Elements wider than the viewport (a phone layout must not scroll sideways). */
async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth <= width) return [];
    return [...document.querySelectorAll("body *")]
      .filter((el) => el.closest("nav") === null)
      .filter((el) => el.getBoundingClientRect().right > width + 1)
      .slice(0, 8)
      .map((el) => `${el.tagName.toLowerCase()}.${el.className.toString().slice(0, 40)} right=${Math.round(el.getBoundingClientRect().right)}`);
  });
}

test.describe.configure({ mode: "serial" });

test("an MCP client's actions (one held, approved by an owner) reach the hub", async ({ page }) => {
  test.setTimeout(240_000);
  await waitForGuest(page);
  const out = leaseholdCli(["token", "create", "--name", `dash-agent-${marker}`, "--expires", "1h"]);
  const token = out.split("\n").find((l) => l.startsWith("lh_"));
  expect(token).toBeDefined();
  ownerName = createAccount("owner").name;
  const mcp = await mcpClient(token!);
  try {
    const first = await runCommand(mcp.client, `echo ${marker}`);
    expect(first["action_id"]).toBeDefined();
    await runCommand(mcp.client, "ls -a");
    // A medium-risk command (chmod) is held for a person: approve it from the CLI while the client waits.
    // (high and critical would need a passkey signature in the browser: e2e/passkeys.spec.ts.)
    const held = runCommand(mcp.client, `chmod -f 600 lh-held-${marker}; echo held-${marker}`);
    const approvalId = await pendingApprovalId(`held-${marker}`);
    leaseholdCli(["approvals", "approve", approvalId, "--reason", "e2e cleanup", "--as", ownerName]);
    const approved = await held;
    expect(approved["decision"]).toBe("approved");
  } finally {
    await mcp.close();
  }
});

test("the dashboard shows non-zero figures from that data and renders its charts", async ({ page }) => {
  const violations: string[] = [];
  page.on("console", (msg) => {
    if (/Content Security Policy|Refused to (execute|load|apply|connect)/i.test(msg.text())) violations.push(msg.text());
  });
  await signedInAs(page, "approver");
  await page.goto("/");
  await expect(page.getByTestId("dash-pending")).toHaveAttribute("href", "/approvals");
  await expect(page.getByRole("heading", { name: "Hub overview" })).toBeVisible();
  await expect(page.getByTestId("health-status")).toHaveText("ok");
  await expect(page.getByTestId("dash-hosts")).toContainText("1/1");
  const entries = Number(await page.getByTestId("dash-ledger").locator(".dash-figure").innerText());
  expect(entries).toBeGreaterThan(0);
  await expect(page.getByTestId("dash-checkpoint").locator(".dash-figure")).toHaveText(/^\d+$/);
  await expect(page.getByTestId("dash-recent")).toContainText(marker);
  for (const chart of ["chart-actions-per-hour", "chart-latency", "chart-approval-response"]) {
    await expect(page.getByTestId(chart).locator("svg.recharts-surface").first()).toBeVisible();
    await expect(page.getByTestId(chart).locator(".recharts-bar-rectangle").first()).toBeAttached();
  }
  // At least this spec's own decision: the browser suite shares one hub, and other specs decide too.
  await expect(page.getByTestId("chart-approval-response")).toContainText(/approved or denied: [1-9]\d*/);
  // recharts draws with inline styles: the hub's CSP allows them, and nothing else is refused.
  expect(violations).toEqual([]);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: "test-results/dashboard-1280.png", fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByTestId("chart-actions-per-hour").locator("svg.recharts-surface").first()).toBeVisible();
  expect(await overflowing(page)).toEqual([]);
  await page.screenshot({ path: "test-results/dashboard-390.png", fullPage: true });
});

test("the actions list finds the action by command text; its page shows timeline, output, verified envelope and receipt", async ({ page }) => {
  await signedInAsAuditor(page);
  await page.goto("/actions");
  const rows = page.getByTestId("actions-table").locator("tbody tr");
  // The marker is in the agent token's name too: all three of its actions match.
  await page.getByLabel("Search actions").fill(marker);
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page).toHaveURL(new RegExp(`q=${marker}`));
  await expect(rows).toHaveCount(3);
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await overflowing(page)).toEqual([]);
  await page.screenshot({ path: "test-results/actions-list-390.png", fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: "test-results/actions-list-1280.png", fullPage: true });
  // By command text: exactly the echo.
  await page.getByLabel("Search actions").fill(`echo ${marker}`);
  await page.getByRole("button", { name: "Search" }).click();
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText(`echo ${marker}`);
  await rows.first().getByRole("link").click();
  await expect(page).toHaveURL(/\/actions\/[0-9a-f-]{36}$/);
  await expect(page.getByRole("heading", { name: "run_command on local" })).toBeVisible();
  const timeline = page.getByTestId("timeline");
  for (const type of ["decision/1", "lease/1", "dispatch/1", "evidence/1"]) await expect(timeline).toContainText(type);
  await expect(page.getByTestId("output-stdout")).toContainText(marker);
  await expect(page.getByTestId("evidence")).toContainText("verified");
  await expect(page.getByTestId("evidence")).toContainText("✓ signature: Ed25519 signature over the JCS bytes of the envelope verifies with host local's key");
  await expect(page.getByTestId("evidence").locator(".check-bad")).toHaveCount(0);
  await expect(page.getByTestId("receipt")).toContainText("inclusion verified");
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: "test-results/action-detail-1280.png", fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByTestId("receipt")).toContainText("inclusion verified");
  expect(await overflowing(page)).toEqual([]);
  await page.screenshot({ path: "test-results/action-detail-390.png", fullPage: true });

  // The held, approved one: who approved it, why, and that no passkey assertion is stored.
  await page.goto(`/actions?q=${encodeURIComponent(`echo held-${marker}`)}`);
  await page.getByTestId("actions-table").locator("tbody tr").first().getByRole("link").click();
  await expect(page.getByTestId("approval")).toContainText(ownerName);
  await expect(page.getByTestId("approval")).toContainText("e2e cleanup");
  await expect(page.getByTestId("approval-passkey")).toContainText("no passkey assertion stored");
  await expect(page.getByTestId("timeline")).toContainText("approval/1");
});

test("the console runs ls on host local through the pipeline and shows the output; a held command waits for approval, then shows its result and action link", async ({ page }) => {
  await signedInAs(page, "owner");
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.getByRole("link", { name: "Console", exact: true }).click();
  await expect(page).toHaveURL(/\/console$/);
  await expect(page.getByLabel("Host")).toHaveValue("local");
  await page.getByLabel("Operation").selectOption("run_command");
  await page.getByLabel("command (required)").fill("ls -a");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("console-result")).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId("console-exit")).toHaveText("exit 0");
  await expect(page.getByTestId("console-stdout")).toContainText("..");
  await expect(page.getByTestId("console-result")).toContainText("auto-allowed");
  await page.screenshot({ path: "test-results/console-1280.png", fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await overflowing(page)).toEqual([]);
  await page.screenshot({ path: "test-results/console-390.png", fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });

  // A medium-risk command is held: the console says so and keeps waiting (console.resume) until a person approves.
  await page.getByLabel("command (required)").fill(`chmod -f 600 lh-console-${marker}; echo console-${marker}`);
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page.getByTestId("console-held")).toContainText("held for approval");
  await expect(page.getByTestId("console-held")).toContainText("Waiting for a person to decide");
  leaseholdCli(["approvals", "approve", await pendingApprovalId(`console-${marker}`), "--reason", "console e2e", "--as", ownerName]);
  await expect(page.getByTestId("console-result")).toContainText("approved", { timeout: 60_000 });
  await expect(page.getByTestId("console-exit")).toHaveText("exit 0");
  await page.getByTestId("console-action-link").click();
  await expect(page.getByTestId("timeline")).toContainText("evidence/1");
  // The action page says which channel it came through and who asked.
  await expect(page.locator(".page-header")).toContainText("console · admin");
});

test("an auditor sees actions but has no console: no nav link, the page redirects, the procedures refuse", async ({ page, context }) => {
  await signedInAsAuditor(page);
  await page.goto("/");
  await expect(page.getByRole("link", { name: "Actions", exact: true })).toBeVisible();
  await expect(page.getByRole("link", { name: "Console", exact: true })).toHaveCount(0);
  // The pending-approvals figure is shown, but not as a link to a queue an auditor cannot open.
  await expect(page.getByTestId("dash-pending")).not.toHaveAttribute("href", /.*/);
  await page.goto("/actions");
  await expect(page.getByTestId("actions-table")).toBeVisible();
  await page.goto("/console");
  await expect(page).toHaveURL(/\/\?forbidden=1$/);
  const headers = await boundHeaders(page, context);
  const targets = await page.request.get("/api/trpc/consoleForm.targets", { headers });
  expect(targets.status()).toBe(403);
  const submit = await page.request.post("/api/trpc/console.submit", {
    headers: { ...headers, origin: E2E_BASE_URL, "content-type": "application/json" },
    data: { operation: "run_command", arguments: { host: "local", command: "ls" }, waitMs: 0 },
  });
  expect(submit.status()).toBe(403);
});
