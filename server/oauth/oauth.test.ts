/**
 * The authorization server's flows against a real database (both kinds):
 * consent → code → tokens → the one authentication function, and the
 * hostile cases the issue lists (PKCE, code replay, redirect URI tricks,
 * refresh reuse, audience, CSRF on the consent handle, open redirects).
 * Client ID Metadata Documents are covered in client-metadata/ and end to
 * end in e2e/; here clients are registered by an admin (no network).
 */
import { expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { allEntries } from "../../test/pipeline/support";
import { oauthTokens } from "../db/schema";
import { hashActor } from "../ledger/entry";
import { describeEachDatabase } from "../../test/support/databases";
import { authenticateToken, listTokens, revokeToken } from "../tokens";
import { beginAuthorization, decideAuthorization, type OAuthContext } from "./authorize";
import { clientResolver, registerClientByAdmin } from "./clients";
import { handleRegistrationRequest, handleTokenRequest } from "./http";
import { authorizationServerMetadata, mcpResourceUrl, protectedResourceMetadata } from "./metadata";
import { challengeOf } from "./pkce";
import { setOAuthSettings } from "./settings";
import { exchangeCode, refreshGrant, revokeOAuthToken } from "./token-service";

const HUB = "http://127.0.0.1:8700";
const OTHER_HUB = "http://127.0.0.1:8800";
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
  const ctx = (): OAuthContext => ({ db: db().handle.db, publicUrl: HUB, resolver: clientResolver([]), knownTools: TOOLS });
  const client = async () => registerClientByAdmin(db().handle.db, { name: "Test client", redirectUris: [REDIRECT, LOOPBACK] }, ADMIN.adminId);

  /** Consent approved for `clientId`: the code from the redirect. */
  async function approvedCode(clientId: string, options: { readOnly?: boolean; query?: Record<string, string | null>; tools?: string[] | null } = {}): Promise<{ code: string; location: URL }> {
    const begun = await beginAuthorization(ctx(), authorizeQuery(clientId, options.query), ADMIN);
    if (begun.kind !== "consent") throw new Error(`expected consent, got ${JSON.stringify(begun)}`);
    const { location } = await decideAuthorization(ctx(), { handle: begun.pending.handle, approve: true, readOnly: options.readOnly ?? false, tools: options.tools ?? null, hosts: null, lifetimeS: 86_400 }, ADMIN);
    const url = new URL(location);
    return { code: url.searchParams.get("code") ?? "", location: url };
  }

  async function tokensFor(clientId: string, options: { readOnly?: boolean } = {}) {
    const { code } = await approvedCode(clientId, options);
    const result = await exchangeCode(db().handle.db, HUB, { clientId, code, redirectUri: REDIRECT, codeVerifier: VERIFIER, resource: AUDIENCE });
    if (!result.ok) throw new Error(`exchange failed: ${result.description}`);
    return result.body;
  }

  it("discovery: the resource names this hub as its authorization server; the server metadata says S256 only, public clients, CIMD", () => {
    expect(protectedResourceMetadata(HUB)).toMatchObject({ resource: AUDIENCE, authorization_servers: [HUB], scopes_supported: ["mcp:read", "mcp:write"] });
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
});
