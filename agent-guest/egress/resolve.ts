/**
 * Names in an egress allow-list, resolved by the guest OUTSIDE the sandbox
 * when a lease starts. The sandbox gets exactly the addresses
 * found here — a /32 or /128 rule per address with the name rule's port —
 * and an /etc/hosts that maps the name to them, so the workload needs no DNS
 * and has no resolver to smuggle data through.
 *
 * - Both families: `dns.lookup(name, {all: true})` (getaddrinfo, the host's
 *   own /etc/hosts and resolver configuration), nothing filtered by family.
 * - Bounded: one deadline for all names of a lease (getaddrinfo cannot be
 *   cancelled; past the deadline its answer is ignored and the job fails).
 * - A name with no address, an error, or no answer in time fails the job
 *   with EGRESS_NAME_UNRESOLVED before anything runs — never "run without
 *   that destination", which would change what was approved.
 * - At most MAX_ADDRESSES_PER_NAME addresses per name; more is refused
 *   (POLICY_REFUSED) rather than cut, for the same reason.
 */
import dns from "node:dns";
import { LeaseholdError, canonicalAddress, hostEgressRule, normaliseEgressRules, parseEgressRule, type EgressRule } from "../../server/trust";

export interface LookupAddress {
  address: string;
  family: number;
}
export type Lookup = (name: string) => Promise<readonly LookupAddress[]>;

/** getaddrinfo through node:dns, both families, in the resolver's order. */
export const systemLookup: Lookup = (name) => dns.promises.lookup(name, { all: true, family: 0, order: "verbatim" });

export const DEFAULT_RESOLVE_TIMEOUT_MS = 5_000;
/** What the sandbox's /etc/hosts takes per name (native SandboxPolicy `hosts`). */
export const MAX_ADDRESSES_PER_NAME = 32;

/** One name rule of the job and what its name resolved to (canonical text, sorted, unique). */
export interface ResolvedEgressName {
  rule: string;
  name: string;
  port: number;
  addresses: string[];
}

export interface ResolvedEgress {
  /** The address rules the kernel enforces: the job's own address rules and one per resolved address and port; normalised. */
  egress: string[];
  /** For the sandbox's /etc/hosts: each name once, with every address it resolved to. */
  hosts: { name: string; addresses: string[] }[];
  /** Per name rule, for the ceiling check and the evidence. */
  names: ResolvedEgressName[];
}

/** True when a compiled egress list carries at least one name rule. */
export function hasNameRules(rules: readonly string[]): boolean {
  return rules.some((text) => parseEgressRule(text)?.kind === "name");
}

function unresolved(name: string, why: string): LeaseholdError {
  return new LeaseholdError("EGRESS_NAME_UNRESOLVED", `egress allow-list name ${name} did not resolve on this host (${why}); nothing was run`, {
    tier: "guest",
    retryable: true,
    hint: "check the name in the capability's egress configuration and the host's resolver (/etc/hosts, /etc/resolv.conf)",
    details: { field: "network.egress", name },
  });
}

async function resolveOne(name: string, lookup: Lookup): Promise<string[]> {
  let answers: readonly LookupAddress[];
  try {
    answers = await lookup(name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw unresolved(name, typeof code === "string" ? code : error instanceof Error ? error.message : String(error));
  }
  const addresses = new Set<string>();
  for (const answer of answers) {
    const text = canonicalAddress(answer.address);
    // A resolver answer that is not a plain address (a zone id, say) is not something the kernel list can hold.
    if (text === undefined) throw unresolved(name, `the resolver returned ${JSON.stringify(answer.address)}, which is not a plain IPv4 or IPv6 address`);
    addresses.add(text);
  }
  if (addresses.size === 0) throw unresolved(name, "no address");
  if (addresses.size > MAX_ADDRESSES_PER_NAME) {
    throw new LeaseholdError("POLICY_REFUSED", `egress allow-list name ${name} resolves to ${addresses.size} addresses, more than the ${MAX_ADDRESSES_PER_NAME} a lease allows per name; nothing was run`, {
      tier: "guest",
      details: { field: "network.egress", name },
    });
  }
  return [...addresses].sort();
}

/**
 * Resolves every name rule of a compiled egress list. Address rules pass
 * through unchanged. Throws EGRESS_NAME_UNRESOLVED (or POLICY_REFUSED for too
 * many addresses); never returns a partial answer.
 */
export async function resolveEgressNames(rules: readonly string[], options: { lookup?: Lookup; timeoutMs?: number } = {}): Promise<ResolvedEgress> {
  const lookup = options.lookup ?? systemLookup;
  const timeoutMs = options.timeoutMs ?? DEFAULT_RESOLVE_TIMEOUT_MS;
  const parsed = rules.map((text) => {
    const rule = parseEgressRule(text);
    if (rule === undefined) throw new LeaseholdError("INVALID_ARGUMENT", `egress rule ${JSON.stringify(text)} is not canonical`, { tier: "guest", details: { field: "network.egress" } });
    return rule;
  });
  const names = [...new Set(parsed.flatMap((rule) => (rule.kind === "name" ? [rule.name] : [])))].sort();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(unresolved(names.join(", "), `no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  let resolved: Map<string, string[]>;
  try {
    const answers = await Promise.race([Promise.all(names.map(async (name) => [name, await resolveOne(name, lookup)] as const)), deadline]);
    resolved = new Map(answers);
  } finally {
    clearTimeout(timer);
  }
  const enforced: EgressRule[] = [];
  const perRule: ResolvedEgressName[] = [];
  for (const rule of parsed) {
    if (rule.kind === "address") {
      enforced.push(rule);
      continue;
    }
    const addresses = resolved.get(rule.name) ?? [];
    for (const address of addresses) {
      const host = hostEgressRule(address, rule.port);
      if (host === undefined) throw unresolved(rule.name, `address ${address} cannot be written as a rule`);
      enforced.push(host);
    }
    perRule.push({ rule: rule.text, name: rule.name, port: rule.port, addresses });
  }
  return {
    egress: normaliseEgressRules(enforced).map((rule) => rule.text),
    hosts: names.map((name) => ({ name, addresses: resolved.get(name) ?? [] })),
    names: perRule,
  };
}
