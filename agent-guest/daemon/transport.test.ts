import { describe, expect, it } from "vitest";
import { hubTransport, parseHubUrl, requireHubTransport } from "./transport";

const local = new Set(["127.0.0.1", "10.20.30.1", "fe80::1"]);
const verdict = (hub: string, insecureHttp = false) => hubTransport(new URL(hub), { insecureHttp, localAddresses: local });

describe("which hub URLs the guest talks to", () => {
  it("https anywhere; plain http only when the traffic stays on this machine's network stack", () => {
    expect(verdict("https://hub.example:8700")).toEqual({ ok: true, warning: null });
    expect(verdict("http://127.0.0.1:8700")).toEqual({ ok: true, warning: null });
    expect(verdict("http://127.9.9.9:8700")).toEqual({ ok: true, warning: null });
    expect(verdict("http://localhost:8700")).toEqual({ ok: true, warning: null });
    expect(verdict("http://[::1]:8700")).toEqual({ ok: true, warning: null });
    // An address of one of this stack's own interfaces (the local guest of a hub listening there).
    expect(verdict("http://10.20.30.1:8700")).toEqual({ ok: true, warning: null });
  });

  it("plain http to another machine, or to a host name, is refused unless --insecure-http, which warns", () => {
    for (const hub of ["http://10.20.30.2:8700", "http://hub.example:8700", "http://[2001:db8::1]:8700", "http://localhost.evil.example"]) {
      const refused = verdict(hub);
      expect(refused.ok, hub).toBe(false);
      expect(!refused.ok && refused.reason).toMatch(/unencrypted .*use https:\/\/, or pass --insecure-http/);
      const allowed = verdict(hub, true);
      expect(allowed.ok && allowed.warning).toMatch(/allowed by --insecure-http/);
    }
  });

  it("a malformed or non-http URL is a usage mistake; a refused transport is POLICY_REFUSED", () => {
    expect(() => parseHubUrl("not a url")).toThrow(/is not a URL/);
    expect(() => parseHubUrl("ftp://hub")).toThrow(/must be an http\(s\) URL/);
    expect(() => requireHubTransport("http://192.0.2.10:8700")).toThrow(expect.objectContaining({ code: "POLICY_REFUSED" }));
  });
});
