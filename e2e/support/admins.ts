/**
 * Admin accounts for browser tests, made the way a person makes them: the
 * CLI (`leasehold admin create`, against the hub the Playwright config
 * started) prints a one-time password; the browser signs in and replaces it.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { expect, type BrowserContext, type Page } from "@playwright/test";
import { E2E_DATA_DIR, E2E_PORT } from "./hub";

export type Role = "owner" | "approver" | "auditor";

export interface Account {
  name: string;
  password: string;
}

let counter = 0;

/** Runs the `leasehold` CLI against the test hub; returns stdout. */
export function leaseholdCli(args: string[], input?: string): string {
  return execFileSync(process.execPath, [path.join(import.meta.dirname, "..", "..", "bin", "leasehold.mjs"), ...args], {
    env: { ...process.env, LEASEHOLD_PORT: String(E2E_PORT), LEASEHOLD_DATA_DIR: E2E_DATA_DIR },
    encoding: "utf8",
    ...(input === undefined ? {} : { input }),
  });
}

/** A new admin with `role` and its one-time password (not yet changed). */
export function createAccount(role: Role, prefix = role): Account {
  counter += 1;
  const name = `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
  const out = leaseholdCli(["admin", "create", "--name", name, "--role", role]);
  const password = /^password: (\S+)$/m.exec(out)?.[1];
  if (password === undefined) throw new Error(`no password in: ${out}`);
  return { name, password };
}

export async function signIn(page: Page, account: Account): Promise<void> {
  await page.goto("/sign-in");
  // The button is enabled once React has hydrated the form; typing earlier would be wiped.
  await expect(page.getByRole("button", { name: "Sign in", exact: true })).toBeEnabled();
  await page.getByLabel("User name").fill(account.name);
  await page.getByLabel("Password", { exact: true }).fill(account.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/** Creates an admin, signs in, replaces the one-time password; the page ends signed in on /account. */
export async function signedInAs(page: Page, role: Role): Promise<Account> {
  const account = createAccount(role);
  await signIn(page, account);
  await expect(page).toHaveURL(/\/change-password$/);
  await expect(page.getByRole("button", { name: "Change password" })).toBeEnabled();
  const next = `${account.password}-renewed-by-e2e`;
  await page.getByLabel("One-time password").fill(account.password);
  await page.getByLabel("New password", { exact: true }).fill(next);
  await page.getByLabel("Repeat the new password").fill(next);
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page).toHaveURL(/\/account\?welcome=1$/);
  return { name: account.name, password: next };
}

/**
 * One account of `role` shared by the tests of a spec file that need only
 * "an admin of that role, signed in" (no fresh account, no first sign-in):
 * the first call signs in as `signedInAs` does and keeps the session (its
 * cookie and the page's binding secret); later calls give their page that
 * session and open /account, as `signedInAs` leaves it. A test that signs
 * out or changes the account's password must use `signedInAs` instead.
 */
export function sharedSignIn(role: Role): (page: Page) => Promise<Account> {
  let kept: { account: Account; state: Awaited<ReturnType<BrowserContext["storageState"]>> } | undefined;
  return async (page) => {
    if (kept === undefined) {
      const account = await signedInAs(page, role);
      kept = { account, state: await page.context().storageState() };
      return account;
    }
    await page.context().addCookies(kept.state.cookies);
    // The binding secret goes into the origin's storage before any admin page loads (health is a page of no script).
    await page.goto("/api/health");
    await page.evaluate((saved) => {
      for (const entry of saved) if (entry.origin === window.location.origin) for (const item of entry.localStorage) window.localStorage.setItem(item.name, item.value);
    }, kept.state.origins);
    await page.goto("/account");
    await expect(page.getByRole("heading", { name: "Your account" })).toBeVisible();
    return kept.account;
  };
}

/**
 * For specs that run a hub of their own (its own port and data directory):
 * a new admin made with that hub's CLI (`cli` runs `leasehold` against it),
 * signed in at `base`, one-time password replaced. Ends signed in on /account.
 */
export async function signedInOnOwnHub(page: Page, base: string, role: Role, cli: (args: string[]) => Promise<{ stdout: string; stderr: string }>): Promise<void> {
  const name = `${role}-${Date.now().toString(36)}`;
  const made = await cli(["admin", "create", "--name", name, "--role", role]);
  const password = /^password: (\S+)$/m.exec(made.stdout)?.[1];
  expect(password, made.stdout + made.stderr).toBeDefined();
  // Filled only once the page's scripts have loaded: a field filled before hydration can be reset by it.
  await page.goto(`${base}/sign-in`);
  await page.waitForLoadState("networkidle");
  await page.getByLabel("User name").fill(name);
  await page.getByLabel("Password", { exact: true }).fill(password!);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page).toHaveURL(/\/change-password$/);
  await page.waitForLoadState("networkidle");
  const next = `${password!}-renewed-by-e2e`;
  await page.getByLabel("One-time password").fill(password!);
  await page.getByLabel("New password", { exact: true }).fill(next);
  await page.getByLabel("Repeat the new password").fill(next);
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page).toHaveURL(/\/account\?welcome=1$/);
}

/** The session cookie's name on the test hub (http://localhost: a secure context, so `__Host-`). */
export const SESSION_COOKIE = "__Host-leasehold_session";
/** Where the admin page keeps its session's binding secret (app/_lib/session-binding.ts), and the header that carries it. */
export const BINDING_STORAGE_KEY = "leasehold.session-binding";
export const BINDING_HEADER = "x-leasehold-session-binding";

/** What a signed-in page sends with each API call: the session cookie and the binding secret from its storage. */
export async function boundHeaders(page: Page, context: BrowserContext): Promise<{ cookie: string; [BINDING_HEADER]: string }> {
  const cookie = (await context.cookies()).find((c) => c.name === SESSION_COOKIE);
  const binding = await page.evaluate((key) => window.localStorage.getItem(key), BINDING_STORAGE_KEY);
  if (cookie === undefined || binding === null) throw new Error("the page is not signed in (no session cookie or binding secret)");
  return { cookie: `${SESSION_COOKIE}=${cookie.value}`, [BINDING_HEADER]: binding };
}
