import { describe, expect, it } from "vitest";
import { validateRegistrationRequest } from "./registration";

const minimal = { redirect_uris: ["http://127.0.0.1:3333/callback"] };
/** Where the hub's admin pages are served by default (http://localhost:PORT). */
const ADMIN_HOST = "localhost";

describe("validateRegistrationRequest", () => {
  it("accepts a public client and returns what to store, the request as raw", () => {
    const body = {
      redirect_uris: ["http://127.0.0.1:6274/oauth/callback", "https://agent.example.com/cb"],
      client_name: "  MCP Inspector  ",
      client_uri: "https://inspector.example.com",
      logo_uri: "https://inspector.example.com/logo.png",
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      scope: "mcp:read mcp:write",
      software_id: "inspector",
    };
    expect(validateRegistrationRequest(body, ADMIN_HOST)).toEqual({
      ok: true,
      metadata: {
        name: "MCP Inspector",
        redirectUris: ["http://127.0.0.1:6274/oauth/callback", "https://agent.example.com/cb"],
        clientUri: "https://inspector.example.com",
        logoUri: "https://inspector.example.com/logo.png",
        raw: body,
      },
    });
  });

  it("names an unnamed client by its client_uri's host, else its first redirect URI's host or scheme", () => {
    expect(validateRegistrationRequest({ ...minimal, client_uri: "https://app.example.com/about" }, ADMIN_HOST)).toMatchObject({ ok: true, metadata: { name: "app.example.com" } });
    expect(validateRegistrationRequest(minimal, ADMIN_HOST)).toMatchObject({ ok: true, metadata: { name: "127.0.0.1:3333" } });
    expect(validateRegistrationRequest({ redirect_uris: ["com.example.app:/cb"] }, ADMIN_HOST)).toMatchObject({ ok: true, metadata: { name: "com.example.app" } });
  });

  it("keeps raw apart from the caller's object", () => {
    const body = { ...minimal, extra: { nested: true } };
    const result = validateRegistrationRequest(body, ADMIN_HOST);
    body.extra.nested = false;
    expect(result).toMatchObject({ ok: true, metadata: { raw: { extra: { nested: true } } } });
  });

  it.each([
    ["no redirect_uris", {}],
    ["an empty redirect_uris", { redirect_uris: [] }],
    ["redirect_uris not an array", { redirect_uris: "https://a.example.com/cb" }],
    ["a non-string redirect URI", { redirect_uris: [42] }],
    ["eleven redirect URIs", { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example.com/cb${i}`) }],
    ["an http non-loopback redirect URI", { redirect_uris: ["http://a.example.com/cb"] }],
    ["a redirect URI with a fragment", { redirect_uris: ["https://a.example.com/cb#f"] }],
    ["a redirect URI with userinfo", { redirect_uris: ["https://good.example.com@evil.example.com/cb"] }],
    ["one bad URI among good ones", { redirect_uris: ["https://a.example.com/cb", "javascript:alert(1)"] }],
  ])("answers invalid_redirect_uri for %s", (_why, body) => {
    expect(validateRegistrationRequest(body, ADMIN_HOST)).toMatchObject({ ok: false, error: "invalid_redirect_uri" });
  });

  it.each([
    ["http://localhost:9999/callback", "localhost"],
    ["http://localhost/callback", "localhost"],
    ["https://localhost:8443/cb", "localhost"],
    ["http://127.0.0.1:9999/callback", "127.0.0.1"],
    ["https://hub.example.org./cb", "hub.example.org"],
    ["https://HUB.example.org/cb", "hub.example.org"],
  ])("answers invalid_redirect_uri for %s while the admin pages are on %s, saying why and what to use", (uri, adminHost) => {
    const result = validateRegistrationRequest({ redirect_uris: ["https://agent.example.com/cb", uri] }, adminHost);
    expect(result).toMatchObject({ ok: false, error: "invalid_redirect_uri" });
    const description = result.ok ? "" : result.description;
    expect(description).toContain("admin pages");
    expect(description).toContain("cookie");
    expect(description).toContain("RFC 8252");
    expect(description).toMatch(/http:\/\/(127\.0\.0\.1|\[::1\]):PORT/);
  });

  it("stores a client_name in its NFKC form, keeping the request as sent in raw", () => {
    const body = { ...minimal, client_name: "\uff23laude \ufb01le tool" };
    expect(validateRegistrationRequest(body, ADMIN_HOST)).toMatchObject({ ok: true, metadata: { name: "Claude file tool", raw: { client_name: body.client_name } } });
  });

  it.each([
    ["a non-object body", "redirect_uris"],
    ["null", null],
    ["an array", [minimal]],
    ["client_secret_post", { ...minimal, token_endpoint_auth_method: "client_secret_post" }],
    ["client_secret_basic", { ...minimal, token_endpoint_auth_method: "client_secret_basic" }],
    ["private_key_jwt", { ...minimal, token_endpoint_auth_method: "private_key_jwt" }],
    ["a client_secret", { ...minimal, client_secret: "s" }],
    ["a client_secret_expires_at", { ...minimal, client_secret_expires_at: 0 }],
    ["the client_credentials grant", { ...minimal, grant_types: ["authorization_code", "client_credentials"] }],
    ["the implicit grant", { ...minimal, grant_types: ["implicit"] }],
    ["grant_types without authorization_code", { ...minimal, grant_types: ["refresh_token"] }],
    ["the token response type", { ...minimal, response_types: ["code", "token"] }],
    ["an empty response_types", { ...minimal, response_types: [] }],
    ["a non-string client_name", { ...minimal, client_name: 7 }],
    ["an empty client_name", { ...minimal, client_name: "   " }],
    ["an over-long client_name", { ...minimal, client_name: "n".repeat(201) }],
    ["a bidi override in client_name", { ...minimal, client_name: "Safe\u202eevil" }],
    ["an escape sequence in client_name", { ...minimal, client_name: "\u001b[31mAdmin" }],
    ["a zero-width space in client_name", { ...minimal, client_name: "Claude\u200b Code" }],
    ["a word joiner in client_name", { ...minimal, client_name: "Claude\u2060Code" }],
    ["a variation selector in client_name", { ...minimal, client_name: "Claude\ufe0f Code" }],
    ["a Hangul filler in client_name", { ...minimal, client_name: "Claude\u3164Code" }],
    ["a line break in client_name", { ...minimal, client_name: "Claude Code\nApproved by your admin" }],
    ["a line separator in client_name", { ...minimal, client_name: "Claude Code\u2028Approved" }],
    ["a lone surrogate in client_name", { ...minimal, client_name: "Claude \ud800Code" }],
    ["an http client_uri", { ...minimal, client_uri: "http://app.example.com" }],
    ["a javascript: logo_uri", { ...minimal, logo_uri: "javascript:alert(1)" }],
    ["a data: logo_uri", { ...minimal, logo_uri: "data:image/png;base64,AAAA" }],
    ["a logo_uri with userinfo", { ...minimal, logo_uri: "https://u@img.example.com/l.png" }],
    ["a non-string scope", { ...minimal, scope: ["mcp:read"] }],
  ])("answers invalid_client_metadata for %s", (_why, body) => {
    expect(validateRegistrationRequest(body, ADMIN_HOST)).toMatchObject({ ok: false, error: "invalid_client_metadata" });
  });
});
