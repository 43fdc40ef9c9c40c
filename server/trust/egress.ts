/**
 * Egress allow-list rules: `CIDR:port`, e.g. "10.0.0.0/8:443" or
 * "[2001:db8::/32]:443". The kernel (tier A/B connect/sendmsg hooks) enforces
 * the compiled list; this file only parses, compares and intersects rules so
 * the hub can refuse a request that would widen what the capability allows.
 *
 * One rule has one spelling: the network address must have its host bits
 * clear, IPv6 is written in RFC 5952 form inside brackets, and the port is a
 * single decimal number 1–65535. Anything else is refused rather than
 * normalised, because two spellings of one rule make allow-list diffs lie.
 */

export type AddressFamily = 4 | 6;

export interface EgressRule {
  readonly family: AddressFamily;
  /** The network address as an unsigned integer of 32 or 128 bits. */
  readonly network: bigint;
  readonly prefix: number;
  readonly port: number;
  /** Canonical text, the only spelling that appears in manifests and compiled policies. */
  readonly text: string;
}

const MAX_RULE_LENGTH = 64;

function parsePort(text: string): number | undefined {
  if (!/^[1-9][0-9]{0,4}$/.test(text)) return undefined;
  const port = Number(text);
  return port <= 65_535 ? port : undefined;
}

function parsePrefix(text: string, max: number): number | undefined {
  if (!/^(0|[1-9][0-9]{0,2})$/.test(text)) return undefined;
  const prefix = Number(text);
  return prefix <= max ? prefix : undefined;
}

function parseIpv4(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = (value << 8n) | BigInt(octet);
  }
  return value;
}

function parseIpv6Groups(text: string): number[] | undefined {
  if (text === "") return [];
  const groups: number[] = [];
  for (const part of text.split(":")) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(part)) return undefined;
    groups.push(parseInt(part, 16));
  }
  return groups;
}

/** Hex groups only; embedded dotted IPv4 and zone ids are refused. */
function parseIpv6(text: string): bigint | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const head = parseIpv6Groups(halves[0] ?? "");
  const tail = halves.length === 2 ? parseIpv6Groups(halves[1] ?? "") : [];
  if (head === undefined || tail === undefined) return undefined;
  let groups: number[];
  if (halves.length === 2) {
    const missing = 8 - head.length - tail.length;
    if (missing < 1) return undefined;
    groups = [...head, ...new Array<number>(missing).fill(0), ...tail];
  } else {
    groups = head;
  }
  if (groups.length !== 8) return undefined;
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(group), 0n);
}

function formatIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join(".");
}

/** RFC 5952: lower-case, no leading zeros, the longest run (≥ 2) of zero groups as "::", first on ties. */
function formatIpv6(value: bigint): string {
  const groups: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn));
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8; ) {
    if (groups[start] !== 0) {
      start += 1;
      continue;
    }
    let end = start;
    while (end < 8 && groups[end] === 0) end += 1;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}

function bitsOf(family: AddressFamily): bigint {
  return family === 4 ? 32n : 128n;
}

function hostBitsClear(family: AddressFamily, network: bigint, prefix: number): boolean {
  const hostBits = bitsOf(family) - BigInt(prefix);
  return hostBits === 0n || (network & ((1n << hostBits) - 1n)) === 0n;
}

function render(family: AddressFamily, network: bigint, prefix: number, port: number): string {
  return family === 4
    ? `${formatIpv4(network)}/${prefix}:${port}`
    : `[${formatIpv6(network)}/${prefix}]:${port}`;
}

/**
 * Parses one rule. Returns `undefined` for malformed text, host bits set
 * ("10.0.0.1/8:443"), or any spelling other than the canonical one.
 */
export function parseEgressRule(text: string): EgressRule | undefined {
  if (text.length === 0 || text.length > MAX_RULE_LENGTH) return undefined;
  let family: AddressFamily;
  let address: string;
  let prefixText: string;
  let portText: string;
  const v6 = /^\[([0-9a-fA-F:]+)\/([0-9]+)\]:([0-9]+)$/.exec(text);
  const v4 = /^([0-9.]+)\/([0-9]+):([0-9]+)$/.exec(text);
  if (v6 !== null) {
    family = 6;
    [, address = "", prefixText = "", portText = ""] = v6;
  } else if (v4 !== null) {
    family = 4;
    [, address = "", prefixText = "", portText = ""] = v4;
  } else {
    return undefined;
  }
  const network = family === 4 ? parseIpv4(address) : parseIpv6(address);
  const prefix = parsePrefix(prefixText, family === 4 ? 32 : 128);
  const port = parsePort(portText);
  if (network === undefined || prefix === undefined || port === undefined) return undefined;
  if (!hostBitsClear(family, network, prefix)) return undefined;
  const canonical = render(family, network, prefix, port);
  if (canonical !== text) return undefined;
  return { family, network, prefix, port, text: canonical };
}

/** True when every destination `inner` allows is also allowed by `outer`. */
export function egressRuleWithin(inner: EgressRule, outer: EgressRule): boolean {
  if (inner.family !== outer.family || inner.port !== outer.port || inner.prefix < outer.prefix) return false;
  const shift = bitsOf(outer.family) - BigInt(outer.prefix);
  return inner.network >> shift === outer.network >> shift;
}

/** True when `rule` is inside at least one rule of `allowed`. */
export function egressRuleAllowedBy(rule: EgressRule, allowed: readonly EgressRule[]): boolean {
  return allowed.some((outer) => egressRuleWithin(rule, outer));
}

function compareRules(a: EgressRule, b: EgressRule): number {
  if (a.family !== b.family) return a.family - b.family;
  if (a.network !== b.network) return a.network < b.network ? -1 : 1;
  if (a.prefix !== b.prefix) return a.prefix - b.prefix;
  return a.port - b.port;
}

/** Sorted, de-duplicated, with rules covered by another rule in the set removed. */
export function normaliseEgressRules(rules: readonly EgressRule[]): EgressRule[] {
  const sorted = [...rules].sort(compareRules);
  return sorted.filter(
    (rule, index) =>
      !sorted.some((other, otherIndex) => otherIndex !== index && egressRuleWithin(rule, other) &&
        // of two identical rules keep the first
        (rule.text !== other.text || otherIndex < index)),
  );
}

/**
 * The exact set intersection of two allow-lists. Two CIDR blocks are either
 * disjoint or nested, so the intersection of a pair with the same port is the
 * narrower block, or nothing.
 */
export function intersectEgressRules(a: readonly EgressRule[], b: readonly EgressRule[]): EgressRule[] {
  const result: EgressRule[] = [];
  for (const left of a) {
    for (const right of b) {
      if (egressRuleWithin(left, right)) result.push(left);
      else if (egressRuleWithin(right, left)) result.push(right);
    }
  }
  return normaliseEgressRules(result);
}
