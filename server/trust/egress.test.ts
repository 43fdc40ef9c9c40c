import { describe, expect, it } from "vitest";

import { egressRuleWithin, intersectEgressRules, normaliseEgressRules, parseEgressRule, type EgressRule } from "./egress";

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
