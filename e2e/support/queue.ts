/**
 * The approvals queue as a person uses it (app/(admin)/approvals): one row
 * per held action, opened in place; every control named with the command
 * ("Approve `chmod …` on local").
 */
import { expect, type Locator, type Page } from "@playwright/test";

/** The row (held or decided) whose first ~80 characters of command contain `text`. */
export function queueItem(page: Page, text: string): Locator {
  return page.locator("article.approval", { hasText: text });
}

/** Waits for the held row and opens it (its toggle, the row's heading button); returns the row. */
export async function openItem(item: Locator): Promise<Locator> {
  const toggle = item.locator("button.approval-toggle");
  await expect(toggle).toBeVisible();
  if ((await toggle.getAttribute("aria-expanded")) !== "true") await toggle.click();
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  return item;
}

/** The row's Approve button (not "Approve … and allow similar…"). */
export function approveButton(item: Locator, options: { passkey?: boolean } = {}): Locator {
  return item.getByRole("button", { name: options.passkey === true ? /^Approve with passkey: `.*` on \S+$/ : /^Approve `.*` on \S+$/ });
}

export function denyButton(item: Locator): Locator {
  return item.getByRole("button", { name: /^Deny `.*` on \S+…$/ });
}

export function allowSimilarButton(item: Locator): Locator {
  return item.getByRole("button", { name: /^Approve and allow similar: `.*` on \S+…$/ });
}
