/**
 * The sandbox-first box on the tokens page, against the real hub: ticking
 * it makes a token whose observe scope is `any` (the CLI's `token list` says
 * so), it cannot be ticked together with Read-only, and the list marks the
 * token. What such a token does is tested through an MCP client in
 * test/guest/mcp-observe-scope.test.ts.
 */
import { expect, test } from "@playwright/test";
import { leaseholdCli, signedInAs } from "./support/admins";

test("tokens: the Sandbox-first box makes an observe-any token, excludes Read-only, and the list and the CLI say so", async ({ page }) => {
  const owner = await signedInAs(page, "owner");
  await page.goto("/tokens");
  await expect(page.getByRole("heading", { name: "Agent tokens" })).toBeVisible();
  const name = `observe-${Date.now().toString(36)}`;
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("Expires after").selectOption("1h");

  const sandboxFirst = page.getByTestId("token-observe-any-input");
  const readOnly = page.getByLabel("Read-only (no mutating tools)");
  await expect(page.getByText("whatever its risk; writes and network")).toBeVisible();
  // The two contradict each other: ticking one disables the other.
  await readOnly.check();
  await expect(sandboxFirst).toBeDisabled();
  await readOnly.uncheck();
  await sandboxFirst.check();
  await expect(readOnly).toBeDisabled();

  await page.getByRole("button", { name: "Create token" }).click();
  const prompt = page.getByRole("dialog", { name: "Confirm your password" });
  await page.getByLabel("Your password", { exact: true }).fill(owner.password);
  await prompt.getByRole("button", { name: "Confirm" }).click();
  await expect(page.getByTestId("token-created")).toBeVisible();
  await page.getByRole("button", { name: "Done — hide the secret" }).click();

  const row = page.getByTestId(`token-${name}`);
  await expect(row).toContainText("read-write");
  await expect(row.getByTestId("token-observe-any")).toContainText("sandbox-first (observe any)");
  expect(leaseholdCli(["token", "list"])).toMatch(new RegExp(`"${name}"\\s+read-write; observe=any;`));
});
