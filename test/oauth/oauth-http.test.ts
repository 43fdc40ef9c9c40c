/**
 * OAuth tokens over real HTTP against a running hub (PostgreSQL, so this
 * test can share the hub's database): the consent decision is made
 * in-process (the browser part is e2e/oauth*.spec.ts), everything after it
 * goes through the hub's own routes — /api/oauth/token, /api/oauth/revoke,
 * /api/mcp with the SDK's client.
 *
 * Hostile: a token minted for another hub's URL is refused here (audience),
 * a read-only grant meets 403 insufficient_scope with the step-up scope,
 * refresh reuse over HTTP revokes the grant for the live MCP session too.
 */
import { like } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { oauthClients } from "../../server/db/schema";
import { openPostgres, type DatabaseHandle } from "../../server/db";
import { knownToolNames } from "../../server/mcp";
import { beginAuthorization, decideAuthorization, exchangeCode, mcpResourceUrl } from "../../server/oauth";
import { clientResolver, registerClientByAdmin } from "../../server/oauth/clients";
import { challengeOf } from "../../server/oauth/pkce";
import { hubDatabaseFor, testPostgresUrl } from "../support/databases";
import { startHub, type RunningHub } from "../support/hub-process";
import { connectClient, INITIALIZE, rawPost } from "../mcp/support";

const REDIRECT = "http://127.0.0.1:45999/callback";
const VERIFIER = "e2e-verifier-".padEnd(64, "x");
const ADMIN = { adminId: "00000000-0000-4000-8000-0000000000aa", username: "owner" };

describe("OAuth tokens over HTTP on a real hub [postgres]", () => {
  if (!testPostgresUrl()) {
    it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
      throw new Error("TEST_POSTGRES_URL is not set: run `npm test`");
    });
    return;
  }
  let hub: RunningHub;
  let handle: DatabaseHandle;
  let drop: (() => Promise<void>) | undefined;
  let clientId = "";

  beforeAll(async () => {
    const database = await hubDatabaseFor("postgres");
    drop = database.drop;
    hub = await startHub({ DATABASE_URL: database.url, LEASEHOLD_LOCAL_GUEST: "0", LEASEHOLD_MCP_RATE_PER_MINUTE: "1000000" });
    handle = await openPostgres(database.url ?? "", { max: 2 });
    clientId = (await registerClientByAdmin(handle.db, { name: "HTTP test client", redirectUris: [REDIRECT] }, ADMIN.adminId, "localhost")).id;
  }, 120_000);

  afterAll(async () => {
    await handle?.close();
    await hub?.stop();
    await drop?.();
  });

  /** An approved code, as the consent page would produce it, for a hub at `publicUrl`. */
  async function code(publicUrl: string, readOnly: boolean): Promise<string> {
    const ctx = { db: handle.db, publicUrl, adminHost: "localhost", resolver: clientResolver([]), knownTools: knownToolNames() };
    const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: challengeOf(VERIFIER), code_challenge_method: "S256", scope: "mcp:read mcp:write", resource: mcpResourceUrl(publicUrl) });
    const begun = await beginAuthorization(ctx, query, ADMIN);
    if (begun.kind !== "consent") throw new Error(JSON.stringify(begun));
    const decided = await decideAuthorization(ctx, { handle: begun.pending.handle, approve: true, readOnly, tools: null, hosts: null, lifetimeS: 3600 }, ADMIN);
    return new URL(decided.location).searchParams.get("code") ?? "";
  }

  function form(path: string, params: Record<string, string>): Promise<Response> {
    return fetch(`${hub.url}${path}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(params).toString() });
  }

  async function tokens(readOnly: boolean): Promise<{ access_token: string; refresh_token: string; scope: string }> {
    const res = await form("/api/oauth/token", { grant_type: "authorization_code", client_id: clientId, code: await code(hub.url, readOnly), redirect_uri: REDIRECT, code_verifier: VERIFIER, resource: `${hub.url}/api/mcp` });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    return (await res.json()) as { access_token: string; refresh_token: string; scope: string };
  }

  it("a code exchanged at /api/oauth/token yields an access token the SDK's client uses on /api/mcp; a read-only grant lists no mutating tool and meets 403 with the step-up scope", async () => {
    const full = await tokens(false);
    expect(full.scope).toBe("mcp:read mcp:write");
    const { client } = await connectClient(hub.url, full.access_token);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("run_command");
    expect((await client.callTool({ name: "health", arguments: {} })).isError ?? false).toBe(false);
    await client.close();

    const ro = await tokens(true);
    expect(ro.scope).toBe("mcp:read");
    const reader = await connectClient(hub.url, ro.access_token);
    expect((await reader.client.listTools()).tools.map((t) => t.name)).not.toContain("run_command");
    const refused = await rawPost(hub.url, ro.access_token, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "run_command", arguments: { host: "local", command: "true" } } }, { "mcp-session-id": reader.transport.sessionId! });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toContain(`error="insufficient_scope"`);
    expect(refused.headers.get("www-authenticate")).toContain(`scope="mcp:read mcp:write"`);
    await reader.client.close();
  });

  it("a token issued for another hub's MCP URL is refused here (401, audience), though it is in this hub's database", async () => {
    const other = "http://127.0.0.1:1";
    const res = await fetch(`${hub.url}/api/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", client_id: clientId, code: await code(other, false), redirect_uri: REDIRECT, code_verifier: VERIFIER }).toString(),
    });
    // This hub will not redeem a code made for another resource either.
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_target" });
    // Minted by the other hub (same database): presented here, refused for its audience.
    const minted = await exchangeCode(handle.db, other, { clientId, code: await code(other, false), redirectUri: REDIRECT, codeVerifier: VERIFIER, resource: null });
    if (!minted.ok) throw new Error(minted.description);
    const at = await rawPost(hub.url, minted.body.access_token, INITIALIZE);
    expect(at.status).toBe(401);
    expect(at.headers.get("www-authenticate")).toContain("another resource");
  });

  it("refresh over HTTP rotates; presenting the old refresh token again revokes the grant, and its open MCP session is refused on its next request", async () => {
    const first = await tokens(false);
    const rotated = await form("/api/oauth/token", { grant_type: "refresh_token", client_id: clientId, refresh_token: first.refresh_token });
    expect(rotated.status).toBe(200);
    const second = (await rotated.json()) as { access_token: string; refresh_token: string };
    const { client } = await connectClient(hub.url, second.access_token);
    expect((await client.callTool({ name: "health", arguments: {} })).isError ?? false).toBe(false);
    const reuse = await form("/api/oauth/token", { grant_type: "refresh_token", client_id: clientId, refresh_token: first.refresh_token });
    expect(reuse.status).toBe(400);
    expect(await reuse.json()).toMatchObject({ error: "invalid_grant" });
    await expect(client.callTool({ name: "health", arguments: {} })).rejects.toThrow();
    const after = await rawPost(hub.url, second.access_token, INITIALIZE);
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toContain("revoked");
  });

  it("RFC 7009 at /api/oauth/revoke: 200 for anything; a refresh token of this client revokes its grant", async () => {
    const t = await tokens(false);
    expect((await form("/api/oauth/revoke", { client_id: clientId, token: "nonsense" })).status).toBe(200);
    expect((await rawPost(hub.url, t.access_token, INITIALIZE)).status).toBe(200);
    expect((await form("/api/oauth/revoke", { client_id: clientId, token: t.refresh_token })).status).toBe(200);
    expect((await rawPost(hub.url, t.access_token, INITIALIZE)).status).toBe(401);
  });

  it("a refresh asking for scope=mcp:read on a read-write grant returns a token /api/mcp treats as read-only: no mutating tool listed, run_command 403 insufficient_scope", async () => {
    const full = await tokens(false);
    const narrowed = await form("/api/oauth/token", { grant_type: "refresh_token", client_id: clientId, refresh_token: full.refresh_token, scope: "mcp:read" });
    expect(narrowed.status).toBe(200);
    const reader = (await narrowed.json()) as { access_token: string; scope: string };
    expect(reader.scope).toBe("mcp:read");
    const { client, transport } = await connectClient(hub.url, reader.access_token);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("run_command");
    const refused = await rawPost(hub.url, reader.access_token, { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "run_command", arguments: { host: "local", command: "true" } } }, { "mcp-session-id": transport.sessionId! });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toContain(`error="insufficient_scope"`);
    await client.close();
  });

  it("dynamic registration is limited per client address as the hub's own server saw it: a client-sent x-leasehold-peer header does not make a new address (429 with Retry-After)", async () => {
    let limited: Response | undefined;
    // The flood's rows go afterwards, so the other registration test here is not limited by this one.
    onTestFinished(async () => void (await handle.db.delete(oauthClients).where(like(oauthClients.name, "Flood %"))));
    for (let i = 0; i < 25 && limited === undefined; i += 1) {
      const res = await fetch(`${hub.url}/api/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-leasehold-peer": `203.0.113.${i}` },
        body: JSON.stringify({ client_name: `Flood ${i}`, redirect_uris: [REDIRECT] }),
      });
      if (res.status === 429) limited = res;
      else expect(res.status).toBe(201);
    }
    expect(limited, "the 21st registration from one address must be refused").toBeDefined();
    expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await limited!.json()).toMatchObject({ error: "temporarily_unavailable" });
  });

  it("dynamic registration over HTTP, and CORS for browser-based clients on the OAuth endpoints", async () => {
    const res = await fetch(`${hub.url}/api/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_name: "Dyn over HTTP", redirect_uris: [REDIRECT] }) });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { client_id: string }).client_id).toMatch(/^dyn_/);
    const pre = await fetch(`${hub.url}/api/oauth/token`, { method: "OPTIONS", headers: { origin: "https://chat.example", "access-control-request-method": "POST" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
  });
});
