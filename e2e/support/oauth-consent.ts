/**
 * The person's half of an OAuth flow, driven in the browser: open the
 * authorization URL a client produced, sign in when the hub sends the
 * visitor to /sign-in (and check it comes back), read the consent page,
 * narrow it, and Approve (with the admin's password) or Deny. The browser then lands on the client's
 * loopback redirect URI, which the client itself serves.
 */
import { expect, type Page } from "@playwright/test";

export interface Admin {
  name: string;
  password: string;
}

/**
 * Signs in on `base` (the hub's public URL) as the first admin with the
 * one-time password the hub's first start printed, and replaces it.
 */
export async function renewFirstAdmin(page: Page, base: string, hubOutput: string): Promise<Admin> {
  const match = /^\s*admin:\s+(\S+) \/ (\S+)/m.exec(hubOutput);
  if (match === null) throw new Error(`the hub's first start printed no admin line:\n${hubOutput}`);
  const [, name, oneTime] = match as unknown as [string, string, string];
  return renewOneTimePassword(page, base, name, oneTime);
}

/** Signs in with a one-time password (as `leasehold admin create` prints it) and replaces it. */
export async function renewOneTimePassword(page: Page, base: string, name: string, oneTime: string): Promise<Admin> {
  await page.goto(`${base}/sign-in`);
  await signInHere(page, { name, password: oneTime });
  await expect(page).toHaveURL(/\/change-password$/);
  await page.waitForLoadState("networkidle");
  await expect(page.getByRole("button", { name: "Change password" })).toBeEnabled();
  const renewed = `${oneTime}-renewed-by-e2e`;
  await page.getByLabel("One-time password").fill(oneTime);
  await page.getByLabel("New password", { exact: true }).fill(renewed);
  await page.getByLabel("Repeat the new password").fill(renewed);
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page).toHaveURL(/\/account\?welcome=1$/);
  return { name, password: renewed };
}

/** Fills the sign-in form on the current page (once React has hydrated it: typing earlier is wiped). */
async function signInHere(page: Page, admin: Admin): Promise<void> {
  await page.waitForLoadState("networkidle");
  await expect(page.getByRole("button", { name: "Sign in", exact: true })).toBeEnabled();
  await page.getByLabel("User name").fill(admin.name);
  await page.getByLabel("Password", { exact: true }).fill(admin.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/** Same path and the same query parameters (order and percent-encoding aside). */
function sameRequest(a: URL, b: URL): boolean {
  const sorted = (u: URL) => JSON.stringify([...u.searchParams.entries()].sort(([x, xv], [y, yv]) => (x === y ? xv.localeCompare(yv) : x.localeCompare(y))));
  return a.pathname === b.pathname && sorted(a) === sorted(b);
}

export interface ConsentChoice {
  decision: "Approve" | "Deny";
  readOnly?: boolean;
  /** The client's redirect URI: the browser must end there. */
  redirectUri: string;
  /** The name the consent page must show in its heading (`Authorize <name>`). */
  clientName: string;
  /** The client id the page must show (the CIMD URL, or the `dyn_` id after registration). */
  clientId?: string | RegExp;
}

export interface ConsentOutcome {
  /** Where the browser was sent: `redirectUri?code=…&state=…&iss=…` or `?error=access_denied…`. */
  redirected: URL;
  /** Lines for the transcript: what the page showed and what was chosen. */
  transcript: string[];
}

/**
 * Opens `authorizationUrl` in a browser that is NOT signed in, so the hub
 * must send it to /sign-in?next=… and back; consents as `admin`.
 */
export async function consentInBrowser(page: Page, authorizationUrl: string, admin: Admin, choice: ConsentChoice): Promise<ConsentOutcome> {
  const transcript: string[] = [];
  const wanted = new URL(authorizationUrl);
  await page.goto(authorizationUrl);
  await expect(page).toHaveURL(/\/sign-in\?next=/);
  const next = new URL(page.url()).searchParams.get("next") ?? "";
  // The same request, however its query was re-encoded on the way.
  expect(sameRequest(new URL(next, wanted.origin), wanted), `the sign-in page must be told to come back to the same request (next=${next})`).toBe(true);
  transcript.push(`(browser) GET ${wanted.pathname}?… -> /sign-in?next=${wanted.pathname}?… (not signed in)`);
  await signInHere(page, admin);
  await expect(page).toHaveURL((u) => sameRequest(u, wanted));
  transcript.push(`(browser) signed in as ${admin.name} -> back at ${wanted.pathname}?… (same query)`);

  await expect(page.getByRole("heading", { name: `Authorize ${choice.clientName}` })).toBeVisible();
  const main = page.locator("main");
  if (choice.clientId !== undefined) await expect(main).toContainText(choice.clientId);
  await expect(main).toContainText(new URL(choice.redirectUri).host);
  for (const scope of (wanted.searchParams.get("scope") ?? "").split(" ").filter(Boolean)) await expect(main).toContainText(scope);
  const readOnly = page.getByLabel("Read-only");
  await expect(readOnly).toBeVisible();
  // The buttons are enabled once React has hydrated the form: a box ticked earlier would be reset.
  await expect(page.getByRole("button", { name: choice.decision, exact: true })).toBeEnabled();
  await expect(page.getByLabel("Access expires")).toBeVisible();
  transcript.push(`(browser) consent page: "Authorize ${choice.clientName}", scopes ${wanted.searchParams.get("scope")}, redirect host ${new URL(choice.redirectUri).host}`);
  if (choice.readOnly === true) await readOnly.check();
  else await expect(readOnly).not.toBeChecked();

  const arrived = page.waitForURL((u) => `${u.origin}${u.pathname}` === choice.redirectUri, { timeout: 30_000 });
  // Approve carries the owner's password in the same call (a signed-in session alone approves nothing); Deny needs none.
  const password = page.getByLabel("Your password");
  await expect(password).toBeVisible();
  if (choice.decision === "Approve") {
    await password.fill(admin.password);
    transcript.push("(browser) password entered for Approve");
  }
  await page.getByRole("button", { name: choice.decision, exact: true }).click();
  await arrived;
  const redirected = new URL(page.url());
  const shown = [...redirected.searchParams.keys()].map((k) => (k === "code" ? "code=…" : k === "state" ? "state=…" : `${k}=${redirected.searchParams.get(k)}`)).join("&");
  transcript.push(`(browser) ${choice.decision}${choice.readOnly === true ? " with Read-only ticked" : ""} -> ${choice.redirectUri}?${shown}`);
  return { redirected, transcript };
}
