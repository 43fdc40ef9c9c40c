import { describe, expect, it } from "vitest";
import { parseCidrList, resolveClientAddress, trustedProxyMatcher } from "./client-address";

const proxies = parseCidrList("10.0.0.0/8, 192.0.2.7, fd00::/8");
if (!proxies.ok) throw new Error("fixture CIDRs refused");
const trusted = trustedProxyMatcher(proxies.cidrs);

describe("client address behind trusted proxies", () => {
  it("without trusted proxies, X-Forwarded-For is never read", () => {
    const none = trustedProxyMatcher([]);
    expect(resolveClientAddress("10.1.2.3", "203.0.113.9", none)).toBe("10.1.2.3");
    expect(resolveClientAddress("::ffff:127.0.0.1", "203.0.113.9", none)).toBe("127.0.0.1");
  });

  it("a spoofed X-Forwarded-For from an untrusted peer is ignored", () => {
    expect(resolveClientAddress("198.51.100.20", "10.0.0.1", trusted)).toBe("198.51.100.20");
    expect(resolveClientAddress("198.51.100.20", "203.0.113.9, 10.0.0.2", trusted)).toBe("198.51.100.20");
  });

  it("from a trusted proxy, the rightmost untrusted address is the client; what the client prepended is not reached", () => {
    expect(resolveClientAddress("10.0.0.5", "203.0.113.9", trusted)).toBe("203.0.113.9");
    // The client sent "X-Forwarded-For: 1.1.1.1"; the proxy appended the real address.
    expect(resolveClientAddress("10.0.0.5", "1.1.1.1, 203.0.113.9", trusted)).toBe("203.0.113.9");
    // Two trusted hops (an outer proxy 192.0.2.7 in front of the inner one).
    expect(resolveClientAddress("10.0.0.5", ["1.1.1.1", "203.0.113.9, 192.0.2.7"], trusted)).toBe("203.0.113.9");
    expect(resolveClientAddress("::ffff:10.0.0.5", "::ffff:203.0.113.9", trusted)).toBe("203.0.113.9");
    expect(resolveClientAddress("fd00::1", "2001:db8::5", trusted)).toBe("2001:db8::5");
  });

  it("malformed values stop at the trusted hop that passed them on, never at an address the sender chose", () => {
    for (const bad of ["", " ", "unknown", "203.0.113.9:4444", "[2001:db8::1]", "203.0.113.9 1.1.1.1", "999.1.1.1", "1.1.1.1\u0000", "_hidden", "203.0.113.9/32"]) {
      expect(resolveClientAddress("10.0.0.5", `1.1.1.1, ${bad}`, trusted), JSON.stringify(bad)).toBe("10.0.0.5");
    }
    expect(resolveClientAddress("10.0.0.5", "1.1.1.1, junk, 192.0.2.7", trusted)).toBe("192.0.2.7");
    // Only trusted hops: the leftmost of them.
    expect(resolveClientAddress("10.0.0.5", "10.0.0.9, 192.0.2.7", trusted)).toBe("10.0.0.9");
    // A long chain of trusted addresses is walked at most 16 hops.
    expect(resolveClientAddress("10.0.0.5", [...Array(40).fill("10.0.0.1"), "1.1.1.1"].reverse().join(","), trusted)).toBe("10.0.0.1");
  });

  it("the CIDR list refuses what is not an address or a prefix, naming it", () => {
    expect(parseCidrList("10.0.0.0/8,,  ")).toMatchObject({ ok: true, cidrs: [{ address: "10.0.0.0", prefix: 8, family: "ipv4" }] });
    expect(parseCidrList("10.0.0.0/33")).toEqual({ ok: false, bad: "10.0.0.0/33" });
    expect(parseCidrList("fd00::/129")).toEqual({ ok: false, bad: "fd00::/129" });
    expect(parseCidrList("proxy.example.org")).toEqual({ ok: false, bad: "proxy.example.org" });
    expect(parseCidrList("10.0.0.0/-1")).toEqual({ ok: false, bad: "10.0.0.0/-1" });
    expect(parseCidrList("10.0.0.0/8/8")).toEqual({ ok: false, bad: "10.0.0.0/8/8" });
  });
});
