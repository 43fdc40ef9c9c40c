/**
 * OAuth 2.1 end to end with real MCP clients nobody on the team wrote:
 *
 * - the official TypeScript SDK's client (`OAuthClientProvider`, the
 *   Streamable HTTP transport's `authProvider`), whose client id is a Client
 *   ID Metadata Document served over HTTPS on loopback;
 * - the official Python SDK (`mcp` from PyPI, installed by this test into a
 *   throwaway virtual environment), registering itself dynamically (RFC 7591).
 *
 * Each discovers the hub's authorization server from a 401, sends the
 * browser to the consent page, where the first admin (sent to /sign-in and
 * back) approves; the client then lists tools and runs `echo hi` on host
 * `local` (read-only by the shell policy, so auto-allowed). A second consent
 * with Read-only ticked yields a token that does not list mutating tools
 * and whose call to one is refused (403 insufficient_scope).
 *
 * Why this spec runs a hub of its own (not the Playwright config's): the hub
 * must be told to fetch client metadata from loopback
 * (LEASEHOLD_OAUTH_CLIENT_URL_ALLOW) and to trust the throwaway CA
 * (NODE_EXTRA_CA_CERTS) — settings no other spec should run with.
 *
 * Each flow prints its transcript (HTTP steps, secrets shown only by shape)
 * and writes it to test-results/oauth-<flow>.txt.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { expect, test, type Page } from "@playwright/test";
import { discoverAuthorizationServerMetadata, refreshAuthorization, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { runCli, startHub, tempDir, type RunningHub } from "../test/support/hub-process";
import { makeThrowawayCa, startCimdServer, type CimdServer, type ThrowawayCa } from "../test/oauth-clients/cimd-server";
import { ensurePythonMcpVenv, MCP_PYTHON_VERSION, PYTHON_OAUTH_CLIENT } from "../test/oauth-clients/python-venv";
import { MemoryOAuthClientProvider, startLoopbackCallback, transcriptFetch } from "../test/oauth-clients/ts-provider";
import { consentInBrowser, renewFirstAdmin, renewOneTimePassword, type Admin } from "./support/oauth-consent";

const RESULTS = path.join(import.meta.dirname, "..", "test-results");
/** Tools a token without mcp:write must neither list nor call (the hub's mutating tools). */
const MUTATING_TOOLS = ["fs_write", "lease_acquire", "lease_release", "run_code", "run_command"];
const ACCESS_TOKEN = /^lha_[A-Za-z0-9_-]{32}$/;
const REFRESH_TOKEN = /^lhr_[A-Za-z0-9_-]{43}$/;
const CLIENT_NAMES = { tsFull: "Leasehold e2e TypeScript SDK (ts-full)" };

let ca: ThrowawayCa | undefined;
let cimd: CimdServer | undefined;
let hub: RunningHub | undefined;
let base = "";
let admin: Admin | undefined;

function report(flow: string, lines: string[]): void {
  const text = [`# ${flow}`, ...lines].join("\n");
  console.log(`\n${text}\n`);
  fs.mkdirSync(RESULTS, { recursive: true });
  fs.writeFileSync(path.join(RESULTS, `oauth-${flow}.txt`), `${text}\n`);
}

test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ browser }) => {
  test.setTimeout(300_000);
  ca = makeThrowawayCa();
  cimd = await startCimdServer(ca);
  hub = await startHub(
    {
      LEASEHOLD_DATA_DIR: path.join(tempDir("lh-e2e-oauth-"), "data"),
      // Loopback is refused for client metadata URLs unless the operator allows it by name.
      LEASEHOLD_OAUTH_CLIENT_URL_ALLOW: "localhost,127.0.0.1",
      NODE_EXTRA_CA_CERTS: ca.caCertPath,
    },
    180_000,
  );
  base = hub.url;
  // The first start prints the first admin's one-time password after /api/health already answers.
  await expect.poll(() => /^\s*admin:\s+\S+ \/ \S+/m.test(hub!.output()), { timeout: 60_000 }).toBe(true);
  const page = await browser.newPage();
  admin = await renewFirstAdmin(page, base, hub.output());
  await page.close();
});

test.afterAll(async () => {
  await hub?.stop();
  await cimd?.close();
  if (ca !== undefined) fs.rmSync(ca.dir, { recursive: true, force: true });
});

function structured(result: CallToolResult): Record<string, unknown> {
  return (result.structuredContent ?? {}) as Record<string, unknown>;
}

/** The TypeScript SDK client with a CIMD client id; returns the connected client after the browser consent. */
async function typescriptFlow(
  page: Page,
  options: { flow: string; readOnly: boolean; log: string[]; cleanup: (() => Promise<unknown>)[] },
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; provider: MemoryOAuthClientProvider }> {
  const log = options.log;
  const callback = await startLoopbackCallback();
  options.cleanup.push(() => callback.close());
  const clientName = `Leasehold e2e TypeScript SDK (${options.flow})`;
  if (options.flow === "ts-full") expect(clientName).toBe(CLIENT_NAMES.tsFull);
  const clientId = `${cimd!.origin}/clients/${options.flow}.json`;
  cimd!.publish(`/clients/${options.flow}.json`, {
    client_id: clientId,
    client_name: clientName,
    redirect_uris: [callback.redirectUri],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  });
  log.push(`client id (CIMD): ${clientId}`, `redirect uri: ${callback.redirectUri}`);
  const provider = new MemoryOAuthClientProvider({ redirectUrl: callback.redirectUri, clientMetadataUrl: clientId, clientName });
  const mcpUrl = new URL(`${base}/api/mcp`);
  const client = new Client({ name: "leasehold-e2e-oauth-ts", version: "1.0.0" });
  options.cleanup.push(() => client.close());

  // No token yet: the 401 starts discovery, and the SDK hands the authorization URL to the provider.
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider, fetch: transcriptFetch(log) });
  await expect(client.connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrls).toHaveLength(1);
  const authorization = provider.authorizationUrls[0]!;
  expect(`${authorization.origin}${authorization.pathname}`).toBe(`${base}/oauth/authorize`);
  expect(authorization.searchParams.get("client_id")).toBe(clientId);
  expect(authorization.searchParams.get("code_challenge_method")).toBe("S256");
  expect(authorization.searchParams.get("resource")).toBe(`${base}/api/mcp`);
  expect(authorization.searchParams.get("scope")?.split(" ").sort()).toEqual(["mcp:read", "mcp:write"]);
  log.push(`(client) open ${authorization.pathname}?client_id=${clientId}&scope=${authorization.searchParams.get("scope")}&resource=${authorization.searchParams.get("resource")}&code_challenge_method=S256&state=…`);

  const response = callback.next();
  const consent = await consentInBrowser(page, authorization.href, admin!, { decision: "Approve", readOnly: options.readOnly, redirectUri: callback.redirectUri, clientName, clientId });
  log.push(...consent.transcript);
  const params = await response;
  expect(params.get("state")).toBe(provider.states.at(-1));
  expect(params.get("iss")).toBe(base);
  const code = params.get("code");
  expect(code).toBeTruthy();
  // The hub fetched the document itself, over HTTPS, checking the throwaway CA's certificate.
  expect(cimd!.log.some((line) => line.startsWith(`GET /clients/${options.flow}.json -> 200`))).toBe(true);
  log.push(...cimd!.log.filter((line) => line.includes(`/clients/${options.flow}.json`)).map((line) => `(hub -> CIMD server) ${line}`));

  await first.finishAuth(code!);
  const tokens = provider.tokens();
  expect(tokens?.access_token).toMatch(ACCESS_TOKEN);
  expect(tokens?.refresh_token).toMatch(REFRESH_TOKEN);
  expect(tokens?.token_type.toLowerCase()).toBe("bearer");

  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider, fetch: transcriptFetch(log) });
  // DELETE the session first (cleanups run last to first): its host lease ends with it.
  options.cleanup.push(() => transport.terminateSession().catch(() => undefined));
  await client.connect(transport);
  return { client, transport, provider };
}

test("TypeScript SDK: CIMD client id, browser consent, tools listed, `echo hi` runs on host local", async ({ page }) => {
  test.setTimeout(180_000);
  const log: string[] = [];
  const cleanup: (() => Promise<unknown>)[] = [];
  try {
    const { client } = await typescriptFlow(page, { flow: "ts-full", readOnly: false, log, cleanup });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(MUTATING_TOOLS));
    log.push(`(client) tools/list: ${names.length} tools, ${names.join(", ")}`);
    const result = (await client.callTool({ name: "run_command", arguments: { host: "local", command: "echo hi", idempotency_key: randomUUID() } }, undefined, { timeout: 120_000 })) as CallToolResult;
    expect(result.isError, JSON.stringify(result.structuredContent)).not.toBe(true);
    expect(structured(result)).toMatchObject({ status: "completed", result: { exit: { code: 0 }, output: { stdout: "hi\n" } } });
    log.push(`(client) run_command echo hi on local: status ${String(structured(result)["status"])}, exit 0, stdout "hi\\n"`);

    // The grant sits on /tokens beside the lh_ tokens, and is revoked there the same way.
    await page.goto(`${base}/tokens`);
    const row = page.locator("tr").filter({ hasText: CLIENT_NAMES.tsFull });
    await expect(row).toHaveCount(1);
    await expect(row).toContainText("OAuth");
    await expect(row).toContainText("active");
    await row.getByRole("button", { name: /^Revoke / }).click();
    await row.getByRole("button", { name: "Confirm revoke" }).click();
    await expect(row).toContainText("revoked");
    await expect(client.callTool({ name: "health", arguments: {} })).rejects.toThrow();
    log.push(`(browser) /tokens: "${CLIENT_NAMES.tsFull}" listed as OAuth, revoked; the client's next call is refused`);
  } finally {
    for (const step of cleanup.reverse()) await step();
    report("typescript-sdk", log);
  }
});

test("TypeScript SDK: a Read-only consent yields a token that lists no mutating tool and is refused run_command (403 insufficient_scope)", async ({ page }) => {
  test.setTimeout(180_000);
  const log: string[] = [];
  const cleanup: (() => Promise<unknown>)[] = [];
  try {
    const { client } = await typescriptFlow(page, { flow: "ts-read-only", readOnly: true, log, cleanup });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((n) => MUTATING_TOOLS.includes(n))).toEqual([]);
    log.push(`(client) tools/list: ${names.length} tools, none mutating`);
    const before = log.length;
    // The SDK reacts to the 403 by trying a step-up (refresh, then the same call); the hub refuses again and the call fails.
    await expect(client.callTool({ name: "run_command", arguments: { host: "local", command: "echo hi", idempotency_key: randomUUID() } })).rejects.toThrow(/403/);
    const refused = log.slice(before).find((line) => line.startsWith("-> 403"));
    expect(refused).toMatch(/error="insufficient_scope"/);
    expect(refused).toMatch(/scope="mcp:read mcp:write"/);
    log.push("(client) run_command refused: 403 insufficient_scope");
  } finally {
    for (const step of cleanup.reverse()) await step();
    report("typescript-sdk-read-only", log);
  }
});

test("TypeScript SDK: Deny sends the client error=access_denied with its own state and the hub as iss, and no token", async ({ page }) => {
  test.setTimeout(120_000);
  const log: string[] = [];
  const callback = await startLoopbackCallback();
  try {
    const clientName = "Leasehold e2e TypeScript SDK (ts-denied)";
    const clientId = cimd!.publish("/clients/ts-denied.json", {
      client_id: `${cimd!.origin}/clients/ts-denied.json`,
      client_name: clientName,
      redirect_uris: [callback.redirectUri],
      token_endpoint_auth_method: "none",
    });
    const provider = new MemoryOAuthClientProvider({ redirectUrl: callback.redirectUri, clientMetadataUrl: clientId, clientName });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), { authProvider: provider, fetch: transcriptFetch(log) });
    await expect(new Client({ name: "leasehold-e2e-oauth-ts", version: "1.0.0" }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const response = callback.next();
    const consent = await consentInBrowser(page, provider.authorizationUrls[0]!.href, admin!, { decision: "Deny", redirectUri: callback.redirectUri, clientName, clientId });
    log.push(...consent.transcript);
    const params = await response;
    expect(Object.fromEntries(params)).toMatchObject({ error: "access_denied", state: provider.states.at(-1), iss: base });
    expect(params.has("code")).toBe(false);
    expect(provider.tokens()).toBeUndefined();
  } finally {
    await callback.close();
    report("typescript-sdk-denied", log);
  }
});

test("TypeScript SDK: a refresh rotates the refresh token; presenting the old one again revokes the grant, and the client is refused", async ({ page }) => {
  test.setTimeout(180_000);
  const log: string[] = [];
  const cleanup: (() => Promise<unknown>)[] = [];
  try {
    const { client, provider } = await typescriptFlow(page, { flow: "ts-refresh", readOnly: false, log, cleanup });
    const fetchFn = transcriptFetch(log);
    const metadata = await discoverAuthorizationServerMetadata(base, { fetchFn });
    const info = provider.clientInformation()!;
    const first = provider.tokens()!;
    // The SDK's own refresh request, as it makes one when an access token expires.
    const rotated = await refreshAuthorization(base, { metadata, clientInformation: info, refreshToken: first.refresh_token!, resource: `${base}/api/mcp`, fetchFn });
    expect(rotated.access_token).toMatch(ACCESS_TOKEN);
    expect(rotated.refresh_token).toMatch(REFRESH_TOKEN);
    expect(rotated.refresh_token).not.toBe(first.refresh_token);
    provider.saveTokens(rotated);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    log.push("(client) refreshed: a new refresh token; the new access token lists tools");
    // A stolen copy of the first refresh token, replayed: refused, and the whole grant with it.
    await expect(refreshAuthorization(base, { metadata, clientInformation: info, refreshToken: first.refresh_token!, resource: `${base}/api/mcp`, fetchFn })).rejects.toThrow(/invalid_grant|revoked/i);
    const probe = await fetch(`${base}/api/mcp`, { method: "POST", headers: { authorization: `Bearer ${rotated.access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
    expect(probe.status).toBe(401);
    expect(probe.headers.get("www-authenticate")).toContain('error="invalid_token"');
    log.push(`(client) old refresh token replayed -> refused; the rotated access token now gets ${probe.status} ${probe.headers.get("www-authenticate")}`);
  } finally {
    for (const step of cleanup.reverse()) await step();
    report("typescript-sdk-refresh-reuse", log);
  }
});

test("only an owner can consent: an approver sees why, and the client is sent nothing", async ({ page }) => {
  test.setTimeout(120_000);
  const callback = await startLoopbackCallback();
  try {
    const name = `approver-${Date.now().toString(36)}`;
    const made = await runCli(["admin", "create", "--name", name, "--role", "approver"], { LEASEHOLD_DATA_DIR: hub!.dataDir, LEASEHOLD_PORT: String(hub!.port) });
    const oneTime = /^password: (\S+)$/m.exec(made.stdout)?.[1];
    expect(oneTime, made.stdout + made.stderr).toBeDefined();
    await renewOneTimePassword(page, base, name, oneTime!);
    const clientId = cimd!.publish("/clients/ts-approver.json", { client_id: `${cimd!.origin}/clients/ts-approver.json`, client_name: "Leasehold e2e (approver)", redirect_uris: [callback.redirectUri], token_endpoint_auth_method: "none" });
    const provider = new MemoryOAuthClientProvider({ redirectUrl: callback.redirectUri, clientMetadataUrl: clientId, clientName: "Leasehold e2e (approver)" });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), { authProvider: provider });
    await expect(new Client({ name: "leasehold-e2e-oauth-ts", version: "1.0.0" }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const arrived = callback.next().then(() => "redirected");
    await page.goto(provider.authorizationUrls[0]!.href);
    await expect(page.getByRole("heading", { name: "Authorization needs an owner" })).toBeVisible();
    await expect(page.locator("main")).toContainText("you are signed in as approver");
    await expect(page.getByRole("button", { name: "Approve" })).toHaveCount(0);
    expect(await Promise.race([arrived, new Promise((r) => setTimeout(() => r("nothing"), 2000))])).toBe("nothing");
  } finally {
    await callback.close();
  }
});

interface PythonEvent {
  event: string;
  [key: string]: unknown;
}

/**
 * Runs the Python SDK client script; each time it prints an authorization
 * URL the browser consents with `choice`. Resolves with every event it printed.
 */
async function pythonFlow(page: Page, options: { flow: string; readOnly: boolean; tryMutating: boolean; log: string[] }): Promise<{ events: PythonEvent[]; log: string[] }> {
  // Installing the pinned SDK is part of the test: a failed install fails it (with pip's own words).
  const venv = ensurePythonMcpVenv((line) => console.log(line));
  const clientName = `Leasehold e2e Python SDK (${options.flow})`;
  const args = [PYTHON_OAUTH_CLIENT, "--server", `${base}/api/mcp`, "--client-name", clientName, "--command", "echo hi", ...(options.tryMutating ? ["--try-mutating"] : [])];
  const child = spawn(venv.python, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PYTHONUNBUFFERED: "1" } });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const events: PythonEvent[] = [];
  const log = options.log;
  log.push(`mcp (Python SDK) ${MCP_PYTHON_VERSION}, dynamic client registration`);
  let redirectUri = "";
  try {
    for await (const line of readline.createInterface({ input: child.stdout })) {
      let event: PythonEvent;
      try {
        event = JSON.parse(line) as PythonEvent;
      } catch {
        log.push(`(python stdout) ${line}`);
        continue;
      }
      events.push(event);
      if (event.event === "callback") {
        redirectUri = String(event["redirect_uri"]);
        log.push(`redirect uri: ${redirectUri}`);
      } else if (event.event === "http") log.push(String(event["line"]));
      else if (event.event === "authorize" && event["n"] === 1) {
        const url = new URL(String(event["url"]));
        expect(`${url.origin}${url.pathname}`).toBe(`${base}/oauth/authorize`);
        expect(url.searchParams.get("client_id")).toMatch(/^dyn_/);
        expect(url.searchParams.get("code_challenge_method")).toBe("S256");
        expect(url.searchParams.get("resource")).toBe(`${base}/api/mcp`);
        log.push(`(client) open ${url.pathname}?client_id=${url.searchParams.get("client_id")}&scope=${url.searchParams.get("scope")}&resource=${url.searchParams.get("resource")}&code_challenge_method=S256&state=…`);
        const consent = await consentInBrowser(page, url.href, admin!, { decision: "Approve", readOnly: options.readOnly, redirectUri, clientName, clientId: url.searchParams.get("client_id")! });
        log.push(...consent.transcript);
      } else if (event.event === "authorize") log.push(`(client) step-up authorization requested: scope=${String(event["scope"])}`);
      else if (event.event === "error") log.push(`(client) ERROR ${String(event["message"])}`);
      else if (event.event === "tools") log.push(`(client) tools/list: ${(event["names"] as string[]).length} tools, ${(event["names"] as string[]).join(", ")}`);
      else if (event.event === "call") {
        const s = (event["structured"] ?? {}) as { status?: string; code?: string; result?: { exit?: { code?: number }; output?: { stdout?: string } } };
        log.push(`(client) run_command: is_error ${String(event["is_error"])}, status ${s.status ?? s.code}, exit ${s.result?.exit?.code}, stdout ${JSON.stringify(s.result?.output?.stdout)}`);
      }
      else log.push(`(client) ${JSON.stringify(event).slice(0, 400)}`);
    }
  } finally {
    if (child.exitCode === null) child.kill("SIGTERM");
  }
  const code = await exited;
  const failed = events.find((e) => e.event === "error");
  expect(failed, `${String(failed?.["message"])}\n${String(failed?.["trace"] ?? "")}\n${stderr.slice(-3000)}`).toBeUndefined();
  expect(code, stderr.slice(-3000)).toBe(0);
  return { events, log };
}

test("Python SDK (mcp from PyPI): dynamic registration, browser consent, tools listed, `echo hi` runs on host local", async ({ page }) => {
  test.setTimeout(600_000);
  const log: string[] = [];
  try {
    const run = await pythonFlow(page, { flow: "py-full", readOnly: false, tryMutating: false, log });
    const registered = run.log.findIndex((l) => l.startsWith("POST /api/oauth/register"));
    expect(registered, "the Python client registers itself (RFC 7591)").toBeGreaterThanOrEqual(0);
    expect(run.log[registered + 1]).toMatch(/^-> 201 .*"client_id": "dyn_/);
    expect(run.log.some((l) => /^-> 200 .*"access_token": "lha_…\(36 chars\)".*"refresh_token": "lhr_…\(47 chars\)"/.test(l))).toBe(true);
    const tools = run.events.find((e) => e.event === "tools")?.["names"] as string[] | undefined;
    expect(tools).toEqual(expect.arrayContaining(MUTATING_TOOLS));
    const call = run.events.find((e) => e.event === "call");
    expect(call?.["is_error"], JSON.stringify(call)).toBe(false);
    expect(call?.["structured"]).toMatchObject({ status: "completed", result: { exit: { code: 0 }, output: { stdout: "hi\n" } } });
    expect(run.events.at(-1)?.event).toBe("done");
  } finally {
    report("python-sdk", log);
  }
});

test("Python SDK: a Read-only consent yields a token that lists no mutating tool and is refused run_command (403 insufficient_scope)", async ({ page }) => {
  test.setTimeout(600_000);
  const log: string[] = [];
  try {
    const run = await pythonFlow(page, { flow: "py-read-only", readOnly: true, tryMutating: true, log });
    const tools = run.events.find((e) => e.event === "tools")?.["names"] as string[] | undefined;
    expect(tools?.length).toBeGreaterThan(0);
    expect(tools?.filter((n) => MUTATING_TOOLS.includes(n))).toEqual([]);
    expect(run.events.find((e) => e.event === "call"), "a read-only token must not run a command").toBeUndefined();
    expect(run.events.some((e) => e.event === "refused")).toBe(true);
    const refused = run.log.find((l) => l.startsWith("-> 403"));
    expect(refused).toMatch(/error="insufficient_scope"/);
    expect(refused).toMatch(/scope="mcp:read mcp:write"/);
  } finally {
    report("python-sdk-read-only", log);
  }
});
