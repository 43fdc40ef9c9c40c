// The egress policy's shape, before anything runs: canonical rules and host
// addresses, RFC 1123 lower-case names, bounded sizes — and the lease pool's
// constants in C, recomputed from their documented derivation.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SandboxPolicy, canonicalHostAddress } from "../index";

const here = dirname(fileURLToPath(import.meta.url));
const base = { argv: ["/bin/true"], workdir: "/tmp", memory_bytes: 64 << 20, cpus: 1, pids_max: 8, timeout_ms: 1000 };
const withNet = (network: unknown) => SandboxPolicy.safeParse({ ...base, network });
const hostsOf = (hosts: unknown) => withNet({ egress: ["192.0.2.0/24:443"], hosts });

describe("egress policy validation", () => {
  it("accepts canonical rules and a hosts list; refuses non-canonical rules", () => {
    expect(withNet({ egress: ["10.0.0.0/8:443", "[2001:db8::/32]:53"], hosts: [{ name: "api.example.test", addresses: ["10.1.2.3", "2001:db8::1"] }] }).success).toBe(true);
    // a name rule is the guest's to resolve before launch: the launcher takes addresses only
    for (const bad of ["10.0.0.1/8:443", "010.0.0.0/8:443", "[2001:DB8::/32]:53", "10.0.0.0/8:0", "10.0.0.0/8", "example.test:443", "api.example.test:443"])
      expect(withNet({ egress: [bad] }).success, bad).toBe(false);
    expect(withNet({ egress: [] }).success).toBe(false);
    expect(withNet({ egress: ["10.0.0.0/8:443"], extra: 1 }).success).toBe(false);
  });

  it("host addresses must be single and in canonical text (RFC 5952, hex groups only)", () => {
    for (const good of ["192.0.2.1", "2001:db8::1", "::1", "fe80::1", "::ffff:c000:201"]) expect(canonicalHostAddress(good), good).toBe(good);
    for (const bad of ["192.0.2.01", "192.0.2.1/32", "2001:DB8::1", "2001:db8:0:0:0:0:0:1", "::ffff:192.0.2.1", "fe80::1%eth0", " 192.0.2.1", ""])
      expect(canonicalHostAddress(bad), bad).toBeUndefined();
  });

  it("host names are RFC 1123, lower case, each once; at most 32 addresses each and 256 pairs", () => {
    expect(hostsOf([{ name: "a-1.b.test", addresses: ["192.0.2.1"] }]).success).toBe(true);
    for (const name of ["Upper.test", "-a.test", "a-.test", "a..test", "a.test.", "a_b.test", "a b", "a\nb", `${"a".repeat(64)}.test`, "é.test", ""])
      expect(hostsOf([{ name, addresses: ["192.0.2.1"] }]).success, JSON.stringify(name)).toBe(false);
    expect(hostsOf([{ name: "a.test", addresses: ["192.0.2.1"] }, { name: "a.test", addresses: ["192.0.2.2"] }]).success).toBe(false);
    expect(hostsOf([{ name: "a.test", addresses: [] }]).success).toBe(false);
    const many = Array.from({ length: 33 }, (_, i) => `192.0.2.${i + 1}`);
    expect(hostsOf([{ name: "a.test", addresses: many.slice(0, 32) }]).success).toBe(true);
    expect(hostsOf([{ name: "a.test", addresses: many }]).success).toBe(false);
    const pairs = Array.from({ length: 9 }, (_, i) => ({ name: `h${i}.test`, addresses: many.slice(0, 32) }));
    expect(hostsOf(pairs).success).toBe(false); // 288 pairs
  });
});

describe("lease address pool", () => {
  it("the ULA /48 in net.h is fd + the first 40 bits of SHA-256(\"leasehold egress pool v1\"); the IPv4 pool is 100.127.0.0/16", () => {
    const h = createHash("sha256").update("leasehold egress pool v1").digest();
    const want = [0xfd, ...h.subarray(0, 5)].map((b) => `0x${b.toString(16).padStart(2, "0")}`).join(", ");
    const header = readFileSync(join(here, "..", "src", "net.h"), "utf8");
    expect(header).toContain(`#define LH_EGRESS_POOL6 {${want}}`);
    expect(header).toMatch(/#define LH_EGRESS_POOL4 0x647f0000u/); // 100.127.0.0
    expect(header).toMatch(/#define LH_EGRESS_SLOTS 16384u/); // /16 in /30s
  });
});
