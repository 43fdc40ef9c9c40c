/**
 * The owner's admin pages against the real hub and its real local guest:
 * tokens (re-authentication, the secret once, the MCP settings an SDK client
 * connects with, revocation the client feels), grants, users (a new account
 * signs in and sees only its sections) and hosts (host "local" online with
 * its tier; breaking a lease an MCP client holds). Screenshots of each page
 * at 1280 and 390 px go to test-results/.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect, test, type Page } from "@playwright/test";
import { boundHeaders, leaseholdCli, sharedSignIn, signIn } from "./support/admins";

/** The tests here need "an owner, signed in", not a fresh account each: one sign-in for the file. */
const signedInAsOwner = sharedSignIn("owner");

async function mcpClient(url: string, secret: string): Promise<Client> {
  const client = new Client({ name: "admin-pages-e2e", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${secret}` } } }));
  return client;
}

/** A token made the way the brief's e2e makes them: `leasehold token create`; the secret is the second line. */
function cliToken(name: string): string {
  const secret = leaseholdCli(["token", "create", "--name", name, "--expires", "1h"]).split("\n")[1]?.trim();
  if (secret === undefined || !secret.startsWith("lh_")) throw new Error("no token secret printed");
  return secret;
}

async function screenshots(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: `test-results/${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `test-results/${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
}

test("tokens: the owner re-authenticates, sees the secret once with its MCP settings; an SDK client calls health with it, and is refused once it is revoked", async ({ page }) => {
  const owner = await signedInAsOwner(page);
  await page.goto("/tokens");
  await expect(page.getByRole("heading", { name: "Agent tokens" })).toBeVisible();
  const name = `e2e-${Date.now().toString(36)}`;
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("Expires after").selectOption("1h");
  await page.getByRole("button", { name: "Create token" }).click();
  // Minting asks for the password first; a wrong one is refused and nothing is minted.
  const prompt = page.getByRole("dialog", { name: "Confirm your password" });
  await expect(prompt).toBeVisible();
  await expect(page.getByLabel("Your password", { exact: true })).toBeFocused();
  await page.getByLabel("Your password", { exact: true }).fill("not-my-password");
  await prompt.getByRole("button", { name: "Confirm" }).click();
  await expect(prompt.locator(".state-error")).toContainText("The password is wrong");
  await expect(prompt.locator(".state-error")).not.toContainText("FORBIDDEN");
  await expect(page.getByTestId("token-created")).toHaveCount(0);
  await page.getByLabel("Your password", { exact: true }).fill(owner.password);
  await prompt.getByRole("button", { name: "Confirm" }).click();

  await expect(page.getByTestId("token-created")).toBeVisible();
  const secret = (await page.getByTestId("token-secret").textContent())?.trim() ?? "";
  expect(secret).toMatch(/^lh_/);
  await expect(page.getByRole("button", { name: "Copy secret" })).toBeVisible();
  await expect(page.getByTestId("mcp-command")).toContainText(`--header "Authorization: Bearer ${secret}"`);
  const settings = JSON.parse((await page.getByTestId("mcp-json").textContent()) ?? "") as { mcpServers: { leasehold: { type: string; url: string; headers: { Authorization: string } } } };
  expect(settings.mcpServers.leasehold.type).toBe("http");
  expect(settings.mcpServers.leasehold.headers.Authorization).toBe(`Bearer ${secret}`);
  await screenshots(page, "tokens-secret-shown-once");

  // The ready-to-paste settings work: the official SDK client connects with them and calls `health`.
  const client = await mcpClient(settings.mcpServers.leasehold.url, secret);
  const health = await client.callTool({ name: "health", arguments: {} });
  expect(health.isError).not.toBe(true);
  expect(JSON.stringify(health.structuredContent ?? health.content)).toContain("ledger");

  // Done hides the secret for good: the list shows the token, never its secret.
  await page.getByRole("button", { name: "Done — hide the secret" }).click();
  const row = page.getByTestId(`token-${name}`);
  await expect(row).toContainText("active");
  await expect(page.getByText(secret)).toHaveCount(0);
  await screenshots(page, "tokens");

  await row.getByRole("button", { name: `Revoke ${name}` }).click();
  await row.getByRole("button", { name: "Confirm revoke" }).click();
  await expect(page.getByTestId("revoke-result")).toContainText("Revoked:");
  await expect(row).toContainText("revoked");
  // The connected client's next call is refused, and a new connection too.
  await expect(client.callTool({ name: "health", arguments: {} })).rejects.toThrow(/401|revoked|Unauthorized|invalid_token/i);
  await expect(mcpClient(settings.mcpServers.leasehold.url, secret)).rejects.toThrow();
  await client.close().catch(() => undefined);
});

test("grants: an owner creates a grant with its whole scope and revokes it", async ({ page }) => {
  await signedInAsOwner(page);
  await page.goto("/grants");
  await expect(page.getByRole("heading", { name: "Grants", exact: true })).toBeVisible();
  // The local guest enrols when the hub starts: the host list offers it.
  await expect(page.getByLabel("Host")).toContainText("local");
  await page.getByLabel("Tool").selectOption("run_command");
  await page.getByLabel("Host").selectOption("local");
  await page.getByLabel("Up to risk").selectOption("medium");
  await page.getByLabel("Uses").fill("2");
  await page.getByLabel("Expires after").fill("1h");
  await page.getByLabel(/Command pattern/).fill("npm test( --silent)?");
  await page.getByRole("button", { name: "Add an environment entry" }).click();
  await page.getByLabel("Environment name 1").fill("CI");
  await page.getByLabel("Environment value 1").fill("1");
  await page.getByLabel(/Working directory/).fill("app");
  await page.getByRole("button", { name: "Create grant" }).click();
  await expect(page.getByTestId("grant-created")).toContainText("run_command on local up to medium, 2 uses");
  const row = page.locator('[data-testid^="grant-"]').filter({ hasText: "npm test( --silent)?" });
  await expect(row).toContainText('CI="1"');
  await expect(row).toContainText("cwd app");
  await expect(row).toContainText("stdin none");
  expect(leaseholdCli(["grant", "list"])).toContain('pattern "npm test( --silent)?"');
  await screenshots(page, "grants");
  await row.getByRole("button", { name: "Revoke grant for run_command on local" }).click();
  await row.getByRole("button", { name: "Confirm revoke" }).click();
  await expect(row).toHaveCount(0);
  expect(leaseholdCli(["grant", "list"])).not.toContain("npm test( --silent)?");
});

test("users: the owner adds an approver (one-time password shown once); the approver signs in and sees only their sections", async ({ page, browser }) => {
  await signedInAsOwner(page);
  await page.goto("/users");
  const name = `appr-${Date.now().toString(36)}`;
  await page.getByLabel("User name").fill(name);
  await page.getByLabel("Role", { exact: true }).selectOption("approver");
  await page.getByRole("button", { name: "Add user" }).click();
  await expect(page.getByTestId("one-time-password-card")).toContainText(name);
  const password = (await page.getByTestId("one-time-password").textContent())?.trim() ?? "";
  expect(password.length).toBeGreaterThanOrEqual(12);
  await expect(page.getByTestId(`user-${name}`)).toContainText("one-time password");
  await screenshots(page, "users-one-time-password");
  await page.getByRole("button", { name: "Done — hide it" }).click();
  await expect(page.getByTestId("one-time-password")).toHaveCount(0);
  await screenshots(page, "users");

  const context = await browser.newContext();
  const theirs = await context.newPage();
  await signIn(theirs, { name, password });
  await expect(theirs).toHaveURL(/\/change-password$/);
  await theirs.waitForLoadState("networkidle");
  await theirs.getByLabel("One-time password").fill(password);
  await theirs.getByLabel("New password", { exact: true }).fill("approver pass phrase for e2e");
  await theirs.getByLabel("Repeat the new password").fill("approver pass phrase for e2e");
  await theirs.getByRole("button", { name: "Change password" }).click();
  await expect(theirs).toHaveURL(/\/account\?welcome=1$/);
  const nav = theirs.getByRole("navigation", { name: "Sections" });
  await expect(nav.getByRole("link")).toHaveText(["Dashboard", "Approvals", "Actions", "Hosts", "Grants", "Audit"]);
  // The owner's pages are not theirs: the page sends them away, and the procedure refuses.
  await theirs.goto("/tokens");
  await expect(theirs).toHaveURL(/\/\?forbidden=1$/);
  const refused = await theirs.request.get("/api/trpc/tokens.list", { headers: await boundHeaders(theirs, context) });
  expect(refused.status()).toBe(403);
  // Hosts is theirs to see, without the owner's buttons.
  await theirs.goto("/hosts");
  await expect(theirs.getByRole("heading", { name: "Hosts" })).toBeVisible();
  await expect(theirs.getByRole("heading", { name: "Enrol a host" })).toHaveCount(0);
  await context.close();
});

test("hosts: host local is online with the tier its guest reported, the BPF object that enforces it and the apk-static worker digest requested and verified; the owner breaks a lease an MCP client holds", async ({ page }) => {
  await signedInAsOwner(page);
  const secret = cliToken(`lease-holder-${Date.now().toString(36)}`);
  await page.goto("/hosts");
  await expect(page.getByTestId("host-state-local")).toHaveText("online", { timeout: 90_000 });
  // The tier is what the guest measured on this kernel — the CLI reads the same record.
  const cliTier = /^local\s+online\s+tier (\S+)/m.exec(leaseholdCli(["host", "list"]))?.[1];
  expect(cliTier).toMatch(/^[ABC]$/);
  await expect(page.getByTestId("host-tier-local")).toHaveText(cliTier ?? "?");
  // Tiers A and B name the BPF object that enforces them; C has none.
  const bpf = page.getByTestId("host-bpf-local");
  await expect(bpf).toContainText(cliTier === "C" ? /no BPF object/ : /BPF object sha256 [0-9a-f]{64}/);
  await expect(page.getByTestId("host-ceiling-local")).toContainText("memory");

  const client = await mcpClient(`${new URL(page.url()).origin}/api/mcp`, secret);
  // A bundle worker's identity: the digest the hub requires beside the one the host verified.
  const listed = (await client.callTool({ name: "list_capabilities", arguments: {} })).structuredContent as { capabilities: Array<{ id: string; worker_digest: string | null }> };
  const required = listed.capabilities.find((c) => c.id === "apk-static")?.worker_digest ?? "";
  expect(required).toMatch(/^sha256:[0-9a-f]{64}$/);
  const digests = page.getByTestId("worker-digest-local-apk-static");
  await expect(digests).toContainText(`worker requested ${required} · verified on this host ${required}`);
  await expect(digests).not.toContainText("differs");
  await expect(page.getByTestId("capability-worker-apk-static")).toContainText(required);
  const acquired = (await client.callTool({ name: "lease_acquire", arguments: { host: "local", mode: "exclusive" } })).structuredContent as { lease_id: string };
  expect(acquired.lease_id).toMatch(/^[0-9a-f-]{36}$/);
  const lease = page.getByTestId(`lease-${acquired.lease_id}`);
  await expect(lease).toBeVisible({ timeout: 20_000 });
  await expect(lease).toContainText("exclusive");
  await screenshots(page, "hosts");
  await lease.getByRole("button", { name: "Break lease" }).click();
  await lease.getByRole("button", { name: "Confirm break" }).click();
  await expect(lease).toHaveCount(0);
  expect(leaseholdCli(["lease", "list"])).not.toContain(acquired.lease_id);
  const status = (await client.callTool({ name: "lease_status", arguments: { host: "local" } })).structuredContent as Record<string, unknown>;
  expect(JSON.stringify(status)).not.toContain(acquired.lease_id);

  // Enrol a host: the re-authenticated owner gets a one-time code fed on stdin, never in the guest's argv.
  await page.getByLabel("Host name").fill("web-1");
  await page.getByRole("button", { name: "Mint enrolment code" }).click();
  // Four steps that work on a fresh host: build, the ceiling file, enrol (code on stdin), run — with the checkout's own executable.
  await expect(page.getByTestId("enrol-result").locator("ol.enrol-steps > li")).toHaveCount(4);
  const command = (await page.getByTestId("enrol-step-3").locator("pre").textContent()) ?? "";
  expect(command).toMatch(/^printf '%s\\n' 'lhe_[a-z2-7]+' \| node bin\/leasehold-guest\.mjs enrol --hub http:\/\/\S+$/);
  expect(command.split(" | ")[1]).not.toContain("lhe_");
  await expect(page.getByTestId("enrol-step-2").locator("pre")).toContainText('"exec_dirs"');
  await expect(page.getByTestId("enrol-step-4").locator("pre")).toHaveText("node bin/leasehold-guest.mjs run --ceiling /etc/leasehold/ceiling.json");
  await screenshots(page, "hosts-enrol");
  await client.close();
});
