import { describe, expect, it } from "vitest";
import { allowedHostnames, hostAllowed, hostnameOf } from "./host-allow";

describe("Host allow-list", () => {
  const allowed = allowedHostnames("https://hub.example.org", "0.0.0.0");

  it("allows the public URL's host and loopback, with or without a port", () => {
    for (const host of ["hub.example.org", "HUB.example.org:443", "hub.example.org.", "127.0.0.1:8700", "localhost:8700", "[::1]:8700"]) expect(hostAllowed(host, allowed), host).toBe(true);
  });

  it("refuses a rebinding name, a missing or malformed Host, and spellings that only look like loopback", () => {
    for (const host of [undefined, "", "attacker.example", "hub.example.org.attacker.example", "user@127.0.0.1", "127.0.0.1/x", "127.1", "[::ffff:127.0.0.1]", "0.0.0.0:8700"]) {
      expect(hostAllowed(host, allowed), String(host)).toBe(false);
    }
  });

  it("adds a specific listen address, not a wildcard", () => {
    expect(allowedHostnames("http://10.0.0.5:8700", "10.0.0.5").has("10.0.0.5")).toBe(true);
    expect(allowedHostnames("http://127.0.0.1:8700", "::").has("::")).toBe(false);
    expect(hostnameOf("[::1]:8700")).toBe("::1");
  });
});
