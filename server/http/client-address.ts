import net from "node:net";

/**
 * The client's address behind trusted reverse proxies (docs/deploy.md#proxy).
 *
 * Off unless the operator lists the proxies (`LEASEHOLD_TRUSTED_PROXIES`,
 * CIDRs): `X-Forwarded-For` is written by whoever sends the request, so it
 * is read only when the TCP peer is one of the listed proxies, and then
 * walked from the right (the entries nearest us, appended by proxies we
 * trust) to the first address that is not a trusted proxy: the client as
 * the outermost trusted proxy saw it. Anything a client put further left is
 * never reached. An entry that is not a bare IP address stops the walk at
 * the trusted hop that passed it on: a malformed value can make a request
 * count as its proxy's, never as an address of the sender's choosing.
 */
export interface Cidr {
  /** The network address as written (normalised). */
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

export type CidrListResult = { ok: true; cidrs: Cidr[] } | { ok: false; bad: string };

/** IPv4-mapped IPv6 (`::ffff:192.0.2.1`, how a dual-stack socket reports IPv4) as plain IPv4. */
export function plainAddress(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith("::ffff:") && net.isIPv4(lower.slice(7)) ? lower.slice(7) : lower;
}

/** Parses `10.0.0.0/8, 192.0.2.7, fd00::/8`; a bare address is a /32 or /128. */
export function parseCidrList(text: string): CidrListResult {
  const cidrs: Cidr[] = [];
  for (const item of text.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
    const slash = item.indexOf("/");
    const address = plainAddress(slash === -1 ? item : item.slice(0, slash));
    const version = net.isIP(address);
    if (version === 0) return { ok: false, bad: item };
    const max = version === 4 ? 32 : 128;
    const prefixText = slash === -1 ? String(max) : item.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) return { ok: false, bad: item };
    cidrs.push({ address, prefix: Number(prefixText), family: version === 4 ? "ipv4" : "ipv6" });
  }
  return { ok: true, cidrs };
}

/** A matcher for a CIDR list (node's BlockList does the prefix arithmetic). */
export function trustedProxyMatcher(cidrs: readonly Cidr[]): (address: string) => boolean {
  if (cidrs.length === 0) return () => false;
  const list = new net.BlockList();
  for (const c of cidrs) list.addSubnet(c.address, c.prefix, c.family);
  return (address) => {
    const plain = plainAddress(address);
    const version = net.isIP(plain);
    return version !== 0 && list.check(plain, version === 4 ? "ipv4" : "ipv6");
  };
}

/** Entries past this many from the right are never read (a chain of proxies is short). */
const MAX_HOPS = 16;

/**
 * The client address for a request from TCP peer `peer` carrying
 * `forwardedFor` (the X-Forwarded-For value, repeated headers joined with
 * commas as Node joins them).
 */
export function resolveClientAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, isTrusted: (address: string) => boolean): string {
  if (peer === undefined || peer === "") return "";
  let current = plainAddress(peer);
  if (!isTrusted(current) || forwardedFor === undefined) return current;
  const entries = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor).split(",");
  for (let i = entries.length - 1, hops = 0; i >= 0 && hops < MAX_HOPS; i--, hops++) {
    const entry = plainAddress((entries[i] ?? "").trim());
    if (net.isIP(entry) === 0) return current;
    if (!isTrusted(entry)) return entry;
    current = entry;
  }
  return current;
}
