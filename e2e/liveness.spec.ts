/**
 * Approval liveness and the agent's reason, as a person sees them in the
 * queue (docs/design.md#approval-liveness, #agent-reason). Two agents (the
 * official SDK client) each ask for a held run_command with a `reason`; one
 * keeps waiting, the other dies: its connection drops with neither
 * `notifications/cancelled` nor a session DELETE (either of which would
 * cancel its action, docs/design.md#cancel). The queue says "agent waiting
 * (session open, …)" for the first and, once nobody has waited for
 * the hub's orphan window (LEASEHOLD_APPROVAL_ORPHANED_S), marks the second "orphaned: no client waiting since …
 * (session open)" — the session has not expired — lists it after the live one and counts
 * it above the list; the open card shows the agent's reason with its
 * invisible character escaped. axe finds nothing on that page.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import { expect, test, type Browser } from "@playwright/test";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { analyzeAxe } from "./support/axe";
import { signedInAs } from "./support/admins";
import { closeOpenAgents, connectAgent, structured, type Agent } from "./support/mcp-agent";
import { denyButton, openItem, queueItem } from "./support/queue";

test.afterEach(closeOpenAgents);

const STATE = path.join("test-results", ".liveness-owner.json");
// The orphaned mark needs the hub's orphan window of nobody waiting: the Playwright config's hub sets
// LEASEHOLD_APPROVAL_ORPHANED_S to 12 s (the default, 30 s, is asserted in server/approvals/liveness.test.ts).
test.describe.configure({ timeout: 120_000 });

test.beforeAll(async ({ browser }: { browser: Browser }) => {
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  await signedInAs(await context.newPage(), "owner");
  await context.storageState({ path: STATE });
  await context.close();
});
test.use({ storageState: STATE });

/** Keeps asking until the action is decided (a live agent): run_command, then approval_wait while it is pending. */
async function waitDecided(agent: Agent, command: string, reason: string): Promise<CallToolResult> {
  const options = { timeout: 120_000, resetTimeoutOnProgress: true };
  let result = (await agent.client.callTool({ name: "run_command", arguments: { host: "local", command, reason, idempotency_key: randomUUID() } }, undefined, options)) as CallToolResult;
  for (let i = 0; i < 10 && structured(result)["code"] === "APPROVAL_PENDING"; i += 1) {
    result = (await agent.client.callTool({ name: "approval_wait", arguments: { action_id: String(structured(result)["action_id"]) } }, undefined, options)) as CallToolResult;
  }
  return result;
}

test("a held action nobody waits on is marked orphaned and listed after the live one; the card shows the agent's reason, escaped; axe finds nothing", async ({ page }) => {
  const tag = `${process.pid}-${Date.now()}`;
  const live = { command: `chmod -f 600 lh-live-${tag}`, reason: `rotating keys for ${tag}` };
  const gone = { command: `chmod -f 600 lh-gone-${tag}`, reason: `tidy up \u202egnp.exe ${tag}` };
  await page.goto("/approvals");
  await expect(page.getByRole("heading", { name: "Approvals", level: 1 })).toBeVisible();

  const liveAgent = await connectAgent("live");
  const liveCall = waitDecided(liveAgent, live.command, live.reason);
  const goneAgent = await connectAgent("gone");
  const goneCall = goneAgent.client
    .callTool({ name: "run_command", arguments: { host: "local", command: gone.command, reason: gone.reason } }, undefined, { timeout: 120_000 })
    .catch((error: unknown) => error);

  const liveRow = queueItem(page, `lh-live-${tag}`);
  const goneRow = queueItem(page, `lh-gone-${tag}`);
  await expect(liveRow.getByTestId("approval-liveness")).toHaveText(/^agent waiting \(session open, last seen \d+ s ago\)$/);
  await expect(goneRow.getByTestId("approval-liveness")).toHaveText(/^agent waiting \(session open, last seen \d+ s ago\)$/);

  // The second agent dies: its transport closes under the waiting call, with no notifications/cancelled
  // and no DELETE, so the action stays held and nobody waits on it.
  await goneAgent.client.close();
  await goneCall;

  await expect(goneRow.getByTestId("approval-liveness")).toHaveText(/^orphaned: no client waiting since \d{1,2}:\d{2}:\d{2}( [AP]M)? \(session open\)$/, { timeout: 45_000 });
  await expect(goneRow).toHaveAttribute("data-liveness", "orphaned");
  // The live agent is still waiting (approval_wait after each APPROVAL_PENDING) and stays live.
  await expect(liveRow.getByTestId("approval-liveness")).toHaveText(/^agent waiting \(session open/);
  await expect(page.getByTestId("approvals-orphaned-note")).toContainText("orphaned: no client is waiting");
  // Orphaned rows come after every live one; the row's description is its liveness line.
  const order = await page.locator("article.approval").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-liveness")));
  expect(order.indexOf("orphaned")).toBeGreaterThan(order.lastIndexOf("waiting"));
  const describedBy = await goneRow.getAttribute("aria-describedby");
  expect(await page.locator(`[id="${describedBy}"]`).textContent()).toMatch(/^orphaned: /);

  // The agent's reason on the card, its right-to-left override shown as an escape, never as itself.
  await openItem(goneRow);
  await expect(goneRow.getByTestId("approval-agent-reason")).toHaveText(`The agent's reason: tidy up ⟨U+202E⟩gnp.exe ${tag}`);
  await openItem(liveRow);
  await expect(liveRow.getByTestId("approval-agent-reason")).toHaveText(`The agent's reason: ${live.reason}`);

  const result = await analyzeAxe(page);
  const found = result.violations.map((v) => `${v.id} (${v.impact ?? "?"}): ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(" | ")}`);
  expect(found, "axe on the queue with an orphaned row and a reason").toEqual([]);

  // Clean-up: both denied, the live agent receives the denial.
  for (const row of [goneRow, liveRow]) {
    await denyButton(row).click();
    await row.getByLabel(/^Reason for denying/).fill("e2e liveness clean-up");
    await row.getByRole("button", { name: "Confirm deny" }).click();
    await expect(row).toHaveAttribute("data-outcome", "denied");
  }
  expect(structured(await liveCall)).toMatchObject({ code: "APPROVAL_DENIED" });
  await liveAgent.close();
});
