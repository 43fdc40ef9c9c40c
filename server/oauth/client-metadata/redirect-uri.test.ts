import { describe, expect, it } from "vitest";
import { checkRedirectUriHost, redirectUriMatches, validateRedirectUri } from "./redirect-uri";

describe("validateRedirectUri", () => {
  it.each([
    "https://agent.example.com/callback",
    "https://agent.example.com:8443/cb?x=1",
    "http://127.0.0.1/callback",
    "http://127.0.0.1:51234/callback",
    "http://[::1]:8080/cb",
    "http://localhost:3000/oauth/callback",
    "com.example.app:/oauth2redirect",
    "com.example.app://callback",
  ])("accepts %s", (uri) => {
    expect(validateRedirectUri(uri)).toEqual({ ok: true });
  });

  it.each([
    ["http on a non-loopback host", "http://agent.example.com/cb", "loopback host"],
    ["http on a look-alike of localhost", "http://localhost.evil.com/cb", "loopback host"],
    ["http on another loopback address", "http://127.0.0.2/cb", "loopback host"],
    ["http on a shortened loopback address", "http://127.1/cb", "loopback host"],
    ["http on a hexadecimal loopback address", "http://0x7f000001/cb", "loopback host"],
    ["http on an upper-case LOCALHOST", "http://LOCALHOST/cb", "loopback host"],
    ["http on a long-form ::1", "http://[0:0:0:0:0:0:0:1]/cb", "loopback host"],
    ["http on localhost with a trailing dot", "http://localhost./cb", "loopback host"],
    ["an upper-case HTTP scheme", "HTTP://127.0.0.1/cb", "loopback host"],
    ["http loopback on port 0", "http://127.0.0.1:0/cb", "loopback host"],
    ["a fragment", "https://agent.example.com/cb#x", "fragment"],
    ["an empty fragment", "https://agent.example.com/cb#", "fragment"],
    ["userinfo", "https://good.example.com@evil.example.com/cb", "userinfo"],
    ["empty userinfo", "https://@evil.example.com/cb", "userinfo"],
    ["userinfo on loopback", "http://user@127.0.0.1/cb", "userinfo"],
    ["a scheme without a dot", "myapp:/cb", "scheme"],
    ["javascript:", "javascript:alert(1)", "scheme"],
    ["data:", "data:text/html,hi", "scheme"],
    ["file:", "file:///etc/passwd", "scheme"],
    ["a relative URI", "/callback", "absolute"],
    ["a backslash", "https://good.example.com\\@evil.example.com/cb", "not allowed"],
    ["a space", "https://agent.example.com/c b", "whitespace"],
    ["a newline", "https://agent.example.com/cb\n", "whitespace"],
    ["non-ASCII", "https://agént.example.com/cb", "non-ASCII"],
    ["an empty string", "", "empty"],
    ["over 2048 characters", `https://agent.example.com/${"a".repeat(2030)}`, "longer than 2048"],
  ])("refuses %s: %j", (_why, uri, reason) => {
    const result = validateRedirectUri(uri);
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.reason).toContain(reason);
  });
});

describe("redirectUriMatches", () => {
  const registered = ["https://agent.example.com/callback", "http://127.0.0.1/cb", "http://[::1]:9000/cb", "http://localhost/cb?mode=native", "com.example.app:/oauth2redirect"];

  it.each(registered)("matches %s exactly", (uri) => {
    expect(redirectUriMatches(registered, uri)).toBe(true);
  });

  it.each(["http://127.0.0.1:51234/cb", "http://127.0.0.1:1/cb", "http://[::1]/cb", "http://[::1]:65535/cb", "http://localhost:8080/cb?mode=native"])(
    "lets an http loopback redirect differ in port only: %s",
    (uri) => {
      expect(redirectUriMatches(registered, uri)).toBe(true);
    },
  );

  it.each([
    ["a prefix", "https://agent.example.com/call"],
    ["a suffix", "https://agent.example.com/callback/evil"],
    ["an appended query", "https://agent.example.com/callback?x=1"],
    ["a trailing slash", "https://agent.example.com/callback/"],
    ["a different case in the path", "https://agent.example.com/Callback"],
    ["a different case in the host", "https://Agent.example.com/callback"],
    ["a different case in the scheme", "HTTPS://agent.example.com/callback"],
    ["a port on a non-loopback host", "https://agent.example.com:443/callback"],
    ["another port on a non-loopback host", "https://agent.example.com:8443/callback"],
    ["a look-alike host", "https://agent.example.com.evil.com/callback"],
    ["userinfo", "https://agent.example.com@evil.com/callback"],
    ["userinfo before the host", "https://evil.com@agent.example.com/callback"],
    ["a fragment", "https://agent.example.com/callback#x"],
    ["a dot segment", "https://agent.example.com/x/../callback"],
    ["an escaped character", "https://agent.example.com/%63allback"],
    ["https on a loopback registered as http", "https://127.0.0.1/cb"],
    ["another loopback host than registered", "http://localhost:5000/cb"],
    ["localhost.evil.com", "http://localhost.evil.com/cb?mode=native"],
    ["a loopback path differing", "http://127.0.0.1:5000/cb/"],
    ["a loopback query differing", "http://localhost:5000/cb?mode=other"],
    ["a loopback with userinfo", "http://user@127.0.0.1:5000/cb"],
    ["port 0 on loopback", "http://127.0.0.1:0/cb"],
    ["an out-of-range loopback port", "http://127.0.0.1:70000/cb"],
    ["a loopback fragment", "http://127.0.0.1:5000/cb#x"],
    ["a private-use scheme with another path", "com.example.app:/oauth2redirect/x"],
    ["a private-use scheme with a port", "com.example.app://host:1/oauth2redirect"],
    ["an empty string", ""],
  ])("refuses %s: %j", (_why, uri) => {
    expect(redirectUriMatches(registered, uri)).toBe(false);
  });

  it("refuses every loopback port when the registration is not loopback http", () => {
    expect(redirectUriMatches(["https://127.0.0.1/cb"], "https://127.0.0.1:8443/cb")).toBe(false);
  });

  it("matches nothing against an empty registration", () => {
    expect(redirectUriMatches([], "http://127.0.0.1/cb")).toBe(false);
  });
});

describe("checkRedirectUriHost", () => {
  it.each([
    ["http://localhost:9999/callback", "localhost"],
    ["http://localhost/callback", "localhost"],
    ["http://localhost:8700/oauth/authorize", "localhost"],
    ["https://localhost:8443/cb", "localhost"],
    ["https://LOCALHOST/cb", "localhost"],
    ["https://localhost./cb", "localhost"],
    ["https://localhost../cb", "localhost"],
    ["https://localhost/cb", "LOCALHOST."],
    ["https://local%68ost/cb", "localhost"],
    ["https://hub.example.org/cb", "hub.example.org"],
    ["https://hub.example.org./cb", "hub.example.org"],
    ["https://Hub.Example.Org:9443/cb", "hub.example.org"],
    ["http://127.0.0.1:50123/cb", "127.0.0.1"],
    ["https://127.1/cb", "127.0.0.1"],
    ["http://[::1]:50123/cb", "[::1]"],
    ["http://[::1]:50123/cb", "::1"],
    ["com.example.app://localhost/cb", "localhost"],
  ])("refuses %s while the admin pages are on %s", (uri, adminHost) => {
    const result = checkRedirectUriHost(uri, adminHost);
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.reason).toContain("cookie");
  });

  it.each([
    ["http://127.0.0.1:50123/cb", "localhost"],
    ["http://[::1]:50123/cb", "localhost"],
    ["http://localhost:50123/cb", "hub.example.org"],
    ["https://hub.example.org.evil.example/cb", "hub.example.org"],
    ["https://sub.hub.example.org/cb", "hub.example.org"],
    ["https://localhost.evil.example/cb", "localhost"],
    ["com.example.app:/oauth2redirect", "localhost"],
  ])("accepts %s while the admin pages are on %s", (uri, adminHost) => {
    expect(checkRedirectUriHost(uri, adminHost)).toEqual({ ok: true });
  });

  it("suggests the loopback addresses that are not the admin's own host", () => {
    const onLocalhost = checkRedirectUriHost("http://localhost:1/cb", "localhost");
    expect(onLocalhost.ok ? "" : onLocalhost.reason).toContain("http://127.0.0.1:PORT or http://[::1]:PORT");
    const onLoopbackIp = checkRedirectUriHost("http://127.0.0.1:1/cb", "127.0.0.1");
    expect(onLoopbackIp.ok ? "" : onLoopbackIp.reason).toContain("listen on http://[::1]:PORT instead");
  });

  it("refuses what it cannot parse", () => {
    expect(checkRedirectUriHost("/relative", "localhost").ok).toBe(false);
  });
});
