import { expect, test } from "@playwright/test";
import { BINDING_STORAGE_KEY, SESSION_COOKIE, boundHeaders, createAccount, signIn, signedInAs } from "./support/admins";

test("a visitor is sent to sign-in, under the hub's CSP, with no CSP violation", async ({ page }) => {
  const violations: string[] = [];
  page.on("console", (msg) => {
    if (/Content Security Policy|Refused to (execute|load|apply|connect)/i.test(msg.text())) violations.push(msg.text());
  });
  const response = await page.goto("/");
  await expect(page).toHaveURL(/\/sign-in$/);
  const headers = response?.headers() ?? {};
  expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
  expect(headers["content-security-policy"]).toContain("default-src 'self'");
  // Scripts only with this render's nonce: no 'unsafe-inline' for scripts.
  const scriptSrc = /script-src ([^;]*)/.exec(headers["content-security-policy"] ?? "")?.[1] ?? "";
  expect(scriptSrc).toMatch(/'nonce-[A-Za-z0-9+/=]{20,}' 'strict-dynamic'/);
  expect(scriptSrc).not.toContain("unsafe-inline");
  const again = (await page.request.get("/sign-in")).headers()["content-security-policy"];
  expect(again).not.toBe(headers["content-security-policy"]); // a fresh nonce per render
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("no-referrer");
  await expect(page).toHaveTitle("Leasehold admin");
  await expect(page.getByRole("button", { name: "Sign in", exact: true })).toBeEnabled();
  // Hydrated (React handles the form, so the nonce'd scripts ran): a wrong sign-in shows the hub's message in place.
  await page.getByLabel("User name").fill("nobody");
  await page.getByLabel("Password", { exact: true }).fill("nothing");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  // People read the hub's words; the stable code stays for programs (app/_lib/errors.ts).
  await expect(page.locator(".state-error")).toContainText("Wrong user name or password");
  expect(violations).toEqual([]);
});

test("a wrong password is refused with a clear message and no session cookie", async ({ page, context }) => {
  const account = createAccount("auditor");
  await signIn(page, { ...account, password: "not-the-password" });
  await expect(page.locator(".state-error")).toHaveText("Wrong user name or password");
  expect((await context.cookies()).filter((c) => c.name.includes("leasehold_session"))).toEqual([]);
});

test("the first sign-in forces a password change, then the dashboard shows hub health through tRPC", async ({ page, context }) => {
  const trpcCalls: string[] = [];
  page.on("request", (req) => {
    if (req.url().includes("/api/trpc/")) trpcCalls.push(req.url());
  });
  const account = createAccount("owner");
  await signIn(page, account);
  await expect(page).toHaveURL(/\/change-password$/);
  // Until the one-time password is replaced, the admin pages send the person back here.
  await page.goto("/");
  await expect(page).toHaveURL(/\/change-password$/);
  const cookie = (await context.cookies()).find((c) => c.name === SESSION_COOKIE);
  expect(cookie?.httpOnly).toBe(true);
  expect(cookie?.sameSite).toBe("Lax");
  // http://localhost is a secure context: Secure, and the __Host- prefix (no Domain, Path=/).
  expect(cookie?.secure).toBe(true);
  await expect(page.getByRole("button", { name: "Change password" })).toBeEnabled();
  await page.getByLabel("One-time password").fill(account.password);
  await page.getByLabel("New password", { exact: true }).fill("short");
  await page.getByLabel("Repeat the new password").fill("short");
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page.locator(".state-error")).toContainText("at least 12 characters");
  await page.getByLabel("New password", { exact: true }).fill("a long enough pass phrase");
  await page.getByLabel("Repeat the new password").fill("a long enough pass phrase");
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page.getByTestId("password-changed")).toBeVisible();
  await page.getByRole("link", { name: "Dashboard" }).click();
  await expect(page.getByRole("heading", { name: "Hub overview" })).toBeVisible();
  await expect(page.getByTestId("health-status")).toHaveText("ok");
  await expect(page.getByTestId("health-database")).toHaveText("pglite");
  await expect(page.getByTestId("health-migrations")).toHaveText(/^(\d+) of \1$/);
  await expect(page.getByTestId("signed-in-as")).toContainText(account.name);
  expect(trpcCalls.some((u) => u.includes("health.get"))).toBe(true);
});

test("sign-out ends the session: the old cookie and binding no longer reach a procedure, and the page forgets the binding", async ({ page, context, request }) => {
  await signedInAs(page, "auditor");
  const headers = await boundHeaders(page, context);
  const before = await request.get("/api/trpc/health.get", { headers });
  expect(before.status()).toBe(200);
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/sign-in$/);
  const after = await request.get("/api/trpc/health.get", { headers });
  expect(after.status()).toBe(401);
  expect(await page.evaluate((key) => window.localStorage.getItem(key), BINDING_STORAGE_KEY)).toBeNull();
});

test("sign-in is rate-limited after five failures for one name, even with the right password", async ({ page }) => {
  const account = createAccount("approver");
  for (let i = 0; i < 5; i++) {
    await signIn(page, { ...account, password: `wrong-${i}` });
    await expect(page.locator(".state-error")).toContainText("Wrong user name or password");
  }
  await signIn(page, account);
  await expect(page.locator(".state-error")).toContainText(/Too many failed sign-ins; try again in \d+ s/);
});

test("a POST to tRPC from another origin is refused before it reaches a procedure", async ({ request }) => {
  const res = await request.post("/api/trpc/auth.signIn", { headers: { origin: "https://evil.example", "content-type": "application/json" }, data: { username: "x", password: "y" } });
  expect(res.status()).toBe(403);
  expect((await res.json()).message).toContain("is not this hub's");
});

test("health JSON without login says only status and version", async ({ request }) => {
  const res = await request.get("/api/health");
  expect(res.ok()).toBe(true);
  expect(res.headers()["x-content-type-options"]).toBe("nosniff");
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["status", "version"]);
  expect(body.status).toBe("ok");
});
