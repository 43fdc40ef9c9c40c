/**
 * A stolen admin cookie opens nothing, tried the way the outside review
 * stole one: cookies do not isolate ports, so any server on the hub's host
 * name receives the admin's session cookie when the browser visits it — a
 * local dev server, or an OAuth client's loopback callback that the consent
 * page itself sends the browser to. The thief then replays the cookie with
 * the hub's own Origin from a non-browser.
 */
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { BINDING_HEADER, SESSION_COOKIE, boundHeaders, signedInAs } from "./support/admins";
import { E2E_BASE_URL, E2E_PORT } from "./support/hub";

interface Listener {
  port: number;
  /** The Cookie header of each request it received ("" when none). */
  cookies: string[];
  /** Resolves with the next request's URL. */
  next(): Promise<URL>;
  close(): Promise<void>;
}

/** A plain HTTP server on 127.0.0.1 that records what browsers send it. */
async function startListener(): Promise<Listener> {
  const cookies: string[] = [];
  const waiting: ((url: URL) => void)[] = [];
  const server = http.createServer((req, res) => {
    cookies.push(req.headers.cookie ?? "");
    waiting.shift()?.(new URL(req.url ?? "/", `http://${req.headers.host}`));
    res.writeHead(200, { "content-type": "text/html" }).end("<title>listener</title>ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cookies,
    next: () => new Promise<URL>((resolve) => waiting.push(resolve)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function trpcPost(path: string, headers: Record<string, string>, input: unknown): Promise<{ status: number; body: string }> {
  const response = await fetch(`${E2E_BASE_URL}/api/trpc/${path}`, {
    method: "POST",
    headers: { ...headers, origin: E2E_BASE_URL, "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  return { status: response.status, body: await response.text() };
}

test("W1: the owner's cookie, received by another server on localhost and replayed with the hub's Origin, opens nothing — and says why", async ({ page, context }) => {
  const owner = await signedInAs(page, "owner");
  const thief = await startListener();
  try {
    // The premise: the browser hands the hub's cookie to a server on another port of the same host name.
    const sent = thief.next();
    await page.goto(`http://localhost:${thief.port}/anything`);
    await sent;
    const stolen = thief.cookies.find((c) => c.includes("leasehold_session="));
    expect(stolen, `cookies the listener got: ${JSON.stringify(thief.cookies)}`).toBeDefined();
    const cookie = stolen!.split(/;\s*/).find((c) => /^(__Host-)?leasehold_session=/.test(c))!;

    // The replay, as the review ran it: who am I, mint a token, register a passkey.
    const me = await fetch(`${E2E_BASE_URL}/api/trpc/auth.me`, { headers: { cookie, origin: E2E_BASE_URL } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { result: { data: unknown } }).result.data).toBeNull();
    const mint = await trpcPost("tokens.create", { cookie }, { name: "stolen", expires: "30d", readOnly: false, tools: null, hosts: null });
    expect(mint.status).toBe(401);
    expect(mint.body).toContain("without its binding secret");
    const passkey = await trpcPost("passkeys.registrationOptions", { cookie }, {});
    expect(passkey.status).toBe(401);
    expect(passkey.body).toContain("without its binding secret");
    // A guessed or foreign binding secret is no better.
    const guessed = await trpcPost("tokens.create", { cookie, [BINDING_HEADER]: "a".repeat(32) }, { name: "stolen", expires: "30d", readOnly: false, tools: null, hosts: null });
    expect(guessed.status).toBe(401);
    expect(guessed.body).toContain("not this session's");

    // The same cookie WITH the page's own binding secret is a live session: the refusals above are the binding's.
    await page.goto("/account");
    const bound = await boundHeaders(page, context);
    expect(bound.cookie).toBe(cookie);
    expect(cookie.startsWith(`${SESSION_COOKIE}=`)).toBe(true);
    const live = await fetch(`${E2E_BASE_URL}/api/trpc/auth.me`, { headers: { ...bound, origin: E2E_BASE_URL } });
    expect(((await live.json()) as { result: { data: { username: string } } }).result.data.username).toBe(owner.name);
    await expect(page.getByTestId("signed-in-as")).toContainText(owner.name);
  } finally {
    await thief.close();
  }
});

test("W1 through OAuth: a loopback redirect on the admin's host name is refused at registration; on 127.0.0.1 the callback gets no admin cookie", async ({ page }) => {
  await signedInAs(page, "owner");
  const callback = await startListener();
  try {
    const register = (redirect: string) =>
      fetch(`${E2E_BASE_URL}/api/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_name: "W1 replay client", redirect_uris: [redirect], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" }),
      });
    const onAdminHost = await register(`http://localhost:${callback.port}/callback`);
    expect(onAdminHost.status).toBe(400);
    expect(await onAdminHost.json()).toMatchObject({ error: "invalid_redirect_uri", error_description: expect.stringContaining("127.0.0.1") });

    const redirectUri = `http://127.0.0.1:${callback.port}/callback`;
    const registered = await register(redirectUri);
    expect(registered.status).toBe(201);
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const verifier = randomBytes(32).toString("base64url");
    const authorize = new URL("/oauth/authorize", E2E_BASE_URL);
    for (const [key, value] of Object.entries({
      response_type: "code",
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
      state: "w1",
      scope: "mcp:read mcp:write",
      resource: `http://127.0.0.1:${E2E_PORT}/api/mcp`,
    })) {
      authorize.searchParams.set(key, value);
    }
    await page.goto(authorize.href);
    await expect(page.getByRole("heading", { name: "Authorize W1 replay client" })).toBeVisible();
    const landed = callback.next();
    await page.getByRole("button", { name: "Deny" }).click();
    const url = await landed;
    expect(url.searchParams.get("error")).toBe("access_denied");
    // The browser went to the client's listener, and took no admin cookie there
    // (nor with the favicon request a loaded machine may let it send first).
    expect(callback.cookies.length).toBeGreaterThan(0);
    for (const sent of callback.cookies) expect(sent).not.toContain("leasehold_session");
  } finally {
    await callback.close();
  }
});
