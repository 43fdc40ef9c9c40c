/**
 * Sandbox policy compilation: capability policy ∩ scopes ∩ request.
 *
 * - The capability policy is the manifest's `sandbox` block, the ceiling —
 *   except its egress list, which is a default: the admin's egress
 *   configuration for a `network-egress` capability (`configuredEgress`,
 *   stored by `leasehold capability egress`) REPLACES it. The admin is the
 *   one who knows which destinations (addresses or names) an operator's
 *   network offers; a manifest cannot. Each host's ceiling still bounds what
 *   that host runs (agent-guest/ceiling).
 * - Scopes (the token's scope, the admin's configuration for a capability
 *   such as the egress list of `egress-shell`) intersect silently: a scope
 *   value above the ceiling is simply capped, because scopes are
 *   administrator settings, not requests.
 * - The request (the caller's `timeout_s`, `egress`, …) may only narrow. A
 *   request value above what capability and scopes leave is refused with
 *   `POLICY_REFUSED` naming the field — never silently capped, so a caller
 *   never believes it got something it did not.
 *
 * - Host paths (`mounts`, from the request's `mounts` and `label:` paths)
 *   are checked against the host ceiling's `host_paths` from the host's last
 *   health report and refused, never narrowed (server/capabilities/host-mounts.ts).
 *
 * The result is integers and canonical strings only, arrays sorted, ready to
 * go into the hub-signed job. The guest intersects it once more with the
 * host's own ceiling and refuses with UNENFORCEABLE what it cannot enforce.
 */
import { LeaseholdError } from "../errors/index";
import {
  egressRuleAllowedBy,
  intersectEgressRules,
  normaliseEgressRules,
  parseEgressRule,
  type EgressRule,
} from "../trust/egress";
import { COMPILED_POLICY_SCHEMA, type CompiledNetwork, type CompiledSandboxPolicy } from "../trust/job";
import { kernelRequirementsFor } from "../trust/kernel-requirements";
import type { Manifest } from "./manifest-schema";
import { compileMounts, type HostPathCeiling, type MountRequest } from "./host-mounts";
import { parseCpusToMillis, parseSizeToBytes } from "./sandbox-values";

// The compiled policy's shape is part of the signed job: server/trust/job.ts.
export { COMPILED_POLICY_SCHEMA };
export type { CompiledNetwork, CompiledSandboxPolicy };

/** The integer limits a scope or request may narrow, plus the egress list. */
export interface SandboxNarrowing {
  timeout_s?: number;
  memory_bytes?: number;
  tmpfs_tmp_bytes?: number;
  cpu_millis?: number;
  pids_limit?: number;
  /** Canonical egress rules; each must lie inside what the capability allows. */
  egress?: readonly string[];
  /** Host path labels with their modes (sorted, from `mounts` and `label:` paths); compiled against the host's ceiling. */
  mounts?: readonly MountRequest[];
}

export interface SandboxScope {
  /** Named in errors, e.g. "token scope" or "admin egress configuration". */
  name: string;
  limits: SandboxNarrowing;
}

export interface CompileSandboxPolicyInput {
  manifest: Manifest;
  operation: string;
  /** The admin's egress list for this capability; replaces the manifest's (see the file comment). */
  configuredEgress?: { name: string; egress: readonly string[] } | null;
  scopes?: readonly SandboxScope[];
  request?: SandboxNarrowing;
  /**
   * The host the policy is for and the host paths its guest last reported
   * (null: it reported none). Needed only when the request asks for mounts.
   */
  host?: { name: string; hostPaths: readonly HostPathCeiling[] | null };
}

const NUMERIC_FIELDS = ["timeout_s", "memory_bytes", "tmpfs_tmp_bytes", "cpu_millis", "pids_limit"] as const;
type NumericField = (typeof NUMERIC_FIELDS)[number];

function configInvalid(message: string): never {
  throw new LeaseholdError("CONFIG_INVALID", message, { tier: "config" });
}

function parseRules(rules: readonly string[], what: string, onInvalid: (message: string) => never): EgressRule[] {
  return rules.map((text) => parseEgressRule(text) ?? onInvalid(`${what}: egress rule ${JSON.stringify(text)} is not a canonical "CIDR:port" or "name:port" rule`));
}

/** The manifest's sandbox block as a compiled policy, before any narrowing. */
export function capabilityPolicy(manifest: Manifest, operation: string): CompiledSandboxPolicy {
  if (!manifest.operations.some((declared) => declared.name === operation)) {
    configInvalid(`capability ${manifest.id} does not declare operation ${operation}`);
  }
  const sandbox = manifest.sandbox;
  const memory = parseSizeToBytes(sandbox.memory);
  const tmpfs = parseSizeToBytes(sandbox.tmpfs_tmp);
  const cpus = parseCpusToMillis(sandbox.cpus);
  if (memory === undefined || tmpfs === undefined || cpus === undefined) {
    configInvalid(`capability ${manifest.id} has sandbox values that did not pass manifest validation`);
  }
  const network: CompiledNetwork =
    sandbox.network === "none"
      ? { mode: "none" }
      : {
          mode: "egress",
          egress: normaliseEgressRules(parseRules(sandbox.network.egress, `capability ${manifest.id}`, configInvalid)).map((rule) => rule.text),
        };
  return {
    schema: COMPILED_POLICY_SCHEMA,
    capability: manifest.id,
    capability_version: manifest.version,
    operation,
    network,
    read_only_root: sandbox.read_only_root,
    memory_bytes: memory,
    tmpfs_tmp_bytes: tmpfs,
    cpu_millis: cpus,
    pids_limit: sandbox.pids_limit,
    timeout_s: sandbox.timeout_s,
    exec_allow: [...sandbox.exec_allow].sort(),
    mounts: [],
    requires: kernelRequirementsFor(network.mode === "none" ? "none" : { egress: network.egress }),
  };
}

function checkNumber(value: unknown, field: string, onInvalid: (message: string) => never): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) onInvalid(`${field} must be a positive integer`);
  return value;
}

function refuseWidening(field: string, requested: unknown, allowed: unknown, why: string): never {
  throw new LeaseholdError("POLICY_REFUSED", `request widens sandbox field "${field}": ${why} (refused by a hub policy check)`, {
    tier: "hub",
    hint: `narrow "${field}" to within what the capability and your token allow, or omit it`,
    details: { field, requested, allowed },
  });
}

/**
 * Compiles the policy for one operation. Throws `POLICY_REFUSED` (tier "hub",
 * `details.field`) when the request widens anything, `INVALID_ARGUMENT` for a
 * malformed request value, `CONFIG_INVALID` for a malformed scope.
 */
export function compileSandboxPolicy(input: CompileSandboxPolicyInput): CompiledSandboxPolicy {
  const policy = capabilityPolicy(input.manifest, input.operation);
  let egress: EgressRule[] | undefined =
    policy.network.mode === "egress" ? parseRules(policy.network.egress, "capability", configInvalid) : undefined;
  const configured = input.configuredEgress;
  if (configured !== undefined && configured !== null) {
    if (egress === undefined) configInvalid(`${configured.name}: capability ${policy.capability} has no network access to configure`);
    egress = normaliseEgressRules(parseRules(configured.egress, configured.name, configInvalid));
  }

  for (const scope of input.scopes ?? []) {
    const invalid = (message: string): never => configInvalid(`${scope.name}: ${message}`);
    for (const field of NUMERIC_FIELDS) {
      const value = scope.limits[field];
      if (value === undefined) continue;
      policy[field] = Math.min(policy[field], checkNumber(value, field, invalid));
    }
    if (scope.limits.egress !== undefined && egress !== undefined) {
      egress = intersectEgressRules(egress, parseRules(scope.limits.egress, "egress", invalid));
    }
  }

  const request = input.request ?? {};
  const invalidRequest = (message: string): never => {
    throw new LeaseholdError("INVALID_ARGUMENT", message, { tier: "hub" });
  };
  for (const field of NUMERIC_FIELDS as readonly NumericField[]) {
    const value = request[field];
    if (value === undefined) continue;
    const requested = checkNumber(value, field, invalidRequest);
    if (requested > policy[field]) refuseWidening(field, requested, policy[field], `${requested} exceeds the allowed ${policy[field]}`);
    policy[field] = requested;
  }
  if (request.egress !== undefined) {
    const requested = parseRules(request.egress, "egress", invalidRequest);
    if (egress === undefined) {
      refuseWidening("egress", request.egress, [], `capability ${policy.capability} has no network access`);
    }
    const allowed = egress;
    const outside = requested.filter((rule) => !egressRuleAllowedBy(rule, allowed));
    if (outside.length > 0) {
      refuseWidening(
        "egress",
        outside.map((rule) => rule.text),
        allowed.map((rule) => rule.text),
        `${outside.map((rule) => rule.text).join(", ")} is outside the allowed egress list`,
      );
    }
    egress = normaliseEgressRules(requested);
  }

  const mounts = request.mounts ?? [];
  if (mounts.length > 0) {
    const declared = input.manifest.operations.find((candidate) => candidate.name === input.operation);
    policy.mounts = compileMounts({
      host: input.host?.name ?? "(unknown)",
      operation: input.operation,
      mutating: declared?.mutating === true,
      requested: mounts,
      hostPaths: input.host?.hostPaths ?? null,
    });
  }

  // Narrowed to nothing is no network at all: an empty namespace, enforceable in every tier.
  policy.network = egress === undefined || egress.length === 0 ? { mode: "none" } : { mode: "egress", egress: egress.map((rule) => rule.text) };
  policy.requires = kernelRequirementsFor(policy.network.mode === "none" ? "none" : { egress: policy.network.egress });
  return policy;
}
