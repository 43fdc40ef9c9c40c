import { describe, expect, it } from "vitest";
import { validateRegistrationRequest } from "./registration";

const minimal = { redirect_uris: ["http://127.0.0.1:3333/callback"] };

describe("validateRegistrationRequest", () => {
  it("accepts a public client and returns what to store, the request as raw", () => {
    const body = {
      redirect_uris: ["http://localhost:6274/oauth/callback", "https://agent.example.com/cb"],
      client_name: "  MCP Inspector  ",
      client_uri: "https://inspector.example.com",
      logo_uri: "https://inspector.example.com/logo.png",
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      scope: "mcp:read mcp:write",
      software_id: "inspector",
    };
    expect(validateRegistrationRequest(body)).toEqual({
      ok: true,
      metadata: {
        name: "MCP Inspector",
        redirectUris: ["http://localhost:6274/oauth/callback", "https://agent.example.com/cb"],
        clientUri: "https://inspector.example.com",
        logoUri: "https://inspector.example.com/logo.png",
        raw: body,
      },
    });
  });

  it("names an unnamed client by its client_uri's host, else its first redirect URI's host or scheme", () => {
    expect(validateRegistrationRequest({ ...minimal, client_uri: "https://app.example.com/about" })).toMatchObject({ ok: true, metadata: { name: "app.example.com" } });
    expect(validateRegistrationRequest(minimal)).toMatchObject({ ok: true, metadata: { name: "127.0.0.1:3333" } });
    expect(validateRegistrationRequest({ redirect_uris: ["com.example.app:/cb"] })).toMatchObject({ ok: true, metadata: { name: "com.example.app" } });
  });

  it("keeps raw apart from the caller's object", () => {
    const body = { ...minimal, extra: { nested: true } };
    const result = validateRegistrationRequest(body);
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
    expect(validateRegistrationRequest(body)).toMatchObject({ ok: false, error: "invalid_redirect_uri" });
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
    ["an http client_uri", { ...minimal, client_uri: "http://app.example.com" }],
    ["a javascript: logo_uri", { ...minimal, logo_uri: "javascript:alert(1)" }],
    ["a data: logo_uri", { ...minimal, logo_uri: "data:image/png;base64,AAAA" }],
    ["a logo_uri with userinfo", { ...minimal, logo_uri: "https://u@img.example.com/l.png" }],
    ["a non-string scope", { ...minimal, scope: ["mcp:read"] }],
  ])("answers invalid_client_metadata for %s", (_why, body) => {
    expect(validateRegistrationRequest(body)).toMatchObject({ ok: false, error: "invalid_client_metadata" });
  });
});
