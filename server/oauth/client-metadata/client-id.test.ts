import { describe, expect, it } from "vitest";
import { isClientIdUrl } from "./client-id";

describe("isClientIdUrl", () => {
  it.each([
    "https://client.example.com/oauth/metadata.json",
    "https://client.example.com/client",
    "https://client.example.com:8443/client.json",
    "https://127.0.0.1:4443/client.json",
    "https://[::1]:4443/client.json",
    "https://client.example.com/client.json?v=2",
    "https://client.example.com/@team/client.json",
  ])("accepts %s", (id) => {
    expect(isClientIdUrl(id)).toBe(true);
  });

  it.each([
    ["http", "http://client.example.com/client.json"],
    ["another scheme", "ftp://client.example.com/client.json"],
    ["no path", "https://client.example.com"],
    ["root path", "https://client.example.com/"],
    ["a fragment", "https://client.example.com/client.json#x"],
    ["an empty fragment", "https://client.example.com/client.json#"],
    ["userinfo", "https://user@client.example.com/client.json"],
    ["userinfo with password", "https://user:pass@client.example.com/client.json"],
    ["empty userinfo", "https://@client.example.com/client.json"],
    ["a .. segment", "https://client.example.com/a/../client.json"],
    ["a . segment", "https://client.example.com/./client.json"],
    ["an escaped .. segment", "https://client.example.com/a/%2E%2e/client.json"],
    ["an escaped . segment", "https://client.example.com/a/%2e/client.json"],
    ["a trailing . segment", "https://client.example.com/a/."],
    ["an upper-case scheme", "HTTPS://client.example.com/client.json"],
    ["an upper-case host", "https://Client.example.com/client.json"],
    ["the default port spelled out", "https://client.example.com:443/client.json"],
    ["a backslash", "https://client.example.com\\client.json"],
    ["a space", "https://client.example.com/client .json"],
    ["a tab the parser would drop", "https://client.example.com/cli\tent.json"],
    ["a leading space", " https://client.example.com/client.json"],
    ["non-ASCII", "https://clïent.example.com/client.json"],
    ["a relative URL", "/client.json"],
    ["an issued id", "dyn_abcdef"],
    ["an over-long URL", `https://client.example.com/${"a".repeat(2048)}`],
  ])("refuses %s: %j", (_why, id) => {
    expect(isClientIdUrl(id)).toBe(false);
  });
});
