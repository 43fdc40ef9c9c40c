/**
 * The authorization server's flows against a real database (both kinds):
 * consent → code → tokens → the one authentication function, and the
 * hostile cases the issue lists (PKCE, code replay, redirect URI tricks,
 * refresh reuse, audience, CSRF on the consent handle, open redirects).
 * Client ID Metadata Documents are covered in client-metadata/ and end to
 * end in e2e/; here clients are registered by an admin (no network).
 */
import { expect, it } from "vitest";
import { count, eq } from "drizzle-orm";
import { allEntries } from "../../test/pipeline/support";
import { oauthClients, oauthTokens } from "../db/schema";
import { hashActor } from "../ledger/entry";
import { describeEachDatabase } from "../../test/support/databases";
import { authenticateToken, listTokens, revokeToken } from "../tokens";
import { beginAuthorization, decideAuthorization, type OAuthContext } from "./authorize";
import { clientResolver, DYNAMIC_REGISTRATIONS_PER_ADDRESS, MAX_DYNAMIC_CLIENTS, registerClientByAdmin, registerDynamicClient } from "./clients";
import { HEADER_PEER } from "../trust/protocol";
import { handleRegistrationRequest, handleTokenRequest } from "./http";
import { authorizationServerMetadata, challengeParams, mcpResourceUrl, protectedResourceMetadata } from "./metadata";
import { challengeOf } from "./pkce";
import { setOAuthSettings } from "./settings";
import { exchangeCode, refreshGrant, revokeOAuthToken } from "./token-service";
import { listedStatus, unredeemedGrants } from "./unredeemed";
import { adminCaller } from "../trpc/routers/test-callers";

const HUB = "http://127.0.0.1:8700";
const OTHER_HUB = "http://127.0.0.1:8800";
/** The admin URL's host a hub on loopback prints (http://localhost:PORT). */
const ADMIN_HOST = "localhost";
const AUDIENCE = mcpResourceUrl(HUB);
const REDIRECT = "https://client.example/cb";
const LOOPBACK = "http://127.0.0.1:33418/callback";
const VERIFIER = "v".repeat(20) + "-._~" + "A1".repeat(12);
const TOOLS = ["health", "hosts_list", "run_command"];
const ADMIN = { adminId: "00000000-0000-4000-8000-000000000001", username: "owner" };
const OTHER_ADMIN = { adminId: "00000000-0000-4000-8000-000000000002", username: "other" };

function authorizeQuery(clientId: string, overrides: Record<string, string | null> = {}): URLSearchParams {
  const base: Record<string, string | null> = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challengeOf(VERIFIER),
    code_challenge_method: "S256",
    state: "st-123",
    scope: "mcp:read mcp:write",
    resource: AUDIENCE,
    ...overrides,
  };
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(base)) if (v !== null) q.set(k, v);
  return q;
}

describeEachDatabase("oauth authorization server", (db) => {
  const ctx = (): OAuthContext => ({ db: db().handle.db, publicUrl: HUB, adminHost: ADMIN_HOST, resolver: clientResolver([]), knownTools: TOOLS });
  const client = async () => registerClientByAdmin(db().handle.db, { name: "Test client", redirectUris: [REDIRECT, LOOPBACK] }, ADMIN.adminId, ADMIN_HOST);

  /** Consent approved for `clientId`: the code from the redirect. */
  async function approvedCode(clientId: string, options: { readOnly?: boolean; observeAny?: boolean; query?: Record<string, string | null>; tools?: string[] | null } = {}): Promise<{ code: string; location: URL }> {
    const begun = await beginAuthorization(ctx(), authorizeQuery(clientId, options.query), ADMIN);
    if (begun.kind !== "consent") throw new Error(`expected consent, got ${JSON.stringify(begun)}`);
    const { location } = await decideAuthorization(
      ctx(),
      { handle: begun.pending.handle, approve: true, readOnly: options.readOnly ?? false, ...(options.observeAny === undefined ? {} : { observeAny: options.observeAny }), tools: options.tools ?? null, hosts: null, lifetimeS: 86_400 },
      ADMIN,
    );
    const url = new URL(location);
    return { code: url.searchParams.get("code") ?? "", location: url };
  }

  async function tokensFor(clientId: string, options: { readOnly?: boolean; observeAny?: boolean; query?: Record<string, string | null> } = {}) {
    const { code } = await approvedCode(clientId, options);
    const result = await exchangeCode(db().handle.db, HUB, { clientId, code, redirectUri: REDIRECT, codeVerifier: VERIFIER, resource: AUDIENCE });
    if (!result.ok) throw new Error(`exchange failed: ${result.description}`);
    return result.body;
  }

  it("discovery: the resource names this hub as its authorization server; the server metadata says S256 only, public clients, CIMD", () => {
    expect(protectedResourceMetadata(HUB)).toMatchObject({ resource: AUDIENCE, authorization_servers: [HUB], scopes_supported: ["mcp:read", "mcp:write", "mcp:observe-any"] });
    const on = authorizationServerMetadata(HUB, { dynamicRegistration: true });
    expect(on).toMatchObject({ issuer: HUB, code_challenge_methods_supported: ["S256"], token_endpoint_auth_methods_supported: ["none"], client_id_metadata_document_supported: true, registration_endpoint: `${HUB}/api/oauth/register` });
    expect(authorizationServerMetadata(HUB, { dynamicRegistration: false })).not.toHaveProperty("registration_endpoint");
  });

  it("consent → code (with state and iss) → tokens; the access token authenticates only for this hub's MCP URL; oauth_grant/1 sealed before the grant", async () => {
    const c = await client();
    const { code, location } = await approvedCode(c.id);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get("state")).toBe("st-123");
    expect(location.searchParams.get("iss")).toBe(HUB);
    const result = await exchangeCode(db().handle.db, HUB, { clientId: c.id, code, redirectUri: REDIRECT, codeVerifier: VERIFIER, resource: AUDIENCE });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.body).toMatchObject({ token_type: "Bearer", scope: "mcp:read mcp:write" });
    expect(result.body.access_token).toMatch(/^lha_/);
    expect(result.body.refresh_token).toMatch(/^lhr_/);
    expect(result.body.expires_in).toBeLessThanOrEqual(900);
    const auth = await authenticateToken(db().handle.db, result.body.access_token, new Date(), AUDIENCE);
    expect(auth).toMatchObject({ ok: true, token: { kind: "oauth", oauthClientId: c.id, readOnly: false } });
    // RFC 8707: another resource (another hub's URL), or a caller naming none, is refused.
    expect(await authenticateToken(db().handle.db, result.body.access_token, new Date(), mcpResourceUrl(OTHER_HUB))).toEqual({ ok: false, reason: "wrong_audience" });
    expect(await authenticateToken(db().handle.db, result.body.access_token)).toEqual({ ok: false, reason: "wrong_audience" });
    // Refresh tokens are never bearer credentials.
    expect(await authenticateToken(db().handle.db, result.body.refresh_token, new Date(), AUDIENCE)).toEqual({ ok: false, reason: "malformed" });
    const grantId = auth.ok ? auth.token.id : "";
    const sealed = (await allEntries(db().handle.db)).filter((e) => e.type === "oauth_grant/1" && e.data.token_id === grantId);
    expect(sealed.map((e) => e.type === "oauth_grant/1" && [e.data.event, e.data.client_kind, e.data.read_only, e.data.scopes])).toEqual([["granted", "registered", false, ["mcp:read", "mcp:write"]]]);
    expect((await listTokens(db().handle.db)).find((t) => t.id === grantId)).toMatchObject({ kind: "oauth", name: "OAuth Test client" });
  });

  it("an approved consent whose code is not redeemed is listed (tokens page, token list) as pending, expiring with the code — not as an active day-long grant; expired once the code is; active with its lifetime once redeemed", async () => {
    const c = await client();
    const { caller } = await adminCaller(db().handle, "owner");
    const listed = async (at: Date) => {
      const unredeemed = await unredeemedGrants(db().handle.db);
      return (await listTokens(db().handle.db)).filter((t) => t.oauthClientId === c.id).map((t) => ({ id: t.id, ...listedStatus(t, unredeemed, at) }));
    };
    const before = Date.now();
    const { code } = await approvedCode(c.id);
    const [pending] = await listed(new Date());
    expect(pending?.status).toBe("pending");
    // The code's minute, not the day the admin granted.
    expect(pending!.expiresAt!.getTime()).toBeGreaterThanOrEqual(before + 59_000);
    expect(pending!.expiresAt!.getTime()).toBeLessThanOrEqual(Date.now() + 61_000);
    const page = (await caller.tokens.list()).tokens.find((t) => t.id === pending!.id);
    expect(page).toMatchObject({ status: "pending", expiresAt: pending!.expiresAt!.toISOString() });
    // Past the code's expiry, never redeemed: expired.
    expect((await listed(new Date(Date.now() + 120_000)))[0]).toMatchObject({ status: "expired", expiresAt: pending!.expiresAt });
    // Redeemed: the grant with the lifetime the admin chose (a day here).
    const exchanged = await exchangeCode(db().handle.db, HUB, { clientId: c.id, code, redirectUri: REDIRECT, codeVerifier: VERIFIER, resource: AUDIENCE });
    expect(exchanged.ok).toBe(true);
    const [active] = await listed(new Date());
    expect(active?.status).toBe("active");
    expect(active!.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 86_000_000);
    expect((await caller.tokens.list()).tokens.find((t) => t.id === pending!.id)).toMatchObject({ status: "active" });
    // A pending grant revoked is revoked.
    const second = await approvedCode(c.id);
    expect(second.code).not.toBe("");
    const fresh = (await listed(new Date())).find((t) => t.status === "pending")!;
    await revokeToken(db().handle.db, fresh.id, "test");
    expect((await listed(new Date())).find((t) => t.id === fresh.id)?.status).toBe("revoked");
  });

  it("a read-only consent, or a request without mcp:write, yields a read-only grant (narrowing only, never widening)", async () => {
    const c = await client();
    const ticked = await tokensFor(c.id, { readOnly: true });
    expect(ticked.scope).toBe("mcp:read");
    expect(await authenticateToken(db().handle.db, ticked.access_token, new Date(), AUDIENCE)).toMatchObject({ ok: true, token: { readOnly: true } });
    const { code } = await approvedCode(c.id, { readOnly: false, query: { scope: "mcp:read" } });
    const asked = await exchangeCode(db().handle.db, HUB, { clientId: c.id, code, redirectUri: REDIRECT, codeVerifier: VERIFIER, resource: null });
    expect(asked.ok && asked.body.scope).toBe("mcp:read");
  });

  it("PKCE is required and S256 only: missing challenge, plain, and a malformed challenge go back as invalid_request; a wrong verifier burns the code", async () => {
    const c = await client();
    const cases: Record<string, string | null>[] = [{ code_challenge: null }, { code_challenge_method: "plain" }, { code_challenge_method: null }, { code_challenge: "short" }];
    for (const overrides of cases) {
      const begun = await beginAuthorization(ctx(), authorizeQuery(c.id, overrides), ADMIN);
      expect(begun.kind, JSON.stringify(overrides)).toBe("redirect");
      if (begun.kind === "redirect") expect(new URL(begun.location).searchParams.get("error")).toBe("invalid_request");
    }
    const { code } = await approvedCode(c.id);
    const wrong = await exchangeCode(db().handle.db, HUB, { clientId: c.id, code, redirectUri: REDIRECT, codeVerifier: "w".repeat(43), resource: null });
    expect(wrong).toMatchObject({ ok: false, error: "invalid_grant" });
    const missing = await exchangeCode(db().handle.db, HUB, { clientId: c.id, code, redirectUri: REDIRECT, codeVerifier: VERIFIER, resource: null });
    expect(missing).toMatchObject({ ok: false, error: "invalid_grant" });
  });

  it("a replayed authorization code is refused and revokes the grant made with it (its access token stops working)", async () => {
    const c = await client();
    const { code } = await approvedCode(c.id);
    const first = await exchangeCode(db().handle.db, HUB, { clientId: c.id, code, redirectUri: REDIRECT, codeVerifier: VERIFIER, resource: null });
    expect(first.ok).toBe(true);
    if (!first.ok) return;
    expect((await authenticateToken(db().handle.db, first.body.access_token, new Date(), AUDIENCE)).ok).toBe(true);
    const replay = await exchangeCode(db().handle.db, HUB, { clientId: c.id, code, redirectUri: REDIRECT, codeVerifier: VERIFIER, resource: null });
    expect(replay).toMatchObject({ ok: false, error: "invalid_grant" });
    expect(await authenticateToken(db().handle.db, first.body.access_token, new Date(), AUDIENCE)).toEqual({ ok: false, reason: "revoked" });
    // Recorded as the hub's own doing, not a person's.
    const revoked = (await allEntries(db().handle.db)).filter((e) => e.type === "token/1" && e.data.event === "revoked" && e.actor === hashActor("system", "oauth-reuse-detection"));
    expect(revoked.length).toBeGreaterThanOrEqual(1);
  });

  it("redirect URI tricks never redirect: prefix, suffix, case, trailing slash, other port on https, userinfo, missing", async () => {
    const c = await client();
    const tricks = [
      "https://client.example/cb/extra",
      "https://client.example/c",
      "https://CLIENT.example/cb",
      "https://client.example/CB",
      "https://client.example/cb/",
      "https://client.example:8443/cb",
      "https://client.example@evil.example/cb",
      "https://client.example.evil.example/cb",
      "https://evil.example/cb",
      "http://client.example/cb",
    ];
    for (const uri of tricks) {
      const begun = await beginAuthorization(ctx(), authorizeQuery(c.id, { redirect_uri: uri }), ADMIN);
      expect(begun.kind, uri).toBe("error");
    }
    expect((await beginAuthorization(ctx(), authorizeQuery(c.id, { redirect_uri: null }), ADMIN)).kind).toBe("error");
    // RFC 8252 §7.3: a loopback redirect may change port only.
    expect((await beginAuthorization(ctx(), authorizeQuery(c.id, { redirect_uri: "http://127.0.0.1:50123/callback" }), ADMIN)).kind).toBe("consent");
    expect((await beginAuthorization(ctx(), authorizeQuery(c.id, { redirect_uri: "http://127.0.0.1:50123/callback/x" }), ADMIN)).kind).toBe("error");
    // An unknown client is an error page too, never a redirect to wherever the link says.
    expect((await beginAuthorization(ctx(), authorizeQuery("reg_AAAAAAAAAAAAAAAAAAAAAA"), ADMIN)).kind).toBe("error");
    expect((await beginAuthorization(ctx(), authorizeQuery("not-a-client"), ADMIN)).kind).toBe("error");
    // A parameter sent twice is refused (RFC 6749 §3.1).
    const doubled = authorizeQuery(c.id);
    doubled.append("redirect_uri", "https://evil.example/cb");
    expect((await beginAuthorization(ctx(), doubled, ADMIN)).kind).toBe("error");
    // At the token endpoint the redirect_uri must be the very one authorized.
    const { code } = await approvedCode(c.id);
    expect(await exchangeCode(db().handle.db, HUB, { clientId: c.id, code, redirectUri: "https://client.example/cb/", codeVerifier: VERIFIER, resource: null })).toMatchObject({ ok: false, error: "invalid_grant" });
  });

  it("resource indicators: another resource at authorize goes back as invalid_target; at the token endpoint too", async () => {
    const c = await client();
    const begun = await beginAuthorization(ctx(), authorizeQuery(c.id, { resource: mcpResourceUrl(OTHER_HUB) }), ADMIN);
    expect(begun.kind === "redirect" && new URL(begun.location).searchParams.get("error")).toBe("invalid_target");
    const { code } = await approvedCode(c.id);
    expect(await exchangeCode(db().handle.db, HUB, { clientId: c.id, code, redirectUri: REDIRECT, codeVerifier: VERIFIER, resource: mcpResourceUrl(OTHER_HUB) })).toMatchObject({ ok: false, error: "invalid_target" });
    // The same code redeemed by the hub at another public URL (a token from one hub used at another).
    const second = await approvedCode(c.id);
    expect(await exchangeCode(db().handle.db, OTHER_HUB, { clientId: c.id, code: second.code, redirectUri: REDIRECT, codeVerifier: VERIFIER, resource: null })).toMatchObject({ ok: false, error: "invalid_target" });
  });

  it("refresh tokens rotate; a rotated one presented again is refused and revokes the whole grant", async () => {
    const c = await client();
    const first = await tokensFor(c.id);
    const second = await refreshGrant(db().handle.db, HUB, { clientId: c.id, refreshToken: first.refresh_token, resource: AUDIENCE, scope: null });
    expect(second.ok).toBe(true);
    if (!second.ok) return;
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect((await authenticateToken(db().handle.db, second.body.access_token, new Date(), AUDIENCE)).ok).toBe(true);
    // Asking for more than the grant holds is refused; another client's refresh is refused.
    expect(await refreshGrant(db().handle.db, HUB, { clientId: "reg_BBBBBBBBBBBBBBBBBBBBBB", refreshToken: second.body.refresh_token, resource: null, scope: null })).toMatchObject({ ok: false, error: "invalid_grant" });
    const reuse = await refreshGrant(db().handle.db, HUB, { clientId: c.id, refreshToken: first.refresh_token, resource: null, scope: null });
    expect(reuse).toMatchObject({ ok: false, error: "invalid_grant" });
    expect(await authenticateToken(db().handle.db, second.body.access_token, new Date(), AUDIENCE)).toEqual({ ok: false, reason: "revoked" });
    expect(await refreshGrant(db().handle.db, HUB, { clientId: c.id, refreshToken: second.body.refresh_token, resource: null, scope: null })).toMatchObject({ ok: false, error: "invalid_grant" });
  });

  it("rotation prunes the grant's dead tokens: expired access tokens go, the just-used refresh token stays (for reuse detection)", async () => {
    const c = await client();
    const first = await tokensFor(c.id);
    const grant = await authenticateToken(db().handle.db, first.access_token, new Date(), AUDIENCE);
    if (!grant.ok) throw new Error("no grant");
    const rows = async () => (await db().handle.db.select({ kind: oauthTokens.kind, used: oauthTokens.usedAt }).from(oauthTokens).where(eq(oauthTokens.tokenId, grant.token.id))).map((r) => `${r.kind}${r.used === null ? "" : ":used"}`).sort();
    expect(await rows()).toEqual(["access", "refresh"]);
    const later = new Date(Date.now() + 20 * 60_000);
    const second = await refreshGrant(db().handle.db, HUB, { clientId: c.id, refreshToken: first.refresh_token, resource: null, scope: null }, later);
    expect(second.ok).toBe(true);
    expect(await rows()).toEqual(["access", "refresh", "refresh:used"]);
  });

  it("a read-only grant cannot refresh into mcp:write", async () => {
    const c = await client();
    const ro = await tokensFor(c.id, { readOnly: true });
    expect(await refreshGrant(db().handle.db, HUB, { clientId: c.id, refreshToken: ro.refresh_token, resource: null, scope: "mcp:read mcp:write" })).toMatchObject({ ok: false, error: "invalid_scope" });
  });

  it("the consent handle is the CSRF token: another admin, an unknown handle, or a second decision are refused", async () => {
    const c = await client();
    const begun = await beginAuthorization(ctx(), authorizeQuery(c.id), ADMIN);
    if (begun.kind !== "consent") throw new Error("expected consent");
    const decision = { handle: begun.pending.handle, approve: true, readOnly: false, tools: null, hosts: null, lifetimeS: 86_400 };
    await expect(decideAuthorization(ctx(), decision, OTHER_ADMIN)).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(decideAuthorization(ctx(), { ...decision, handle: "x".repeat(43) }, ADMIN)).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(decideAuthorization(ctx(), { ...decision, lifetimeS: 10 }, ADMIN)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await decideAuthorization(ctx(), decision, ADMIN);
    await expect(decideAuthorization(ctx(), decision, ADMIN)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  it("deny sends access_denied back with the state, and is sealed as oauth_grant/1 denied", async () => {
    const c = await client();
    const begun = await beginAuthorization(ctx(), authorizeQuery(c.id), ADMIN);
    if (begun.kind !== "consent") throw new Error("expected consent");
    const before = (await allEntries(db().handle.db)).filter((e) => e.type === "oauth_grant/1" && e.data.event === "denied").length;
    const { location } = await decideAuthorization(ctx(), { handle: begun.pending.handle, approve: false, readOnly: false, tools: null, hosts: null, lifetimeS: 86_400 }, ADMIN);
    const url = new URL(location);
    expect([url.searchParams.get("error"), url.searchParams.get("state"), url.searchParams.get("code")]).toEqual(["access_denied", "st-123", null]);
    expect((await allEntries(db().handle.db)).filter((e) => e.type === "oauth_grant/1" && e.data.event === "denied").length).toBe(before + 1);
  });

  it("revocation: revoking the grant ends its access tokens; RFC 7009 revoking a refresh token revokes the grant, another client's request changes nothing", async () => {
    const c = await client();
    const a = await tokensFor(c.id);
    const grant = await authenticateToken(db().handle.db, a.access_token, new Date(), AUDIENCE);
    if (!grant.ok) throw new Error("no grant");
    await revokeToken(db().handle.db, grant.token.id, ADMIN.adminId);
    expect(await authenticateToken(db().handle.db, a.access_token, new Date(), AUDIENCE)).toEqual({ ok: false, reason: "revoked" });
    const b = await tokensFor(c.id);
    await revokeOAuthToken(db().handle.db, { clientId: "reg_CCCCCCCCCCCCCCCCCCCCCC", token: b.refresh_token });
    expect((await authenticateToken(db().handle.db, b.access_token, new Date(), AUDIENCE)).ok).toBe(true);
    await revokeOAuthToken(db().handle.db, { clientId: c.id, token: b.refresh_token });
    expect(await authenticateToken(db().handle.db, b.access_token, new Date(), AUDIENCE)).toEqual({ ok: false, reason: "revoked" });
  });

  it("an expired access token is refused", async () => {
    const c = await client();
    const t = await tokensFor(c.id);
    expect(await authenticateToken(db().handle.db, t.access_token, new Date(Date.now() + 16 * 60_000), AUDIENCE)).toEqual({ ok: false, reason: "expired" });
  });

  it("token endpoint HTTP: form only, no client secrets, no repeated parameters, unknown grant types refused", async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      handleTokenRequest(new Request(`${HUB}/api/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body }), ctx());
    const read = async (r: Response) => ({ status: r.status, body: (await r.json()) as { error: string } });
    expect(await read(await post("grant_type=authorization_code&client_id=x&code=y&client_secret=s"))).toMatchObject({ status: 401, body: { error: "invalid_client" } });
    expect(await read(await post("grant_type=authorization_code&client_id=x&code=y", { authorization: "Basic eDp5" }))).toMatchObject({ status: 401, body: { error: "invalid_client" } });
    expect(await read(await post("grant_type=authorization_code&client_id=x&code=y&code=z"))).toMatchObject({ status: 400, body: { error: "invalid_request" } });
    expect(await read(await post("grant_type=password&client_id=x&username=a&password=b"))).toMatchObject({ status: 400, body: { error: "unsupported_grant_type" } });
    expect(await read(await post("grant_type=authorization_code&client_id=x&code=nope"))).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    const json = await handleTokenRequest(new Request(`${HUB}/api/oauth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }), ctx());
    expect(json.status).toBe(400);
    const ok = await post("grant_type=authorization_code&client_id=x&code=nope");
    expect(ok.headers.get("cache-control")).toBe("no-store");
  });

  it("dynamic registration: a valid public client is registered; secrets and bad redirect URIs refused; an owner can turn it off", async () => {
    const register = (body: unknown) => handleRegistrationRequest(new Request(`${HUB}/api/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }), ctx());
    const good = await register({ client_name: "Dyn", redirect_uris: [LOOPBACK], token_endpoint_auth_method: "none" });
    expect(good.status).toBe(201);
    const made = (await good.json()) as { client_id: string; redirect_uris: string[] };
    expect(made.client_id).toMatch(/^dyn_/);
    expect(made.redirect_uris).toEqual([LOOPBACK]);
    expect((await beginAuthorization(ctx(), authorizeQuery(made.client_id, { redirect_uri: LOOPBACK }), ADMIN)).kind).toBe("consent");
    expect((await register({ client_name: "S", redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_basic" })).status).toBe(400);
    expect((await register({ client_name: "H", redirect_uris: ["http://evil.example/cb"] })).status).toBe(400);
    await setOAuthSettings(db().handle.db, { dynamicRegistration: false }, ADMIN.adminId);
    try {
      const off = await register({ client_name: "Off", redirect_uris: [LOOPBACK] });
      expect(off.status).toBe(403);
    } finally {
      await setOAuthSettings(db().handle.db, { dynamicRegistration: true }, ADMIN.adminId);
    }
  });

  const registerFrom = (body: unknown, peer: string | null) =>
    handleRegistrationRequest(
      new Request(`${HUB}/api/oauth/register`, { method: "POST", headers: { "content-type": "application/json", ...(peer === null ? {} : { [HEADER_PEER]: peer }) }, body: JSON.stringify(body) }),
      ctx(),
    );

  it("no redirect URI on the admin's host name: dynamic registration answers invalid_redirect_uri saying why, an owner's registration is refused, a stored one is never redirected to", async () => {
    const dyn = await registerFrom({ client_name: "Cookie thief", redirect_uris: ["http://localhost:9999/callback"] }, "192.0.2.10");
    expect(dyn.status).toBe(400);
    const answer = (await dyn.json()) as { error: string; error_description: string };
    expect(answer.error).toBe("invalid_redirect_uri");
    expect(answer.error_description).toContain("cookie");
    expect(answer.error_description).toContain("http://127.0.0.1:PORT or http://[::1]:PORT");
    expect((await registerFrom({ client_name: "Dotted", redirect_uris: ["https://localhost./cb"] }, "192.0.2.10")).status).toBe(400);
    await expect(registerClientByAdmin(db().handle.db, { name: "Owner's", redirectUris: ["http://LOCALHOST:9999/cb"] }, ADMIN.adminId, ADMIN_HOST)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(registerClientByAdmin(db().handle.db, { name: "Owner's", redirectUris: ["http://localhost:9999/cb"] }, ADMIN.adminId, ADMIN_HOST)).rejects.toThrow(/admin pages/);
    // A client stored before (or under another admin URL) still never sends the browser there.
    const id = "reg_LLLLLLLLLLLLLLLLLLLLLL";
    await db().handle.db.insert(oauthClients).values({ id, kind: "registered", name: "Old client", redirectUris: ["http://localhost:9999/callback"], metadata: {} });
    const begun = await beginAuthorization(ctx(), authorizeQuery(id, { redirect_uri: "http://localhost:9999/callback" }), ADMIN);
    expect(begun.kind).toBe("error");
    expect(begun.kind === "error" && begun.message).toContain("admin pages");
  });

  it("a Client ID Metadata Document listing a redirect URI on the admin's host name is refused on the page, never redirected, and not stored", async () => {
    const clientId = "https://cimd.example/clients/thief.json";
    const resolver = clientResolver([]);
    // The document as a fetch would have checked it (client-metadata/ tests the fetch itself).
    await resolver.cache.get(clientId, () =>
      Promise.resolve({ ok: true, maxAgeS: 300, metadata: { clientId, name: "Thief", redirectUris: ["http://localhost:9999/callback"], clientUri: null, logoUri: null, raw: { client_id: clientId } } }),
    );
    const begun = await beginAuthorization({ ...ctx(), resolver }, authorizeQuery(clientId, { redirect_uri: "http://localhost:9999/callback" }), ADMIN);
    expect(begun.kind).toBe("error");
    expect(begun.kind === "error" && begun.message).toContain("localhost");
    expect(await db().handle.db.select().from(oauthClients).where(eq(oauthClients.id, clientId))).toEqual([]);
  });

  it("client names: invisible, format and line-break characters are refused in dynamic and owner registration; a folded or mixed-script name is flagged on the consent page", async () => {
    const zeroWidth = await registerFrom({ client_name: "Claude\u200b Code", redirect_uris: [LOOPBACK] }, "192.0.2.11");
    expect(zeroWidth.status).toBe(400);
    expect(((await zeroWidth.json()) as { error: string }).error).toBe("invalid_client_metadata");
    expect((await registerFrom({ client_name: "Claude Code\nApproved", redirect_uris: [LOOPBACK] }, "192.0.2.11")).status).toBe(400);
    await expect(registerClientByAdmin(db().handle.db, { name: "Claude\u200b Code", redirectUris: [REDIRECT] }, ADMIN.adminId, ADMIN_HOST)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(registerClientByAdmin(db().handle.db, { name: "Claude\u2066Code", redirectUris: [REDIRECT] }, ADMIN.adminId, ADMIN_HOST)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });

    const warningsFor = async (name: string): Promise<{ shown: string; warnings: string[] }> => {
      const made = await registerFrom({ client_name: name, redirect_uris: [LOOPBACK] }, "192.0.2.12");
      expect(made.status).toBe(201);
      const { client_id } = (await made.json()) as { client_id: string };
      const begun = await beginAuthorization(ctx(), authorizeQuery(client_id, { redirect_uri: LOOPBACK }), ADMIN);
      if (begun.kind !== "consent") throw new Error(JSON.stringify(begun));
      return { shown: begun.pending.client.name, warnings: begun.pending.nameWarnings };
    };
    const fullwidth = await warningsFor("\uff23laude Code");
    expect(fullwidth.shown).toBe("Claude Code");
    expect(fullwidth.warnings.join(" ")).toContain("NFKC");
    const greek = await warningsFor("Cl\u03bfude Code");
    expect(greek.warnings.join(" ")).toContain("mixes letters of different scripts");
    expect((await warningsFor("Claude Code")).warnings).toEqual([]);
    // An owner's client is held to the same rules and flagged the same way.
    const owners = await registerClientByAdmin(db().handle.db, { name: "\uff23laude", redirectUris: [REDIRECT] }, ADMIN.adminId, ADMIN_HOST);
    expect(owners.name).toBe("Claude");
    const begun = await beginAuthorization(ctx(), authorizeQuery(owners.id), ADMIN);
    expect(begun.kind === "consent" && begun.pending.nameWarnings.join(" ")).toContain("NFKC");
  });

  it("dynamic registration is rate-limited per client address: past the limit 429 with Retry-After and an RFC 7591 error body; another address is not affected; the window passes", async () => {
    const from = "198.51.100.7";
    for (let i = 0; i < DYNAMIC_REGISTRATIONS_PER_ADDRESS; i += 1) {
      expect((await registerFrom({ client_name: `Flood ${i}`, redirect_uris: [LOOPBACK] }, from)).status).toBe(201);
    }
    const limited = await registerFrom({ client_name: "One more", redirect_uris: [LOOPBACK] }, from);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(3000);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect((await limited.json()) as unknown).toMatchObject({ error: "temporarily_unavailable", error_description: expect.stringContaining("in the last hour") });
    // The address the hub's server records is what counts; a different one registers.
    expect((await registerFrom({ client_name: "Neighbour", redirect_uris: [LOOPBACK] }, "198.51.100.8")).status).toBe(201);
    const later = new Date(Date.now() + 61 * 60_000);
    expect(await registerDynamicClient(db().handle.db, { client_name: "Next hour", redirect_uris: [LOOPBACK] }, { adminHost: ADMIN_HOST, from }, later)).toMatchObject({ ok: true });
  });

  it("a refresh asking for mcp:read on a read-write grant yields tokens that only read (and cannot widen again); asking for more than the refresh token carries is invalid_scope", async () => {
    const c = await client();
    const full = await tokensFor(c.id);
    const refresh = (body: string) =>
      handleTokenRequest(new Request(`${HUB}/api/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body }), ctx());
    const narrowed = await refresh(`grant_type=refresh_token&client_id=${c.id}&refresh_token=${full.refresh_token}&scope=mcp%3Aread`);
    expect(narrowed.status).toBe(200);
    const narrow = (await narrowed.json()) as { access_token: string; refresh_token: string; scope: string };
    expect(narrow.scope).toBe("mcp:read");
    expect(await authenticateToken(db().handle.db, narrow.access_token, new Date(), AUDIENCE)).toMatchObject({ ok: true, token: { readOnly: true } });
    // The narrowed refresh token stays narrow, with or without a scope, and cannot ask for write again.
    const widen = await refreshGrant(db().handle.db, HUB, { clientId: c.id, refreshToken: narrow.refresh_token, resource: null, scope: "mcp:read mcp:write" });
    expect(widen).toMatchObject({ ok: false, error: "invalid_scope" });
    const again = await refreshGrant(db().handle.db, HUB, { clientId: c.id, refreshToken: narrow.refresh_token, resource: null, scope: null });
    expect(again.ok && again.body.scope).toBe("mcp:read");
    if (!again.ok) return;
    expect(await authenticateToken(db().handle.db, again.body.access_token, new Date(), AUDIENCE)).toMatchObject({ ok: true, token: { readOnly: true } });
    // The grant itself is unchanged: another refresh token of it (from a fresh consent) still yields write.
    const other = await tokensFor(c.id);
    const wide = await refreshGrant(db().handle.db, HUB, { clientId: c.id, refreshToken: other.refresh_token, resource: null, scope: null });
    expect(wide.ok && wide.body.scope).toBe("mcp:read mcp:write");
    if (wide.ok) expect(await authenticateToken(db().handle.db, wide.body.access_token, new Date(), AUDIENCE)).toMatchObject({ ok: true, token: { readOnly: false } });
  });

  it("mcp:observe-any is granted only when the client asked for it AND the owner ticked it; never with read-only; the grant's digest and oauth_grant/1 say so", async () => {
    const c = await client();
    const asked = { scope: "mcp:read mcp:write mcp:observe-any" };
    // Asked, but the owner did not tick it: a judged grant.
    const unticked = await tokensFor(c.id, { query: asked });
    expect(unticked.scope).toBe("mcp:read mcp:write");
    expect(await authenticateToken(db().handle.db, unticked.access_token, new Date(), AUDIENCE)).toMatchObject({ ok: true, token: { observe: "judged", readOnly: false } });
    // Ticked, but the client never asked: still judged (the owner cannot be led to widen a request either).
    const notAsked = await tokensFor(c.id, { observeAny: true });
    expect(notAsked.scope).toBe("mcp:read mcp:write");
    expect(await authenticateToken(db().handle.db, notAsked.access_token, new Date(), AUDIENCE)).toMatchObject({ ok: true, token: { observe: "judged" } });
    // Ticked together with read-only: read-only wins, observe stays judged.
    const readOnly = await tokensFor(c.id, { query: asked, observeAny: true, readOnly: true });
    expect(readOnly.scope).toBe("mcp:read");
    expect(await authenticateToken(db().handle.db, readOnly.access_token, new Date(), AUDIENCE)).toMatchObject({ ok: true, token: { observe: "judged", readOnly: true } });
    // Asked and ticked.
    const granted = await tokensFor(c.id, { query: asked, observeAny: true });
    expect(granted.scope).toBe("mcp:read mcp:write mcp:observe-any");
    const auth = await authenticateToken(db().handle.db, granted.access_token, new Date(), AUDIENCE);
    expect(auth).toMatchObject({ ok: true, token: { observe: "any", readOnly: false } });
    const grantId = auth.ok ? auth.token.id : "";
    const sealed = (await allEntries(db().handle.db)).filter((e) => e.type === "oauth_grant/1" && e.data.token_id === grantId);
    expect(sealed.map((e) => e.type === "oauth_grant/1" && e.data.scopes)).toEqual([["mcp:read", "mcp:write", "mcp:observe-any"]]);
    // The 401 challenge never names it, so no client asks for it without meaning to.
    expect(challengeParams(HUB)).toContain(`scope="mcp:read mcp:write"`);
  });

  it("a refresh may narrow mcp:observe-any away but never add it back; the narrowed access token is judged", async () => {
    const c = await client();
    const full = await tokensFor(c.id, { query: { scope: "mcp:read mcp:write mcp:observe-any" }, observeAny: true });
    const narrowed = await refreshGrant(db().handle.db, HUB, { clientId: c.id, refreshToken: full.refresh_token, resource: null, scope: "mcp:read mcp:write" });
    expect(narrowed.ok && narrowed.body.scope).toBe("mcp:read mcp:write");
    if (!narrowed.ok) return;
    expect(await authenticateToken(db().handle.db, narrowed.body.access_token, new Date(), AUDIENCE)).toMatchObject({ ok: true, token: { observe: "judged", readOnly: false } });
    const widen = await refreshGrant(db().handle.db, HUB, { clientId: c.id, refreshToken: narrowed.body.refresh_token, resource: null, scope: "mcp:observe-any" });
    expect(widen).toMatchObject({ ok: false, error: "invalid_scope" });
    // A judged grant cannot refresh into it either.
    const judged = await tokensFor(c.id);
    expect(await refreshGrant(db().handle.db, HUB, { clientId: c.id, refreshToken: judged.refresh_token, resource: null, scope: "mcp:read mcp:write mcp:observe-any" })).toMatchObject({ ok: false, error: "invalid_scope" });
  });

  it("at the dynamic-client bound the oldest never-used registration is evicted instead of refusing; used ones stay", async () => {
    const d = db().handle.db;
    const [row] = await d.select({ n: count() }).from(oauthClients).where(eq(oauthClients.kind, "dynamic"));
    const missing = MAX_DYNAMIC_CLIENTS - Number(row?.n ?? 0);
    // Registered within the last hour, so nothing ages out: only eviction can make room.
    const base = Date.now() - 50 * 60_000;
    const fillers = Array.from({ length: missing }, (_, i) => ({
      id: `dyn_${String(i).padStart(22, "F")}`,
      kind: "dynamic",
      name: `Filler ${i}`,
      redirectUris: [LOOPBACK],
      metadata: {},
      registeredFrom: `203.0.113.${i % 250}`,
      createdAt: new Date(base + i),
      lastUsedAt: i === 0 ? new Date() : null,
    }));
    for (let i = 0; i < fillers.length; i += 100) await d.insert(oauthClients).values(fillers.slice(i, i + 100));
    const made = await registerFrom({ client_name: "Newcomer", redirect_uris: [LOOPBACK] }, "203.0.113.251");
    expect(made.status).toBe(201);
    const [after] = await d.select({ n: count() }).from(oauthClients).where(eq(oauthClients.kind, "dynamic"));
    expect(Number(after?.n)).toBe(MAX_DYNAMIC_CLIENTS);
    const ids = new Set((await d.select({ id: oauthClients.id }).from(oauthClients)).map((r) => r.id));
    expect(ids.has(fillers[0]!.id)).toBe(true);
    expect(ids.has(fillers[1]!.id)).toBe(false);
    expect(ids.has(fillers[2]!.id)).toBe(true);
  });
});
