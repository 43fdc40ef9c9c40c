/**
 * Which resolved addresses a Client ID Metadata Document may be fetched
 * from. The hub fetches a URL an unauthenticated client names, so without
 * this check any client could make the hub probe its own network (cloud
 * metadata at 169.254.169.254, a database on 10.x, the hub's own loopback
 * routes): the classic SSRF.
 *
 * Matching is Node's own `net.BlockList` (kept with Node, and it checks an
 * IPv4-mapped IPv6 address `::ffff:a.b.c.d` against the IPv4 rules itself);
 * what is listed here is data, not CIDR arithmetic. The list denies on
 * doubt: besides the ranges the contract names it refuses documentation,
 * benchmarking and reserved ranges, and every IPv6 prefix that embeds an
 * IPv4 address we would otherwise have to decode (NAT64, 6to4, Teredo,
 * SIIT, IPv4-compatible) — an operator on an IPv6-only network whose
 * clients' documents are reachable only through NAT64 allow-lists them by
 * host name.
 */
import { BlockList, isIP } from "node:net";

const REFUSED_IPV4: readonly [string, number, string][] = [
  ["0.0.0.0", 8, "unspecified (this network)"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "6to4 relay anycast"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  // 240/4 is reserved and holds the limited broadcast 255.255.255.255.
  ["240.0.0.0", 4, "reserved or broadcast"],
];

const REFUSED_IPV6: readonly [string, number, string][] = [
  // ::/96 holds the unspecified ::, loopback ::1 and the deprecated
  // IPv4-compatible ::a.b.c.d form.
  ["::", 96, "unspecified, loopback or IPv4-compatible"],
  ["::ffff:0:0:0", 96, "SIIT IPv4-translated"],
  ["64:ff9b::", 96, "NAT64 (embeds an IPv4 address)"],
  ["64:ff9b:1::", 48, "local-use NAT64"],
  ["100::", 64, "discard-only"],
  ["2001::", 32, "Teredo (embeds an IPv4 address)"],
  ["2001:db8::", 32, "documentation"],
  ["2002::", 16, "6to4 (embeds an IPv4 address)"],
  ["fc00::", 7, "unique local (private)"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local (deprecated)"],
  ["ff00::", 8, "multicast"],
];

interface Range {
  list: BlockList;
  why: string;
}

function ranges(): Range[] {
  const out: Range[] = [];
  for (const [network, prefix, why] of REFUSED_IPV4) {
    const list = new BlockList();
    list.addSubnet(network, prefix, "ipv4");
    out.push({ list, why });
  }
  for (const [network, prefix, why] of REFUSED_IPV6) {
    const list = new BlockList();
    list.addSubnet(network, prefix, "ipv6");
    out.push({ list, why });
  }
  return out;
}

// One BlockList per range so a refusal can say which range it was.
const RANGES = ranges();

/**
 * `{ok: true}` for a public unicast address; otherwise the range it falls in.
 * Anything that is not an IP address at all is refused.
 */
export function classifyAddress(address: string): { ok: true } | { ok: false; reason: string } {
  const family = isIP(address);
  if (family === 0) return { ok: false, reason: `${JSON.stringify(address)} is not an IP address` };
  const type = family === 4 ? "ipv4" : "ipv6";
  for (const range of RANGES) {
    if (range.list.check(address, type)) return { ok: false, reason: `${address} is ${range.why}` };
  }
  return { ok: true };
}
