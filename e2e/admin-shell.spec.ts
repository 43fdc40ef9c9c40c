import { expect, test } from "@playwright/test";

test("the admin shell renders hub health read through tRPC, under the hub's CSP, with no CSP violation", async ({ page }) => {
  const trpcCalls: string[] = [];
  const violations: string[] = [];
  page.on("request", (req) => {
    if (req.url().includes("/api/trpc/")) trpcCalls.push(req.url());
  });
  page.on("console", (msg) => {
    if (/Content Security Policy|Refused to (execute|load|apply|connect)/i.test(msg.text())) violations.push(msg.text());
  });
  const response = await page.goto("/");
  const headers = response?.headers() ?? {};
  expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
  expect(headers["content-security-policy"]).toContain("default-src 'self'");
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("no-referrer");
  await expect(page).toHaveTitle("Leasehold admin");
  await expect(page.getByRole("heading", { name: "Hub overview" })).toBeVisible();
  await expect(page.getByTestId("health-status")).toHaveText("ok");
  await expect(page.getByTestId("health-database")).toHaveText("pglite");
  await expect(page.getByTestId("health-migrations")).toHaveText(/^(\d+) of \1$/);
  await expect(page.getByTestId("health-version")).toHaveText(/^\d+\.\d+\.\d+/);
  expect(trpcCalls.some((u) => u.includes("health.get"))).toBe(true);
  expect(violations).toEqual([]);
});

test("health JSON without login says only status and version, as the page's version", async ({ page, request }) => {
  const res = await request.get("/api/health");
  expect(res.ok()).toBe(true);
  expect(res.headers()["x-content-type-options"]).toBe("nosniff");
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["status", "version"]);
  expect(body.status).toBe("ok");
  await page.goto("/");
  await expect(page.getByTestId("health-version")).toHaveText(String(body.version));
});
