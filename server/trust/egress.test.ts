import { describe, expect, it } from "vitest";

import { canonicalAddress, egressRuleWithin, hostEgressRule, intersectEgressRules, isCanonicalHostName, normaliseEgressRules, parseEgressRule, type EgressRule } from "./egress";

function rule(text: string): EgressRule {
  const parsed = parseEgressRule(text);
  if (parsed === undefined) throw new Error(`test rule ${text} did not parse`);
  return parsed;
}

describe("egress rules", () => {
  it.each(["10.0.0.0/8:443", "0.0.0.0/0:53", "192.168.1.7/32:22", "[2001:db8::/32]:443", "[::/0]:443", "[fe80::1/128]:8080", "[2001:db8:0:1::/64]:1", "[1:0:0:1::/64]:9"])(
    "parses the canonical rule %s",
    (text) => {
      expect(parseEgressRule(text)?.text).toBe(text);
    },
  );

  it.each([
    "10.0.0.1/8:443",
    "10.0.0.0/8",
    "10.0.0.0:443",
    "10.0.0.0/8:65536",
    "10.0.0.0/8:0443",
    "010.0.0.0/8:443",
    "256.0.0.0/8:443",
    "10.0.0/8:443",
    "[2001:DB8::/32]:443",
    "[2001:0db8::/32]:443",
    "[2001:db8::1/32]:443",
    "[::ffff:10.0.0.0/104]:443",
    "2001:db8::/32:443",
    "[1:2:3:4:5:6:7:8:9/128]:1",
    "[1::2::3/128]:1",
    "",
  ])("refuses %j", (text) => {
    expect(parseEgressRule(text)).toBeUndefined();
  });

  it("decides containment by family, port and prefix", () => {
    expect(egressRuleWithin(rule("10.1.0.0/16:443"), rule("10.0.0.0/8:443"))).toBe(true);
    expect(egressRuleWithin(rule("10.0.0.0/8:443"), rule("10.1.0.0/16:443"))).toBe(false);
    expect(egressRuleWithin(rule("10.1.0.0/16:80"), rule("10.0.0.0/8:443"))).toBe(false);
    expect(egressRuleWithin(rule("11.0.0.0/16:443"), rule("10.0.0.0/8:443"))).toBe(false);
    expect(egressRuleWithin(rule("[2001:db8:1::/48]:443"), rule("[2001:db8::/32]:443"))).toBe(true);
    expect(egressRuleWithin(rule("[2001:db9::/32]:443"), rule("[2001:db8::/32]:443"))).toBe(false);
  });

  it("intersects allow-lists exactly and normalises the result", () => {
    const a = [rule("10.0.0.0/8:443"), rule("192.168.0.0/16:443")];
    const b = [rule("10.2.0.0/16:443"), rule("172.16.0.0/12:443"), rule("192.168.0.0/16:80"), rule("0.0.0.0/0:443")];
    expect(intersectEgressRules(a, b).map((r) => r.text)).toEqual(["10.0.0.0/8:443", "192.168.0.0/16:443"]);
    expect(normaliseEgressRules([rule("10.2.0.0/16:443"), rule("10.0.0.0/8:443"), rule("10.0.0.0/8:443")]).map((r) => r.text)).toEqual(["10.0.0.0/8:443"]);
  });
});

describe("egress name rules (name:port)", () => {
  it.each(["api.example.test:443", "localhost:80", "a.b-c.d9:1", "x1.example:65535", `${"a".repeat(63)}.test:443`, "123.example.test:443"])("parses the canonical name rule %s", (text) => {
    const parsed = parseEgressRule(text);
    expect(parsed?.text).toBe(text);
    expect(parsed?.kind).toBe("name");
  });

  it.each([
    "API.example.test:443",
    "api.example.test.:443",
    "api..example.test:443",
    "-api.example.test:443",
    "api-.example.test:443",
    "api_x.example.test:443",
    "api.example.test",
    "api.example.test:0",
    "api.example.test:080",
    "api.example.test:65536",
    "10.0.0.1:443",
    "1.2.3:443",
    `${"a".repeat(64)}.test:443`,
    `${Array.from({ length: 64 }, () => "abc").join(".")}:443`,
    "api.example.test/32:443",
  ])("refuses %j", (text) => {
    expect(parseEgressRule(text)).toBeUndefined();
  });

  it("a name is within only the same name and port; names and addresses never cover each other", () => {
    expect(egressRuleWithin(rule("api.example.test:443"), rule("api.example.test:443"))).toBe(true);
    expect(egressRuleWithin(rule("api.example.test:443"), rule("api.example.test:80"))).toBe(false);
    expect(egressRuleWithin(rule("api.example.test:443"), rule("example.test:443"))).toBe(false);
    expect(egressRuleWithin(rule("api.example.test:443"), rule("0.0.0.0/0:443"))).toBe(false);
    expect(egressRuleWithin(rule("10.0.0.1/32:443"), rule("api.example.test:443"))).toBe(false);
  });

  it("intersects and normalises mixed lists: names kept only when both sides carry them, addresses before names, sorted", () => {
    const a = [rule("api.example.test:443"), rule("b.example.test:443"), rule("10.0.0.0/8:443")];
    const b = [rule("b.example.test:443"), rule("api.example.test:80"), rule("0.0.0.0/0:443"), rule("c.example.test:443")];
    expect(intersectEgressRules(a, b).map((r) => r.text)).toEqual(["10.0.0.0/8:443", "b.example.test:443"]);
    expect(normaliseEgressRules([rule("z.test:1"), rule("a.test:2"), rule("a.test:1"), rule("a.test:1"), rule("[::/0]:1"), rule("10.0.0.0/8:1")]).map((r) => r.text)).toEqual([
      "10.0.0.0/8:1",
      "[::/0]:1",
      "a.test:1",
      "a.test:2",
      "z.test:1",
    ]);
  });

  it("hostEgressRule turns one resolved address into a /32 or /128 rule; canonicalAddress spells it as the kernel's evidence does", () => {
    expect(hostEgressRule("10.1.2.3", 443)?.text).toBe("10.1.2.3/32:443");
    expect(hostEgressRule("2001:DB8:0:0:0:0:0:1", 8443)?.text).toBe("[2001:db8::1/128]:8443");
    expect(hostEgressRule("::1", 80)?.text).toBe("[::1/128]:80");
    expect(hostEgressRule("not-an-address", 80)).toBeUndefined();
    expect(hostEgressRule("fe80::1%eth0", 80)).toBeUndefined();
    expect(canonicalAddress("2001:0db8::0001")).toBe("2001:db8::1");
    expect(canonicalAddress("1.2.3")).toBeUndefined();
    expect(isCanonicalHostName("Example.test")).toBe(false);
  });
});
