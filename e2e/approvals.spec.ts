/**
 * The approvals page end to end, against the hub the Playwright
 * config starts and its real local guest: an agent (the MCP SDK client)
 * asks for a medium-risk command (`chmod -f 600 lh-<marker>; echo <marker>`,
 * medium by command.permissions — high/critical will need a passkey), the
 * held action appears in an open approvals page without reload with its
 * risky span marked, and the person's decision reaches the waiting client.
 */
import path from "node:path";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { leaseholdCli, signedInAs } from "./support/admins";
import { closeOpenAgents, connectAgent, connectAgents, runCommand, structured } from "./support/mcp-agent";
import { allowSimilarButton, approveButton, denyButton, openItem } from "./support/queue";

// A test that fails before its own agent.close() must not leave its session holding host "local" for the next.
test.afterEach(closeOpenAgents);

let n = 0;
/** A command that is medium risk, cheap, succeeds, and prints a unique marker. */
function heldCommand(prefix = "build"): { command: string; marker: string } {
  n += 1;
  // "-cmd-": never a substring of an agent token named `${prefix}-${pid}-${counter}` (connectAgent), whose name the card shows too.
  const marker = `${prefix}-cmd-${process.pid}-${n}`;
  return { command: `chmod -f 600 lh-${marker}; echo ${marker}`, marker };
}

function card(page: Page, marker: string) {
  return page.locator("article.approval", { hasText: marker });
}

/** One sign-in per role for the whole file (argon2id on a shared machine is slow): saved browser state. */
const STATE = { approver: path.join("test-results", ".approvals-approver.json"), owner: path.join("test-results", ".approvals-owner.json") } as const;

async function saveSignedIn(browser: Browser, role: "owner" | "approver"): Promise<void> {
  // Explicitly empty: a describe block's storageState would otherwise apply to this context too.
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  const page = await context.newPage();
  await signedInAs(page, role);
  await context.storageState({ path: STATE[role] });
  await context.close();
}

test.beforeAll(async ({ browser }) => {
  await saveSignedIn(browser, "approver");
  await saveSignedIn(browser, "owner");
});

async function openQueue(page: Page) {
  await page.goto("/approvals");
  await expect(page.getByRole("heading", { name: "Approvals", level: 1 })).toBeVisible();
  // The empty state or the list: the queue has loaded.
  await expect(page.locator(".state-empty, article.approval").first()).toBeVisible();
}

test.describe("as an approver", () => {
  test.use({ storageState: STATE.approver });

  test("a held action appears without reload, its command's risky span highlighted; approve → the waiting client receives the result", async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await openQueue(page);
    const agent = await connectAgent("approve");
    const { command, marker } = heldCommand();
    const call = runCommand(agent, command);
    const item = await openItem(card(page, marker));
    await expect(item.locator("pre.approval-command")).toHaveText(command);
    await expect(item.locator("pre.approval-command mark.risky").first()).toContainText("chmod");
    await expect(item).toContainText(`token ${agent.tokenName}`);
    await expect(item).toContainText(/session [0-9a-f]{8}/);
    await expect(item.locator(".badge.risk-medium").first()).toBeVisible();
    await expect(item).toContainText("command.permissions");
    await expect(item.locator(".approval-deadline")).toHaveText(/\dm \d\ds left/);
    await expect(item).toContainText(/sha256:[0-9a-f]{64}/);
    await page.screenshot({ path: "test-results/approvals-1280.png", fullPage: true });

    await approveButton(item).click();
    const result = structured(await call);
    expect(result["status"], JSON.stringify(result)).toBe("completed");
    expect(result["decision"]).toBe("approved");
    expect(JSON.stringify(result["result"])).toContain(`"stdout":"${marker}\\n"`);
    // The row stays in place and turns into the outcome, linked to the action's page.
    await expect(item.getByTestId("approval-outcome")).toContainText("completed, exit 0");
    await expect(item.getByRole("link", { name: /view/ })).toHaveAttribute("href", /^\/actions\/[0-9a-f-]{36}$/);
    await expect(page.getByTestId("approvals-message")).toContainText(`Approved \`${command}\` on local`);
    await agent.close();
  });

  test("browser notifications: asked for on the button press, then each newly held action notifies (with its operation and host)", async ({ page }) => {
    // A stand-in for the Notification API that records what the page shows (headless chromium has no notification UI).
    await page.addInitScript(() => {
      const shown: Array<{ title: string; body: string; tag: string }> = [];
      class FakeNotification {
        static permission = "default";
        static requestPermission(): Promise<string> {
          FakeNotification.permission = "granted";
          return Promise.resolve("granted");
        }
        onclick: (() => void) | null = null;
        constructor(title: string, options: { body?: string; tag?: string } = {}) {
          shown.push({ title, body: options.body ?? "", tag: options.tag ?? "" });
        }
      }
      Object.assign(window, { Notification: FakeNotification, __shown: shown });
    });
    await openQueue(page);
    const ask = page.getByRole("button", { name: "Notify me of new held actions" });
    await expect(ask).toBeVisible();
    const shown = () => page.evaluate(() => (window as unknown as { __shown: Array<{ title: string; body: string; tag: string }> }).__shown);
    expect(await shown()).toEqual([]);
    await ask.click();
    await expect(page.getByText("Notifications on while this page is open.")).toBeVisible();
    const agent = await connectAgent("notify");
    const { command, marker } = heldCommand("notify");
    const call = runCommand(agent, command);
    const item = card(page, marker);
    await expect(item).toBeVisible();
    await expect.poll(async () => (await shown()).length).toBe(1);
    const [note] = await shown();
    expect(note?.title).toBe(`Approval needed: \`${command}\` on local`);
    expect(note?.body).toContain(`medium risk, requested by ${agent.tokenName}`);
    expect(note?.tag).toBe(await item.getAttribute("id"));
    await approveButton(await openItem(item)).click();
    expect(structured(await call)["status"]).toBe("completed");
    await agent.close();
  });

  test("deny with a reason: the client gets APPROVAL_DENIED with that reason", async ({ page }) => {
    await openQueue(page);
    const agent = await connectAgent("deny");
    const { command, marker } = heldCommand();
    const call = runCommand(agent, command);
    const item = await openItem(card(page, marker));
    await denyButton(item).click();
    const confirm = item.getByRole("button", { name: "Confirm deny" });
    await expect(confirm).toBeDisabled();
    await item.getByLabel(/Reason for denying/).fill("not during the freeze");
    await confirm.click();
    const result = await call;
    expect(result.isError).toBe(true);
    expect(structured(result)["code"]).toBe("APPROVAL_DENIED");
    expect(String(structured(result)["message"])).toContain("not during the freeze");
    await expect(item.getByTestId("approval-outcome")).toContainText("denied");
    await agent.close();
  });

  test("approve and allow similar: the proposed grant is shown, confirmed, created; the next identical call runs without a person, other options are held", async ({ page }) => {
    await openQueue(page);
    const agent = await connectAgent("similar");
    const { command, marker } = heldCommand("similar");
    const call = runCommand(agent, command);
    const item = await openItem(card(page, marker));
    await allowSimilarButton(item).click();
    const form = item.getByRole("form", { name: "Proposed grant" });
    await expect(form.getByLabel(/Pattern/)).toHaveValue(`chmod -f 600 lh-${marker}; echo ${marker}`);
    await expect(form.getByLabel("Uses")).toHaveValue("3");
    await expect(form.getByLabel(/Expires in/)).toHaveValue("60");
    await expect(form.getByLabel("Up to risk")).toHaveValue("medium");
    await form.getByLabel("Uses").fill("2");
    await page.screenshot({ path: "test-results/approvals-allow-similar-1280.png", fullPage: true });
    await form.getByRole("button", { name: "Approve and create grant" }).click();
    const approved = structured(await call);
    expect(approved["decision"], JSON.stringify(approved)).toBe("approved");
    await expect(page.getByTestId("approvals-message")).toContainText("created grant");
    await expect(page.getByTestId("approvals-message")).toContainText("the next 2 similar runs on local will skip a person");
    expect(leaseholdCli(["grant", "list"])).toContain(marker);

    // The next identical call: covered by the grant, no person.
    const again = structured(await runCommand(agent, command));
    expect(again["decision"]).toBe("grant");
    expect(again["status"]).toBe("completed");
    // Other options: held again.
    const widened = `chmod -f 644 lh-${marker}; echo ${marker}`;
    const otherCall = runCommand(agent, widened);
    const otherItem = await openItem(page.locator("article.approval", { hasText: widened }));
    await denyButton(otherItem).click();
    await otherItem.getByLabel(/Reason for denying/).fill("other options");
    await otherItem.getByRole("button", { name: "Confirm deny" }).click();
    expect(structured(await otherCall)["code"]).toBe("APPROVAL_DENIED");
    await agent.close();
  });

});

test.describe("as an owner", () => {
  test.use({ storageState: STATE.owner });

  test("batch: two selected held actions approved together, each waiting client receives its result", async ({ page }) => {
    await openQueue(page);
    const agents = await connectAgents("batch", 2);
    const held = agents.map(() => heldCommand("batch"));
    // Each agent ends its session once answered: its exclusive lease on "local" goes with it, so the other can run.
    const calls = agents.map((agent, i) =>
      runCommand(agent, (held[i] as { command: string }).command).then(async (r) => {
        await agent.close();
        return r;
      }),
    );
    for (const h of held) await expect(card(page, h.marker)).toBeVisible();
    for (const h of held) await card(page, h.marker).getByRole("checkbox").check();
    await expect(page.getByRole("button", { name: "Approve selected (2)" })).toBeVisible();
    await page.getByRole("button", { name: "Approve selected (2)" }).click();
    const results = await Promise.all(calls);
    results.forEach((r, i) => {
      expect(structured(r)["decision"], JSON.stringify(structured(r))).toBe("approved");
      expect(JSON.stringify(structured(r)["result"])).toContain((held[i] as { marker: string }).marker);
    });
    await expect(page.getByTestId("approvals-message")).toHaveText("Approved 2 of 2 selected.");
  });

  test("batch deny with one reason: each selected client gets APPROVAL_DENIED with it", async ({ page }) => {
    await openQueue(page);
    const agents = await connectAgents("batchdeny", 2);
    const held = agents.map(() => heldCommand("batchdeny"));
    const calls = agents.map((agent, i) => runCommand(agent, (held[i] as { command: string }).command));
    for (const h of held) await card(page, h.marker).getByRole("checkbox").check();
    await page.getByLabel("Reason (needed to deny)").fill("batch: out of hours");
    await page.getByRole("button", { name: "Deny selected (2)" }).click();
    for (const r of await Promise.all(calls)) {
      expect(structured(r)["code"]).toBe("APPROVAL_DENIED");
      expect(String(structured(r)["message"])).toContain("batch: out of hours");
    }
    for (const agent of agents) await agent.close();
  });
});

test("auditor: no approvals page and no approve button, and the procedure refuses (403)", async ({ page }) => {
  const agent = await connectAgent("audited");
  const { command, marker } = heldCommand("audited");
  const call = runCommand(agent, command);
  await signedInAs(page, "auditor");
  await expect(page.getByRole("link", { name: "Approvals" })).toHaveCount(0);
  await page.goto("/approvals");
  await expect(page).not.toHaveURL(/\/approvals/);
  await expect(page.getByRole("button", { name: /^Approve/ })).toHaveCount(0);
  const statuses = await page.evaluate(async () => {
    // As the page itself calls: with the session's binding secret (else every call is 401, whatever the role).
    const bound = { "x-leasehold-session-binding": window.localStorage.getItem("leasehold.session-binding") ?? "" };
    const post = (path: string, body: unknown) =>
      fetch(`/api/trpc/${path}?batch=1`, { method: "POST", headers: { "content-type": "application/json", ...bound }, body: JSON.stringify({ 0: body }) }).then((r) => r.status);
    const list = await fetch(`/api/trpc/approvals.list?batch=1&input=${encodeURIComponent(JSON.stringify({ 0: {} }))}`, { headers: bound }).then((r) => r.status);
    return {
      list,
      approve: await post("approvals.approve", { approvalId: "00000000-0000-4000-8000-000000000000", actionHash: `sha256:${"0".repeat(64)}` }),
      batch: await post("approvals.batch", { decision: "approve", items: [{ approvalId: "00000000-0000-4000-8000-000000000000", actionHash: "x" }] }),
    };
  });
  expect(statuses).toEqual({ list: 403, approve: 403, batch: 403 });
  // The action is still held for a decider.
  // The CLI marks the risky span (⟦chmod …⟧), so the command is found by its unmarked tail.
  expect(leaseholdCli(["approvals", "list"])).toContain(`; echo ${marker}`);
  await agent.close();
  void call.catch(() => undefined);
});

test.describe("on a phone", () => {
  test.use({ storageState: STATE.approver });

  test("phone width (390 px): the held action is readable and the approval flow works", async ({ page }) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await openQueue(page);
    const agent = await connectAgent("phone");
    const { command, marker } = heldCommand("phone");
    const call = runCommand(agent, command);
    const item = await openItem(card(page, marker));
    await expect(item.locator("pre.approval-command mark.risky").first()).toBeVisible();
    // Nothing wider than the screen: the page does not scroll sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: "test-results/approvals-390.png", fullPage: true });
    await approveButton(item).click();
    const result = structured(await call);
    expect(result["status"], JSON.stringify(result)).toBe("completed");
    await agent.close();
  });
});
