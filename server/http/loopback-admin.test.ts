import { describe, expect, it } from "vitest";
import { loopbackIpPageRedirect } from "./loopback-admin";

describe("loopbackIpPageRedirect: admin pages on a loopback IP go to localhost", () => {
  it.each([
    ["127.0.0.1:8700", "/approvals?x=1", "http://localhost:8700/approvals?x=1"],
    ["127.0.0.1", "/", "http://localhost/"],
    ["127.1.2.3:9000", "/sign-in?next=%2F", "http://localhost:9000/sign-in?next=%2F"],
    ["[::1]:8700", "/oauth/authorize?client_id=a", "http://localhost:8700/oauth/authorize?client_id=a"],
    ["127.0.0.1:8700", "//evil.example/x", "http://localhost:8700/"],
  ])("%s %s → %s", (host, path, target) => {
    expect(loopbackIpPageRedirect(host, path, false)).toBe(target);
  });

  it.each([
    ["localhost:8700"],
    ["hub.example.org"],
    ["10.0.0.5:8700"],
    ["[fe80::1]:8700"],
    ["0.0.0.0:8700"],
  ])("serves %s as it is", (host) => {
    expect(loopbackIpPageRedirect(host, "/", false)).toBeNull();
  });

  it("serves every host as it is when the operator set a public URL, and a request with no Host", () => {
    expect(loopbackIpPageRedirect("127.0.0.1:8700", "/", true)).toBeNull();
    expect(loopbackIpPageRedirect(null, "/", false)).toBeNull();
  });
});
