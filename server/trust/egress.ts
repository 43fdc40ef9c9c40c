/**
 * Egress allow-list rules, one parser for hub and guest:
 *
 *  - address rules `CIDR:port`, e.g. "10.0.0.0/8:443" or "[2001:db8::/32]:443";
 *  - name rules `name:port`, e.g. "api.example.test:443": an RFC 1123 host
 *    name in lower case. The guest resolves it outside the sandbox when the
 *    lease starts and allows exactly the addresses it got (/32 or /128 with
 *    the rule's port); the sandbox's /etc/hosts carries them, so the
 *    workload needs no DNS.
 *
 * The kernel (tier A/B connect/sendmsg hooks) enforces the compiled list of
 * addresses; this file only parses, compares and intersects rules so the hub
 * can refuse a request that would widen what the capability allows.
 *
 * One rule has one spelling: the network address must have its host bits
 * clear, IPv6 is written in RFC 5952 form inside brackets, a name is lower
 * case without a trailing dot, and the port is a single decimal number
 * 1–65535. Anything else is refused rather than normalised, because two
 * spellings of one rule make allow-list diffs lie.
 *
 * Names and addresses never cover each other here: a name rule lies within
 * another rule only when that rule is the same name with the same port, and
 * an address rule never covers a name rule (nor the reverse). What a name
 * resolves to is decided on the guest at lease start, so the hub cannot know
 * whether "api.example.test" falls inside 10.0.0.0/8 — treating it as inside
 * would let a request widen a list by naming something that resolves
 * anywhere. The guest's host ceiling, which sees the resolved addresses, may
 * accept a name by address (agent-guest/ceiling).
 */

export type AddressFamily = 4 | 6;

export interface AddressEgressRule {
  readonly kind: "address";
  readonly family: AddressFamily;
  /** The network address as an unsigned integer of 32 or 128 bits. */
  readonly network: bigint;
  readonly prefix: number;
  readonly port: number;
  /** Canonical text, the only spelling that appears in manifests and compiled policies. */
  readonly text: string;
}

export interface NameEgressRule {
  readonly kind: "name";
  /** Lower-case RFC 1123 host name, no trailing dot. */
  readonly name: string;
  readonly port: number;
  readonly text: string;
}

export type EgressRule = AddressEgressRule | NameEgressRule;

/** 253 characters of name, ":" and five digits. */
export const MAX_EGRESS_RULE_LENGTH = 259;
const MAX_NAME_LENGTH = 253;

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

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * RFC 1123 host name, lower case: dot-separated labels of 1–63 letters,
 * digits and inner hyphens, at most 253 characters. A name whose last label
 * is all digits is refused (RFC 3696 §2), so "10.0.0.1" can never be read as
 * a name — an address is written as an address rule with its prefix.
 */
export function isCanonicalHostName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) return false;
  const labels = name.split(".");
  if (!labels.every((label) => LABEL.test(label))) return false;
  return !/^[0-9]+$/.test(labels[labels.length - 1] ?? "");
}

function parseNameRule(text: string): NameEgressRule | undefined {
  const match = /^([a-z0-9.-]+):([0-9]+)$/.exec(text);
  if (match === null) return undefined;
  const [, name = "", portText = ""] = match;
  const port = parsePort(portText);
  if (port === undefined || !isCanonicalHostName(name)) return undefined;
  return { kind: "name", name, port, text: `${name}:${port}` };
}

/**
 * Parses one rule. Returns `undefined` for malformed text, host bits set
 * ("10.0.0.1/8:443"), an upper-case or otherwise non-RFC 1123 name, or any
 * spelling other than the canonical one.
 */
export function parseEgressRule(text: string): EgressRule | undefined {
  if (text.length === 0 || text.length > MAX_EGRESS_RULE_LENGTH) return undefined;
  if (!text.includes("/")) return parseNameRule(text);
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
  return { kind: "address", family, network, prefix, port, text: canonical };
}

/**
 * The address rule allowing exactly one resolved address on `port`
 * (/32 or /128). `address` is what node:dns returns; `undefined` when it is
 * not an IPv4 dotted quad or a plain IPv6 address.
 */
export function hostEgressRule(address: string, port: number): AddressEgressRule | undefined {
  const v4 = parseIpv4(address);
  if (v4 !== undefined) return parseEgressRule(render(4, v4, 32, port)) as AddressEgressRule | undefined;
  const v6 = parseIpv6(address);
  if (v6 !== undefined) return parseEgressRule(render(6, v6, 128, port)) as AddressEgressRule | undefined;
  return undefined;
}

/** Canonical text of one resolved address (RFC 5952 for IPv6), or `undefined`. */
export function canonicalAddress(address: string): string | undefined {
  const v4 = parseIpv4(address);
  if (v4 !== undefined) return formatIpv4(v4);
  const v6 = parseIpv6(address);
  return v6 === undefined ? undefined : formatIpv6(v6);
}

/**
 * True when every destination `inner` allows is also allowed by `outer`.
 * A name rule is within only the same name with the same port; names and
 * addresses never cover each other (see the file comment).
 */
export function egressRuleWithin(inner: EgressRule, outer: EgressRule): boolean {
  if (inner.kind === "name" || outer.kind === "name") {
    return inner.kind === "name" && outer.kind === "name" && inner.name === outer.name && inner.port === outer.port;
  }
  if (inner.family !== outer.family || inner.port !== outer.port || inner.prefix < outer.prefix) return false;
  const shift = bitsOf(outer.family) - BigInt(outer.prefix);
  return inner.network >> shift === outer.network >> shift;
}

/** True when `rule` is inside at least one rule of `allowed`. */
export function egressRuleAllowedBy(rule: EgressRule, allowed: readonly EgressRule[]): boolean {
  return allowed.some((outer) => egressRuleWithin(rule, outer));
}

/** Address rules first (by family, network, prefix, port), then name rules (by name, port). */
function compareRules(a: EgressRule, b: EgressRule): number {
  if (a.kind !== b.kind) return a.kind === "address" ? -1 : 1;
  if (a.kind === "name" && b.kind === "name") {
    if (a.name !== b.name) return a.name < b.name ? -1 : 1;
    return a.port - b.port;
  }
  if (a.kind !== "address" || b.kind !== "address") return 0;
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
 * narrower block, or nothing. A name rule survives only when both lists carry
 * it (same name and port): a name is never intersected with an address block.
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
