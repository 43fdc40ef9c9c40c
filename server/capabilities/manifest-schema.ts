/**
 * Capability manifest v1 (docs/design.md#manifest) as a strict zod schema.
 *
 * Every object is closed (unknown fields refused), every field is required
 * unless docs/design.md#manifest marks it optional (v1 marks none), and every value is typed
 * and bounded. Values keep their declared spelling ("512m"); the sandbox
 * policy compiler turns them into integers. Cross-field rules:
 * - `network` may be an egress list only when `trust_boundary` is
 *   `network-egress`, and that boundary must be `activation: "opt-in"`;
 * - a `read-only` capability has no mutating operation;
 * - operation names are unique within the manifest and never one the hub
 *   owns (`RESERVED_OPERATION_NAMES`). Uniqueness across manifests is the
 *   registry's job, because only it sees them all.
 */
import { z } from "zod";

import { LeaseholdError } from "../errors/index";
import { MAX_EGRESS_RULE_LENGTH, parseEgressRule } from "../trust/egress";
import { checkInputSchema, toJsonPointer, type OperationInputSchema } from "./input-schema";
import {
  CPU_MILLIS_BOUNDS,
  MEMORY_BOUNDS,
  PIDS_BOUNDS,
  TIMEOUT_S_BOUNDS,
  TMPFS_BOUNDS,
  isCanonicalAbsoluteDir,
  parseCpusToMillis,
  parseSizeToBytes,
} from "./sandbox-values";

/**
 * Tool names the hub itself serves. A manifest claiming one would shadow a
 * hub tool on the MCP surface, so it is refused.
 */
export const RESERVED_OPERATION_NAMES: ReadonlySet<string> = new Set([
  "health",
  "list_capabilities",
  "hosts_list",
  "lease_acquire",
  "lease_release",
  "lease_status",
  "approval_status",
  "approval_wait",
  "audit_checkpoint",
  "audit_proof",
  "host_key",
  "artifact_upload",
  "action_cancel",
]);

export const TRUST_BOUNDARIES = ["read-only", "host-exec", "static-analysis", "network-egress"] as const;
export type TrustBoundary = (typeof TRUST_BOUNDARIES)[number];
export const ACTIVATIONS = ["required", "optional", "opt-in"] as const;
export type Activation = (typeof ACTIVATIONS)[number];

/** Lower-case words joined by single hyphens: "shell", "egress-shell", "apk-static". */
export const CAPABILITY_ID_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
/** Operation names are MCP tool names: lower-case snake case. */
export const OPERATION_NAME_PATTERN = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;
/** Semantic Versioning 2.0.0, including pre-release and build metadata. */
const SEMVER_PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

export const MANIFEST_LIMITS = {
  maxOperations: 32,
  maxDescriptionLength: 1024,
  maxEgressRules: 64,
  maxExecAllow: 32,
  /** A manifest file larger than this is refused before parsing. */
  maxFileBytes: 256 * 1024,
} as const;

const sizeString = (bounds: { min: number; max: number }, what: string) =>
  z
    .string()
    .max(16)
    .refine(
      (text) => {
        const bytes = parseSizeToBytes(text);
        return bytes !== undefined && bytes >= bounds.min && bytes <= bounds.max;
      },
      { message: `${what} must be a size like "512m" (k, m or g; binary units) between ${bounds.min} and ${bounds.max} bytes` },
    );

const egressRule = z
  .string()
  .max(MAX_EGRESS_RULE_LENGTH)
  .refine((text) => parseEgressRule(text) !== undefined, {
    message: 'egress rules are canonical "CIDR:port" ("10.0.0.0/8:443", "[2001:db8::/32]:443", host bits clear) or "name:port" (a lower-case RFC 1123 host name, "api.example.test:443")',
  });

export const EgressNetworkSchema = z.strictObject({
  egress: z
    .array(egressRule)
    .min(1)
    .max(MANIFEST_LIMITS.maxEgressRules)
    .refine((rules) => new Set(rules).size === rules.length, { message: "egress rules must be unique" }),
});

export const SandboxSchema = z.strictObject({
  network: z.union([z.literal("none"), EgressNetworkSchema]),
  read_only_root: z.boolean(),
  memory: sizeString(MEMORY_BOUNDS, "memory"),
  cpus: z
    .string()
    .max(8)
    .refine(
      (text) => {
        const millis = parseCpusToMillis(text);
        return millis !== undefined && millis >= CPU_MILLIS_BOUNDS.min && millis <= CPU_MILLIS_BOUNDS.max;
      },
      { message: `cpus must be a decimal string like "1" or "0.5", between ${CPU_MILLIS_BOUNDS.min / 1000} and ${CPU_MILLIS_BOUNDS.max / 1000}` },
    ),
  pids_limit: z.int().min(PIDS_BOUNDS.min).max(PIDS_BOUNDS.max),
  tmpfs_tmp: sizeString(TMPFS_BOUNDS, "tmpfs_tmp"),
  timeout_s: z.int().min(TIMEOUT_S_BOUNDS.min).max(TIMEOUT_S_BOUNDS.max),
  exec_allow: z
    .array(
      z.string().refine(isCanonicalAbsoluteDir, {
        message: 'exec_allow entries are canonical absolute directories ("/usr/bin": no trailing slash, no "." or ".." segments)',
      }),
    )
    .max(MANIFEST_LIMITS.maxExecAllow)
    .refine((dirs) => new Set(dirs).size === dirs.length, { message: "exec_allow entries must be unique" }),
});

export const OperationSchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(OPERATION_NAME_PATTERN, { message: `operation names must match ${OPERATION_NAME_PATTERN.source}` })
    .refine((name) => !RESERVED_OPERATION_NAMES.has(name), { message: "this operation name is reserved by the hub" }),
  mutating: z.boolean(),
  input_schema: z.record(z.string(), z.unknown()).superRefine((schema, ctx) => {
    for (const issue of checkInputSchema(schema)) {
      ctx.addIssue({ code: "custom", path: [...issue.path], message: issue.message });
    }
  }),
  description: z.string().min(1).max(MANIFEST_LIMITS.maxDescriptionLength),
  /**
   * The operation's workload is a launched sandbox that is still meaningful
   * with the workspace mounted read-only: a caller whose observe scope is
   * `any` runs it at once under an observe lease, whatever its risk
   * (server/policy/decide.ts). Only a mutating operation of a capability
   * without network may declare it: a network lease always needs a person.
   */
  observe_scope: z.boolean().optional(),
});

export const ManifestSchema = z
  .strictObject({
    id: z.string().min(1).max(64).regex(CAPABILITY_ID_PATTERN, { message: `id must match ${CAPABILITY_ID_PATTERN.source}` }),
    capability_api: z.literal(1),
    worker_abi: z.literal(1),
    version: z.string().max(64).regex(SEMVER_PATTERN, { message: "version must be a semantic version (1.0.0)" }),
    trust_boundary: z.enum(TRUST_BOUNDARIES),
    activation: z.enum(ACTIVATIONS),
    operations: z.array(OperationSchema).min(1).max(MANIFEST_LIMITS.maxOperations),
    sandbox: SandboxSchema,
    /**
     * Optional: the content digest (`sha256:<64 hex>`, server/trust
     * `bundleDigest`) of the worker bundle this capability runs. When present
     * a host is ready only if it reports exactly this digest, and every
     * prepared action names it so the signed job carries it to the guest.
     */
    worker_digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, { message: "worker_digest must be sha256:<64 lower-case hex>" }).optional(),
  })
  .superRefine((manifest, ctx) => {
    const seen = new Map<string, number>();
    manifest.operations.forEach((operation, index) => {
      const first = seen.get(operation.name);
      if (first !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["operations", index, "name"],
          message: `operation "${operation.name}" is declared twice (first at /operations/${first})`,
        });
      } else {
        seen.set(operation.name, index);
      }
      if (operation.observe_scope === true && (!operation.mutating || manifest.sandbox.network !== "none")) {
        ctx.addIssue({
          code: "custom",
          path: ["operations", index, "observe_scope"],
          message: "observe_scope is for a mutating operation of a capability without network (a network lease always needs a person)",
        });
      }
      if (manifest.trust_boundary === "read-only" && operation.mutating) {
        ctx.addIssue({
          code: "custom",
          path: ["operations", index, "mutating"],
          message: 'a capability with trust_boundary "read-only" cannot declare a mutating operation',
        });
      }
    });
    if (manifest.sandbox.network !== "none" && manifest.trust_boundary !== "network-egress") {
      ctx.addIssue({
        code: "custom",
        path: ["sandbox", "network"],
        message: 'network must be "none" unless trust_boundary is "network-egress"',
      });
    }
    if (manifest.trust_boundary === "network-egress" && manifest.activation !== "opt-in") {
      ctx.addIssue({
        code: "custom",
        path: ["activation"],
        message: 'a "network-egress" capability must have activation "opt-in"',
      });
    }
  });

/** An operation as declared in a validated manifest. */
export type OperationDeclaration = Omit<z.output<typeof OperationSchema>, "input_schema"> & {
  input_schema: OperationInputSchema;
};
export type SandboxDeclaration = z.output<typeof SandboxSchema>;
/** A validated manifest v1. Deeply read-only once loaded: the registry freezes it. */
export type Manifest = Omit<z.output<typeof ManifestSchema>, "operations"> & {
  operations: OperationDeclaration[];
};

export interface ManifestIssue {
  /** JSON Pointer into the manifest; "" is the manifest itself. */
  path: string;
  message: string;
}

export type ManifestParseResult = { ok: true; manifest: Manifest } | { ok: false; issues: ManifestIssue[] };

/** Validates without throwing. */
export function safeParseManifest(input: unknown): ManifestParseResult {
  const result = ManifestSchema.safeParse(input);
  // The input_schema refinement above is what makes this narrowing true.
  if (result.success) return { ok: true, manifest: result.data as unknown as Manifest };
  const issues: ManifestIssue[] = [];
  for (const issue of result.error.issues) {
    const path = issue.path.map((segment) => (typeof segment === "symbol" ? String(segment.description) : segment));
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) issues.push({ path: toJsonPointer([...path, key]), message: "unknown field" });
    } else {
      issues.push({ path: toJsonPointer(path), message: issue.message });
    }
  }
  return { ok: false, issues };
}

const MAX_ISSUES_IN_MESSAGE = 8;

/**
 * Validates a manifest or throws `CONFIG_INVALID` whose message names the
 * source (file path or "runtime:<name>") and each offending JSON Pointer, e.g.
 * `capability manifest /etc/leasehold/capabilities/x.json is invalid: /sandbox/memory: memory must be…`.
 */
export function parseManifest(input: unknown, source: string): Manifest {
  const result = safeParseManifest(input);
  if (result.ok) return result.manifest;
  const shown = result.issues
    .slice(0, MAX_ISSUES_IN_MESSAGE)
    .map((issue) => `${issue.path === "" ? "(root)" : issue.path}: ${issue.message}`);
  const more = result.issues.length > MAX_ISSUES_IN_MESSAGE ? `; and ${result.issues.length - MAX_ISSUES_IN_MESSAGE} more` : "";
  throw new LeaseholdError("CONFIG_INVALID", `capability manifest ${source} is invalid: ${shown.join("; ")}${more}`, {
    tier: "config",
    hint: "fix the manifest; the hub does not start with an invalid capability",
    details: { source, issues: result.issues },
  });
}

/**
 * Parses manifest file text. Refuses oversized files and invalid JSON with the
 * same `CONFIG_INVALID` shape as schema failures.
 */
export function parseManifestText(text: string, source: string): Manifest {
  if (Buffer.byteLength(text, "utf8") > MANIFEST_LIMITS.maxFileBytes) {
    throw new LeaseholdError("CONFIG_INVALID", `capability manifest ${source} is larger than ${MANIFEST_LIMITS.maxFileBytes} bytes`, {
      tier: "config",
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new LeaseholdError("CONFIG_INVALID", `capability manifest ${source} is not valid JSON: ${error instanceof Error ? error.message : "parse error"}`, {
      tier: "config",
    });
  }
  return parseManifest(json, source);
}
