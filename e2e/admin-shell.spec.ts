import { expect, test } from "@playwright/test";

test("the admin shell renders hub health read through tRPC", async ({ page }) => {
  const trpcCalls: string[] = [];
  page.on("request", (req) => {
    if (req.url().includes("/api/trpc/")) trpcCalls.push(req.url());
  });
  await page.goto("/");
  await expect(page).toHaveTitle("Leasehold admin");
  await expect(page.getByRole("heading", { name: "Hub overview" })).toBeVisible();
  await expect(page.getByTestId("health-status")).toHaveText("ok");
  await expect(page.getByTestId("health-database")).toHaveText("pglite");
  await expect(page.getByTestId("health-migrations")).toHaveText(/^(\d+) of \1$/);
  await expect(page.getByTestId("health-version")).toHaveText(/^\d+\.\d+\.\d+/);
  expect(trpcCalls.some((u) => u.includes("health.get"))).toBe(true);
});

test("health JSON matches what the page shows", async ({ request }) => {
  const res = await request.get("/api/health");
  expect(res.ok()).toBe(true);
  const body = (await res.json()) as { status: string; database: { kind: string } };
  expect(body).toMatchObject({ status: "ok", database: { kind: "pglite" } });
});
