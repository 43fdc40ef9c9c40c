/**
 * Passkeys end to end in Debian's chromium with its virtual
 * authenticator (CDP WebAuthn domain), against the hub the Playwright config
 * starts (page origin http://localhost:PORT, rpID "localhost") and its real
 * local guest: register a passkey; sign out; sign in with it; an MCP SDK
 * client asks for a `high` command; the approver approves with the passkey;
 * the client receives the result; `leasehold export` + `leasehold verify`
 * check the assertion offline; an assertion made for one action hash is
 * refused for another.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { leaseholdCli, signedInAs } from "./support/admins";
import { freeHostLocal } from "./support/leases";
import { virtualAuthenticator } from "./support/passkeys";
import { closeOpenAgents, connectAgent, connectAgents, structured } from "./support/mcp-agent";
import { approveButton, openItem } from "./support/queue";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

// A test that fails before its own agent.close() must not leave its session holding host "local" for the next.
test.afterEach(closeOpenAgents);

let n = 0;
/** A high-risk command (recursive forced delete) that is harmless in the guest's workspace: the directory does not exist. */
function highCommand(): { command: string; marker: string } {
  n += 1;
  const marker = `pk-${process.pid}-${n}-${Date.now().toString(36)}`;
  return { command: `rm -rf ./${marker}`, marker };
}

/** Runs `command` on host "local", waiting through approval_wait until it is decided and done. */
async function run(agent: Awaited<ReturnType<typeof connectAgent>>, command: string): Promise<CallToolResult> {
  const options = { timeout: 120_000, resetTimeoutOnProgress: true };
  let result = (await agent.client.callTool({ name: "run_command", arguments: { host: "local", command } }, undefined, options)) as CallToolResult;
  // Another spec's agent may still hold host "local" until its lease lapses idle: HOST_BUSY is retryable, so retry for a while.
  for (let i = 0; i < 30 && structured(result)["code"] === "HOST_BUSY"; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    result = (await agent.client.callTool({ name: "run_command", arguments: { host: "local", command } }, undefined, options)) as CallToolResult;
  }
  for (let i = 0; i < 10; i += 1) {
    const s = structured(result);
    if (s["code"] !== "APPROVAL_PENDING" && s["status"] !== "dispatched") return result;
    result = (await agent.client.callTool({ name: "approval_wait", arguments: { action_id: String(s["action_id"]) } }, undefined, options)) as CallToolResult;
  }
  return result;
}

/** A tRPC mutation from inside the page (its cookie and Origin), returning the JSON body. */
async function trpcPost(page: Page, procedure: string, input: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  return page.evaluate(
    async ({ procedure, input }) => {
      const binding = window.localStorage.getItem("leasehold.session-binding") ?? "";
      const response = await fetch(`/api/trpc/${procedure}`, { method: "POST", headers: { "content-type": "application/json", "x-leasehold-session-binding": binding }, body: JSON.stringify(input) });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    { procedure, input },
  );
}

/** The pending approval whose command carries `marker` (id and hash as the queue shows them). */
async function pendingWith(page: Page, marker: string): Promise<{ approval_id: string; action_hash: string; risk: string }> {
  let found: { approval_id: string; action_hash: string; risk: string } | undefined;
  await expect(async () => {
    found = await page.evaluate(async (marker) => {
      const response = await fetch(`/api/trpc/approvals.list`, { headers: { "x-leasehold-session-binding": window.localStorage.getItem("leasehold.session-binding") ?? "" } });
      const body = (await response.json()) as { result: { data: { items: Array<{ approval_id: string; action_hash: string; risk: string }> } } };
      return body.result.data.items.find((item) => JSON.stringify(item).includes(marker));
    }, marker);
    expect(found).toBeDefined();
  }).toPass({ timeout: 30_000 });
  return found!;
}

test("register a passkey, sign in with it, approve a high command with it; verify checks the assertion offline; an assertion for one hash is refused for another", async ({ page }) => {
  test.setTimeout(240_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await virtualAuthenticator(page);
  const account = await signedInAs(page, "approver");

  // Register (the account page offers it right after the forced password change).
  await expect(page.getByTestId("password-changed")).toContainText("Register a passkey");
  const section = page.getByTestId("passkeys-section");
  await expect(section.getByText("No passkeys yet.")).toBeVisible();
  await section.getByLabel("Name for a new passkey").fill("e2e virtual key");
  await section.getByRole("button", { name: "Register a passkey" }).click();
  await expect(section.getByRole("status")).toContainText('Passkey "e2e virtual key" registered.');
  await expect(section.getByTestId("passkey-row")).toHaveCount(1);
  await expect(section.getByTestId("passkey-row")).toContainText("e2e virtual key");
  await page.screenshot({ path: "test-results/passkeys-account-1280.png", fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(section.getByRole("button", { name: "Remove passkey e2e virtual key" })).toBeVisible();
  await page.screenshot({ path: "test-results/passkeys-account-390.png", fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });

  // Sign out, then back in with the passkey alone (no user name typed).
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/sign-in/);
  await page.screenshot({ path: "test-results/passkeys-sign-in-1280.png", fullPage: true });
  await page.getByRole("button", { name: "Sign in with a passkey" }).click();
  await expect(page).not.toHaveURL(/\/sign-in/);
  await page.goto("/account");
  await expect(page.getByRole("heading", { name: "Your account" })).toBeVisible();
  // Who is signed in comes from auth.me (the page shell renders no identity): the header names the account.
  await expect(page.getByRole("link", { name: `${account.name} (approver)` })).toBeVisible();

  // An agent asks for a high-risk command; the approver approves it with the passkey.
  await page.goto("/approvals");
  freeHostLocal(account.name);
  const agent = await connectAgent("passkey");
  const { command, marker } = highCommand();
  const call = run(agent, command);
  const item = page.locator("article.approval", { hasText: marker });
  await expect(item).toBeVisible({ timeout: 30_000 });
  await expect(item.locator(".badge.risk-high").first()).toBeVisible();
  // The CLI cannot approve it: that needs a passkey signature.
  const held = await pendingWith(page, marker);
  let cliRefusal = "";
  try {
    leaseholdCli(["approvals", "approve", held.approval_id, "--as", account.name]);
  } catch (error) {
    cliRefusal = String((error as { stderr?: string }).stderr ?? error);
  }
  expect(cliRefusal).toContain("needs a passkey signature");
  await page.screenshot({ path: "test-results/passkeys-approval-1280.png", fullPage: true });
  await approveButton(await openItem(item), { passkey: true }).click();
  const result = structured(await call);
  expect(result["status"], JSON.stringify(result)).toBe("completed");
  expect(result["decision"]).toBe("approved");
  await expect(item.getByTestId("approval-outcome")).toContainText("completed, exit 0");
  await agent.close();
  // The action page checks the stored assertion against the registered key, as `leasehold verify` does.
  await page.goto(`/actions/${String(result["action_id"])}`);
  await expect(page.getByTestId("approval-passkey")).toContainText("verified: signed by a registered passkey");
  await page.goto("/approvals");

  // An assertion made for one approval (its action hash) is refused for another.
  freeHostLocal(account.name);
  // One token, a session per call: both are held at once.
  const [second, secondB] = await connectAgents("passkey-b", 2);
  const a = highCommand();
  const b = highCommand();
  const callA = run(second!, a.command);
  const callB = run(secondB!, b.command);
  const heldA = await pendingWith(page, a.marker);
  const heldB = await pendingWith(page, b.marker);
  expect(heldA.action_hash).not.toBe(heldB.action_hash);
  const options = await trpcPost(page, "passkeys.approvalOptions", { approvalId: heldA.approval_id });
  expect(options.status, JSON.stringify(options.body)).toBe(200);
  const assertion = await page.evaluate(async (issued) => {
    const b64 = (s: string) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4)), (c) => c.charCodeAt(0));
    const enc = (buf: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const credential = (await navigator.credentials.get({
      publicKey: {
        challenge: b64(issued.challenge),
        rpId: issued.rpId,
        userVerification: "required",
        allowCredentials: issued.allowCredentials.map((c) => ({ type: "public-key" as const, id: b64(c.id) })),
      },
    })) as PublicKeyCredential;
    const response = credential.response as AuthenticatorAssertionResponse;
    return {
      id: credential.id,
      rawId: enc(credential.rawId),
      type: "public-key",
      response: {
        clientDataJSON: enc(response.clientDataJSON),
        authenticatorData: enc(response.authenticatorData),
        signature: enc(response.signature),
        ...(response.userHandle === null ? {} : { userHandle: enc(response.userHandle) }),
      },
      clientExtensionResults: {},
    };
  }, (options.body as { result: { data: { options: { challenge: string; rpId: string; allowCredentials: Array<{ id: string }> } } } }).result.data.options);
  const refused = await trpcPost(page, "passkeys.approveWithPasskey", { approvalId: heldB.approval_id, actionHash: heldB.action_hash, assertion });
  expect(refused.status).toBe(403);
  expect(JSON.stringify(refused.body)).toContain("made for another approval or another action hash");
  // B is still pending; the agent is told no for both (deny needs no passkey).
  for (const h of [heldA, heldB]) {
    const denied = await trpcPost(page, "approvals.deny", { approvalId: h.approval_id, actionHash: h.action_hash, reason: "passkey e2e: hash binding checked" });
    expect(denied.status, JSON.stringify(denied.body)).toBe(200);
  }
  expect(structured(await callA)["code"]).toBe("APPROVAL_DENIED");
  expect(structured(await callB)["code"]).toBe("APPROVAL_DENIED");
  await Promise.all([second!.close(), secondB!.close()]);

  // Offline: export the ledger and verify it with the log's public key; the passkey-signed approval is checked.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-e2e-passkeys-"));
  let transcript = "";
  await expect(async () => {
    const file = path.join(dir, `ledger-${Date.now()}.export`);
    const exported = leaseholdCli(["export", "--out", file]);
    const key = /--key '([^']+)'/.exec(exported)?.[1];
    expect(key).toBeDefined();
    transcript = leaseholdCli(["verify", file, "--key", key!]);
    // The approval/1 entry must be covered by a checkpoint (the integrator runs every few seconds).
    expect(transcript).toMatch(/passkeys: +[1-9]\d* passkey-signed approval\(s\) verified/);
  }).toPass({ timeout: 60_000 });
  console.log(`$ leasehold verify <export> --key <log key>\n${transcript}`);
  expect(transcript).toContain("VERIFIED");
  fs.writeFileSync(path.join("test-results", "passkeys-verify.txt"), transcript);
});

test("a high grant is signed with the passkey over its whole scope on the Grants page; the CLI refuses it; the account page lists when each passkey was added", async ({ page }) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: 1280, height: 900 });
  await virtualAuthenticator(page);
  const account = await signedInAs(page, "approver");
  const section = page.getByTestId("passkeys-section");
  await section.getByLabel("Name for a new passkey").fill("grant key");
  await section.getByRole("button", { name: "Register a passkey" }).click();
  await expect(section.getByRole("status")).toContainText('Passkey "grant key" registered.');
  await expect(section.getByRole("columnheader", { name: "Added" })).toBeVisible();
  await expect(section.getByTestId("passkeys-after-password")).toContainText("stay valid when you change your password");
  // A second passkey needs the existing one's consent in the same ceremony: without it the hub refuses
  // (the registration response names the ceremony's real challenge; nothing else about it is checked first).
  const ceremony = await trpcPost(page, "passkeys.registrationOptions", {});
  expect(ceremony.status, JSON.stringify(ceremony.body)).toBe(200);
  const issued = (ceremony.body as { result: { data: { options: { challenge: string }; confirmWith: { allowCredentials: unknown[] } | null } } }).result.data;
  expect(issued.confirmWith?.allowCredentials).toHaveLength(1);
  const clientDataJSON = Buffer.from(JSON.stringify({ type: "webauthn.create", challenge: issued.options.challenge, origin: new URL(page.url()).origin })).toString("base64url");
  const planted = await trpcPost(page, "passkeys.register", { name: "planted", response: { id: "AAAA", rawId: "AAAA", type: "public-key", response: { clientDataJSON, attestationObject: "AAAA" }, clientExtensionResults: {} } });
  expect(planted.status).toBe(403);
  expect(JSON.stringify(planted.body)).toContain("confirm the new one with an existing passkey");
  await page.reload();
  await expect(section.getByTestId("passkey-row")).toHaveCount(1);

  const marker = `pk-grant-${process.pid}-${Date.now().toString(36)}`;
  await page.goto("/grants");
  await page.getByLabel("Tool").selectOption("run_command");
  await page.getByLabel("Host").selectOption("local");
  await page.getByLabel("Up to risk").selectOption("high");
  await expect(page.getByText("This ceiling needs your passkey's signature over the whole grant.")).toBeVisible();
  await page.getByLabel("Uses").fill("1");
  await page.getByLabel("Expires after").fill("10m");
  await page.getByLabel(/Command pattern/).fill(`rm -rf \\./${marker}`);
  await page.getByRole("button", { name: "Sign with passkey and create grant" }).click();
  await expect(page.getByTestId("grant-created")).toContainText("run_command on local up to high, 1 uses");
  const row = page.locator('[data-testid^="grant-"]').filter({ hasText: marker });
  await expect(row).toContainText("signed with a passkey");
  await page.screenshot({ path: "test-results/passkeys-grant-1280.png", fullPage: true });

  // The CLI has no passkey: the same grant is refused there, naming the Grants page.
  let cliRefusal = "";
  try {
    leaseholdCli(["grant", "create", "--tool", "run_command", "--host", "local", "--max-risk", "high", "--uses", "1", "--expires", "10m", "--pattern", `rm -rf \\./${marker}`, "--as", account.name]);
  } catch (error) {
    cliRefusal = String((error as { stderr?: string }).stderr ?? error);
  }
  expect(cliRefusal).toContain("needs a passkey signature over its scope");
  expect(cliRefusal).toContain("/grants");
  // A bare high grant over the API (no assertion) is refused too.
  const bare = await trpcPost(page, "grants.create", { tool: "run_command", host: "local", maxRisk: "high", uses: 1, expires: "10m", pattern: null, env: [], stdinSha256: null, cwd: null });
  expect(bare.status).toBe(403);
  expect(JSON.stringify(bare.body)).toContain("needs a passkey signature");
});
