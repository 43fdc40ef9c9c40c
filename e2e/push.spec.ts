/**
 * Web Push in the browser, as far as a headless Chromium without internet
 * can go: the account page's Notifications card, the service worker's
 * registration (scope `/`, served to anyone at `/push-sw.js`), the worker's
 * own push handler (a message delivered through the DevTools protocol, as
 * the browser delivers a decrypted one, becomes a notification whose data
 * is the approval card's URL), listing and removing a subscribed browser,
 * and an auditor's card. What it cannot do: subscribe through a real push
 * service (Chromium's is on the internet), so the hub's sending, encryption
 * and pruning are tested against a local push service in
 * server/push/push.test.ts instead.
 */
import { expect, test } from "@playwright/test";
import { boundHeaders, signedInAs } from "./support/admins";
import { E2E_BASE_URL } from "./support/hub";

test("the service worker is served to anyone as JavaScript from the root", async ({ request }) => {
  const response = await request.get("/push-sw.js");
  expect(response.status()).toBe(200);
  expect(response.headers()["content-type"]).toMatch(/javascript/);
  expect(await response.text()).toContain('addEventListener("notificationclick"');
});

// @full-browser: the config runs this test in the full chromium, whose service workers keep the notifications they show.
test("an approver's Notifications card registers the service worker; a push it receives shows the held action and links to its card", { tag: "@full-browser" }, async ({ page, context }) => {
  await context.grantPermissions(["notifications"], { origin: E2E_BASE_URL });
  await signedInAs(page, "approver");
  await page.goto("/account#notifications");
  const card = page.getByTestId("push-section");
  await expect(card).toBeVisible();
  await expect(page.getByTestId("push-worker")).toHaveAttribute("data-state", "registered");
  await expect(page.getByTestId("push-worker")).toContainText(`scope ${E2E_BASE_URL}/`);
  await expect(card.getByRole("button", { name: "Notify this browser of held actions" })).toBeEnabled();
  await expect(card.getByText("No browser of yours is subscribed.")).toBeVisible();
  const script = await page.evaluate(async () => (await navigator.serviceWorker.getRegistration("/"))?.active?.scriptURL ?? null);
  expect(script).toBe(`${E2E_BASE_URL}/push-sw.js`);

  // The worker's push handler, fed a message as the browser hands over a decrypted one.
  const cdp = await context.newCDPSession(page);
  const registrationId = new Promise<string>((resolve) => {
    cdp.on("ServiceWorker.workerRegistrationUpdated", ({ registrations }: { registrations: Array<{ registrationId: string; scopeURL: string; isDeleted: boolean }> }) => {
      const ours = registrations.find((r) => r.scopeURL === `${E2E_BASE_URL}/` && !r.isDeleted);
      if (ours !== undefined) resolve(ours.registrationId);
    });
  });
  await cdp.send("ServiceWorker.enable");
  const approvalId = "0b7c4f3e-5d2a-4c19-9e8f-2a6b1c3d4e5f";
  const payload = {
    type: "approval.requested",
    approval_id: approvalId,
    action_id: "1c8d5a4f-6e3b-4d2a-8f9a-3b7c2d4e5f60",
    title: "Approval needed: run_command on local",
    body: "rm -rf ./build — high risk, decide before 12:00 UTC",
    url: `${E2E_BASE_URL}/approvals#${approvalId}`,
  };
  await cdp.send("ServiceWorker.deliverPushMessage", { origin: E2E_BASE_URL, registrationId: await registrationId, data: JSON.stringify(payload) });
  await expect
    .poll(() =>
      page.evaluate(async (tag) => {
        const registration = await navigator.serviceWorker.getRegistration("/");
        return (await registration!.getNotifications({ tag })).map((n) => ({ title: n.title, body: n.body, url: (n.data as { url: string }).url }));
      }, approvalId),
    )
    .toEqual([{ title: payload.title, body: payload.body, url: payload.url }]);

  // A payload naming another origin opens this hub's approvals page, never that origin.
  const foreign = { ...payload, approval_id: "2d9e6b5a-7f4c-4e3b-9a0b-4c8d3e5f6a71", url: "https://evil.example/approvals#2d9e6b5a-7f4c-4e3b-9a0b-4c8d3e5f6a71" };
  await cdp.send("ServiceWorker.deliverPushMessage", { origin: E2E_BASE_URL, registrationId: await registrationId, data: JSON.stringify(foreign) });
  await expect
    .poll(() =>
      page.evaluate(async (tag) => {
        const registration = await navigator.serviceWorker.getRegistration("/");
        return (await registration!.getNotifications({ tag })).map((n) => (n.data as { url: string }).url);
      }, foreign.approval_id),
    )
    .toEqual([`${E2E_BASE_URL}/approvals#${foreign.approval_id}`]);

  // Subscribing needs the browser's push service, which is on the internet: here it fails, and says so in words; nothing is stored.
  await card.getByRole("button", { name: "Notify this browser of held actions" }).click();
  const failed = card.getByText(/This browser could not be subscribed/);
  const subscribed = card.getByTestId("push-row");
  await expect(failed.or(subscribed).first()).toBeVisible({ timeout: 30_000 });
  if (await failed.isVisible()) await expect(subscribed).toHaveCount(0);
});

test("a subscribed browser is listed on its admin's card and removed from there; another admin sees none of it; an auditor's card says why it offers nothing", async ({ page, context, browser }) => {
  await signedInAs(page, "approver");
  await page.goto("/account#notifications");
  await expect(page.getByTestId("push-worker")).toHaveAttribute("data-state", "registered");
  // A subscription as a browser whose push service is reachable would send it (the endpoint is never contacted here).
  const p256dh = await page.evaluate(async () => {
    const pair = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])) as CryptoKeyPair;
    const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
    return btoa(String.fromCharCode(...raw)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  });
  const headers = { ...(await boundHeaders(page, context)), origin: E2E_BASE_URL, "content-type": "application/json" };
  const saved = await page.request.post("/api/trpc/push.subscribe", {
    headers,
    data: { endpoint: `https://push.example.invalid/send/${Date.now().toString(36)}`, keys: { p256dh, auth: "AAECAwQFBgcICQoLDA0ODw" }, label: "Phone on Android" },
  });
  expect(saved.status(), await saved.text()).toBe(200);
  const refused = await page.request.post("/api/trpc/push.subscribe", { headers, data: { endpoint: "http://127.0.0.1:9/push", keys: { p256dh, auth: "AAECAwQFBgcICQoLDA0ODw" }, label: "plain http" } });
  expect(refused.status()).toBe(400);

  await page.reload();
  const row = page.getByTestId("push-row");
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("Phone on Android");
  await expect(row).toContainText("https://push.example.invalid");

  const other = await browser.newContext();
  const otherPage = await other.newPage();
  await signedInAs(otherPage, "owner");
  await otherPage.goto("/account#notifications");
  await expect(otherPage.getByText("No browser of yours is subscribed.")).toBeVisible();
  await other.close();

  await row.getByRole("button", { name: "Remove Phone on Android" }).click();
  await expect(row).toHaveCount(0);
  await expect(page.getByText("No browser of yours is subscribed.")).toBeVisible();

  const auditorContext = await browser.newContext();
  const auditor = await auditorContext.newPage();
  await signedInAs(auditor, "auditor");
  await auditor.goto("/account#notifications");
  await expect(auditor.getByText(/your role does not decide actions/)).toBeVisible();
  await expect(auditor.getByRole("button", { name: "Notify this browser of held actions" })).toHaveCount(0);
  await auditorContext.close();
});
