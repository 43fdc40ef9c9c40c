/**
 * Text a person reads, and grants a person signs (real hub, real local
 * guest, Debian's chromium with its virtual authenticator):
 *  - "approve and allow similar" on a `high` action: the approval is signed
 *    with the passkey, then the grant's own scope with the Grants page's
 *    ceremony; the form says the covered runs skip a person and the
 *    passkey; the grant is listed as signed with a passkey;
 *  - the Grants page refuses a pattern holding a raw U+200B before sending,
 *    naming the code point, and the hub refuses it too;
 *  - the actions list shows a command with a right-to-left override, and a
 *    token name with one, as visible escapes.
 */
import { expect, test } from "@playwright/test";
import { leaseholdCli, sharedSignIn, signedInAs } from "./support/admins";
import { virtualAuthenticator } from "./support/passkeys";
import { closeOpenAgents, connectAgent, runCommand, structured } from "./support/mcp-agent";
import { allowSimilarButton, openItem } from "./support/queue";
import { freeHostLocal } from "./support/leases";

/** The owner's tests need "an owner, signed in", not a fresh account each: one sign-in for the file. */
const signedInAsOwner = sharedSignIn("owner");

// A test that fails before its own agent.close() must not leave its session holding host "local" for the next.
test.afterEach(closeOpenAgents);

test.describe.configure({ timeout: 180_000 });

let n = 0;
function marker(prefix: string): string {
  n += 1;
  return `${prefix}-${process.pid}-${n}-${Date.now().toString(36)}`;
}

test("allow similar on a high action: the approval and the grant are signed with the passkey; the form says the next runs skip a person and the passkey; the grant is listed as passkey-signed and covers the next identical run", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await virtualAuthenticator(page);
  const account = await signedInAs(page, "approver");
  const section = page.getByTestId("passkeys-section");
  await section.getByLabel("Name for a new passkey").fill("e2e grant key");
  await section.getByRole("button", { name: "Register a passkey" }).click();
  await expect(section.getByRole("status")).toContainText('Passkey "e2e grant key" registered.');

  await page.goto("/approvals");
  freeHostLocal(account.name);
  const mk = marker("similar");
  const command = `rm -rf ./${mk}`;
  const agent = await connectAgent("similar");
  const call = runCommand(agent, command);
  const item = page.locator("article.approval", { hasText: mk });
  await expect(item).toBeVisible({ timeout: 30_000 });
  await expect(item.locator(".badge.risk-high").first()).toBeVisible();
  await allowSimilarButton(await openItem(item)).click();
  const form = item.getByRole("form", { name: "Proposed grant" });
  await expect(form.getByLabel("Up to risk")).toHaveValue("high");
  await form.getByLabel("Uses").fill("2");
  const consequence = form.getByTestId("grant-consequence");
  await expect(consequence).toContainText("the next 2 matching actions on local will run with no person approving them and no passkey");
  await expect(form.getByTestId("grant-passkey-note")).toContainText("this grant is signed by it once, over its whole scope");
  await page.screenshot({ path: "test-results/allow-similar-passkey-1280.png", fullPage: true });
  await form.getByRole("button", { name: "Approve and sign grant with passkey" }).click();
  await expect(page.getByTestId("approvals-message")).toContainText(/created grant [0-9a-f]{8}, signed with your passkey: the next 2 similar runs on local will skip a person/);
  const first = structured(await call);
  expect(first["decision"], JSON.stringify(first)).toBe("approved");

  // Listed as signed with a passkey, on the Grants page and by the CLI.
  await page.goto("/grants");
  const row = page.locator("tr", { hasText: mk });
  await expect(row).toBeVisible();
  await expect(row).toContainText("signed with a passkey");
  await expect(row.locator(".badge.risk-high").first()).toBeVisible();

  // The grant covers the next identical run: no person, no passkey.
  const again = structured(await runCommand(agent, command));
  expect(again["decision"], JSON.stringify(again)).toBe("grant");
  await agent.close();
});

test("the Grants page refuses a pattern holding a raw U+200B before sending, naming the code point; written as an escape the grant is created; the CLI refuses the raw one too", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  const account = await signedInAsOwner(page);
  await page.goto("/grants");
  const mk = marker("zw");
  const patternBox = page.getByLabel(/Command pattern/);
  await patternBox.fill(`r\u200bm -rf ${mk}`);
  const problem = page.getByTestId("grant-pattern-hidden");
  await expect(problem).toContainText("U+200B at 2");
  await expect(problem).toContainText(String.raw`r\u200bm -rf ${mk}`);
  await expect(page.getByRole("button", { name: "Create grant" })).toBeDisabled();
  expect(await problem.textContent()).not.toMatch(/\u200b/u);
  await page.screenshot({ path: "test-results/grants-invisible-pattern-1280.png", fullPage: true });

  await patternBox.fill(String.raw`r\u200bm -rf ${mk}`);
  await expect(problem).toHaveCount(0);
  await page.getByRole("button", { name: "Create grant" }).click();
  await expect(page.getByTestId("grant-created")).toBeVisible();
  await expect(page.locator("tr", { hasText: mk })).toContainText(String.raw`r\u200bm -rf ${mk}`);

  let refused = "";
  try {
    leaseholdCli(["grant", "create", "--tool", "run_command", "--host", "local", "--max-risk", "low", "--uses", "1", "--expires", "1h", "--pattern", `r\u200bm -rf ${mk}`, "--as", account.name]);
  } catch (error) {
    refused = String((error as { stderr?: string }).stderr ?? error);
  }
  expect(refused).toContain("INVALID_ARGUMENT");
  expect(refused).toContain("U+200B at 2");
});

test("the actions list shows a command holding a right-to-left override and a zero-width space as visible escapes, never raw (list row and action page)", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  const account = await signedInAsOwner(page);
  const mk = marker("rlo");
  const agent = await connectAgent("rlo");
  // Held (text.invisible-characters keeps it from running unseen); denied below once checked.
  const call = runCommand(agent, `echo ${mk} ftm\u202eexe.sh r\u200bm`);
  await page.goto(`/actions?q=${encodeURIComponent(mk)}`);
  const row = page.getByTestId("actions-table").locator("tbody tr", { hasText: mk });
  await expect(async () => {
    await page.reload();
    await expect(row).toBeVisible({ timeout: 2_000 });
  }).toPass({ timeout: 30_000 });
  await expect(row).toContainText(String.raw`echo ${mk} ftm\u202eexe.sh r\u200bm`);
  await expect(row).toContainText(`token: ${agent.tokenName}`);
  expect(await row.textContent()).not.toMatch(/[\u202e\u200b]/u);
  await page.screenshot({ path: "test-results/actions-list-bidi-1280.png", fullPage: true });
  const href = await row.getByRole("link").first().getAttribute("href");
  const actionId = href?.split("/").pop() ?? "";
  await row.getByRole("link").first().click();
  await expect(page.getByText(String.raw`ftm\u202eexe.sh r\u200bm`).first()).toBeVisible();
  expect(await page.locator("main").textContent()).not.toMatch(/[\u202e\u200b]/u);
  leaseholdCli(["approvals", "deny", actionId, "--reason", "e2e clean-up", "--as", account.name]);
  expect(structured(await call)["code"]).toBe("APPROVAL_DENIED");
  await agent.close();
});
