import { describe, expect, it } from "vitest";
import { rejectionOf } from "../../test/support/refusals";
import { MAX_ADDRESSES_PER_NAME, hasNameRules, resolveEgressNames, type Lookup } from "./index";

/**
 * Name resolution for egress allow-lists, with a fake resolver (the real one
 * is node:dns, exercised end to end in test/egress/). What is checked: each
 * name is looked up once whatever its ports, every address becomes a /32 or
 * /128 rule on each of its rule's ports, both families are kept, and every
 * failure (error, no address, no answer in time, not an address) fails the
 * whole resolution — never a partial list.
 */
function fake(table: Record<string, string[]>, calls: string[] = []): Lookup {
  return async (name) => {
    calls.push(name);
    const addresses = table[name];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}

describe("resolveEgressNames", () => {
  it("replaces each name rule by its addresses on the rule's port, keeps address rules, lists each name once for /etc/hosts", async () => {
    const calls: string[] = [];
    const out = await resolveEgressNames(["10.0.0.0/8:443", "api.example.test:443", "api.example.test:8443", "db.example.test:5432"], {
      lookup: fake({ "api.example.test": ["203.0.113.7", "2001:DB8::7"], "db.example.test": ["192.0.2.10"] }, calls),
    });
    expect(calls.sort()).toEqual(["api.example.test", "db.example.test"]);
    expect(out.egress).toEqual([
      "10.0.0.0/8:443",
      "192.0.2.10/32:5432",
      "203.0.113.7/32:443",
      "203.0.113.7/32:8443",
      "[2001:db8::7/128]:443",
      "[2001:db8::7/128]:8443",
    ]);
    expect(out.hosts).toEqual([
      { name: "api.example.test", addresses: ["2001:db8::7", "203.0.113.7"] },
      { name: "db.example.test", addresses: ["192.0.2.10"] },
    ]);
    expect(out.names.map((n) => n.rule)).toEqual(["api.example.test:443", "api.example.test:8443", "db.example.test:5432"]);
  });

  it("a list without names needs no lookup", async () => {
    const calls: string[] = [];
    const out = await resolveEgressNames(["10.0.0.0/8:443"], { lookup: fake({}, calls) });
    expect(calls).toEqual([]);
    expect(out).toEqual({ egress: ["10.0.0.0/8:443"], hosts: [], names: [] });
    expect(hasNameRules(["10.0.0.0/8:443"])).toBe(false);
    expect(hasNameRules(["10.0.0.0/8:443", "a.test:1"])).toBe(true);
  });

  it("a name that does not resolve fails the whole list with EGRESS_NAME_UNRESOLVED naming it and the resolver's code", async () => {
    const e = await rejectionOf(resolveEgressNames(["api.example.test:443", "gone.example.test:443"], { lookup: fake({ "api.example.test": ["203.0.113.7"] }) }));
    expect(e.code).toBe("EGRESS_NAME_UNRESOLVED");
    expect(e.message).toContain("gone.example.test");
    expect(e.message).toContain("ENOTFOUND");
    expect(e.details).toMatchObject({ name: "gone.example.test" });
  });

  it("no address, a non-address answer, or no answer in time each fail", async () => {
    expect((await rejectionOf(resolveEgressNames(["a.test:1"], { lookup: fake({ "a.test": [] }) }))).code).toBe("EGRESS_NAME_UNRESOLVED");
    expect((await rejectionOf(resolveEgressNames(["a.test:1"], { lookup: fake({ "a.test": ["fe80::1%eth0"] }) }))).code).toBe("EGRESS_NAME_UNRESOLVED");
    const started = Date.now();
    const slow: Lookup = () => new Promise((resolve) => setTimeout(() => resolve([{ address: "192.0.2.1", family: 4 }]), 2_000));
    const e = await rejectionOf(resolveEgressNames(["slow.test:1"], { lookup: slow, timeoutMs: 100 }));
    expect(e.code).toBe("EGRESS_NAME_UNRESOLVED");
    expect(e.message).toContain("within 100 ms");
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it(`more than ${MAX_ADDRESSES_PER_NAME} addresses for one name is refused, not cut`, async () => {
    const many = Array.from({ length: MAX_ADDRESSES_PER_NAME + 1 }, (_, i) => `192.0.2.${i + 1}`);
    expect((await rejectionOf(resolveEgressNames(["many.test:443"], { lookup: fake({ "many.test": many }) }))).code).toBe("POLICY_REFUSED");
    const enough = many.slice(0, MAX_ADDRESSES_PER_NAME);
    expect((await resolveEgressNames(["many.test:443"], { lookup: fake({ "many.test": enough }) })).egress).toHaveLength(MAX_ADDRESSES_PER_NAME);
  });

  it("duplicate answers (one per socket type from getaddrinfo) count once", async () => {
    const out = await resolveEgressNames(["d.test:53"], { lookup: fake({ "d.test": ["192.0.2.5", "192.0.2.5", "::1", "0:0:0:0:0:0:0:1"] }) });
    expect(out.hosts).toEqual([{ name: "d.test", addresses: ["192.0.2.5", "::1"] }]);
  });
});
