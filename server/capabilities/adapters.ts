/**
 * Capability adapters: the per-capability code between a validated request
 * and a job. An adapter normalises arguments into one canonical spelling (so
 * equal requests hash equally and idempotency compares like with like), says
 * which arguments narrow the sandbox, and shapes the job payload. It never
 * executes anything, never reads the host, and never widens what the
 * arguments asked for.
 *
 * Adapters are found by manifest id through an `AdapterRegistry` map, so the
 * pipeline never branches on capability or operation names.
 */
import { LeaseholdError } from "../errors/index";
import { normaliseEgressRules, parseEgressRule } from "../trust/egress";
import type { Manifest, OperationDeclaration } from "./manifest-schema";
import { JOB_PAYLOAD_SCHEMA, type CompiledSandboxPolicy, type JobPayload } from "../trust/job";
import type { SandboxNarrowing } from "./policy-compile";
import { normaliseMounts, splitLabelPath, type MountMode, type MountRequest } from "./host-mounts";

/** Arguments after schema validation and adapter normalisation. Plain JSON. */
export type PreparedArguments = Record<string, unknown>;

// The payload's shape is part of the signed job: server/trust/job.ts.
export { JOB_PAYLOAD_SCHEMA };
export type { JobPayload };

export interface JobPayloadInput {
  manifest: Manifest;
  operation: OperationDeclaration;
  prepared: PreparedArguments;
  policy: CompiledSandboxPolicy;
}

export interface CapabilityAdapter {
  /** The manifest id this adapter serves. */
  readonly capability: string;
  /** Operation names it knows how to prepare; the registry refuses a manifest declaring others. */
  readonly operations: readonly string[];
  /**
   * Normalises schema-validated arguments: fills defaults explicitly, puts
   * lists and maps in one order, canonicalises paths lexically. Meaning is
   * never changed. Throws `INVALID_ARGUMENT` (tier "hub") for input the
   * schema cannot express as invalid (e.g. malformed base64).
   */
  prepareArguments(operation: OperationDeclaration, args: Record<string, unknown>): PreparedArguments;
  /** The request's narrowing of the sandbox, taken from prepared arguments. */
  sandboxRequest(operation: OperationDeclaration, prepared: PreparedArguments): SandboxNarrowing;
  /**
   * Whether a mutating operation may write the host workspace (and so needs
   * the host's exclusive lease when it is risky). False only for an
   * operation whose writes all go to host path labels (`fs_write` to a
   * `label:` path, `rollback`): those take each label's lease instead
   * (docs/design.md#leases).
   */
  writesWorkspace(operation: OperationDeclaration, prepared: PreparedArguments): boolean;
  jobPayload(input: JobPayloadInput): JobPayload;
}

export type AdapterRegistry = ReadonlyMap<string, CapabilityAdapter>;

/** Builds the id → adapter map; two adapters for one id is a start-up error. */
export function createAdapterRegistry(adapters: readonly CapabilityAdapter[]): AdapterRegistry {
  const map = new Map<string, CapabilityAdapter>();
  for (const adapter of adapters) {
    if (map.has(adapter.capability)) {
      throw new LeaseholdError("CONFIG_INVALID", `two adapters are registered for capability ${adapter.capability}`, { tier: "config" });
    }
    map.set(adapter.capability, adapter);
  }
  return map;
}

// ---------------------------------------------------------------------------
// Normalisation helpers shared by the built-in adapters.

function invalidArgument(field: string, message: string): never {
  throw new LeaseholdError("INVALID_ARGUMENT", `${field}: ${message}`, { tier: "hub", details: { path: `/${field}` } });
}

/**
 * Lexically canonical workspace-relative path: "a//b/./c/" → "a/b/c", "" or
 * "." → ".". `..` segments and absolute paths are refused here as a
 * user-space hub check; the guest refuses them again, and symlinks, against
 * the real filesystem — this check alone proves nothing about the disk.
 */
export function normaliseWorkspacePath(field: string, value: unknown): string {
  if (typeof value !== "string") invalidArgument(field, "must be a string");
  if (value.startsWith("/")) invalidArgument(field, "must be relative to the workspace root (refused by a hub check)");
  const segments = value.split("/").filter((segment) => segment !== "" && segment !== ".");
  if (segments.includes("..")) invalidArgument(field, "must not contain '..' (refused by a hub check)");
  return segments.length === 0 ? "." : segments.join("/");
}

/**
 * A workspace path or a host path label path (`logs:nginx/access.log`),
 * lexically canonical either way; a label path's label is returned with the
 * mode the operation needs of it. The relative part follows the workspace
 * path rules ("logs:" and "logs:." are the label's root).
 */
export function normaliseOperationPath(field: string, value: unknown, mode: MountMode): { path: string; implied: MountRequest[] } {
  const split = splitLabelPath(field, value);
  if (split.label === null) return { path: normaliseWorkspacePath(field, value), implied: [] };
  return { path: `${split.label}:${normaliseWorkspacePath(field, split.relative)}`, implied: [{ label: split.label, mode }] };
}

/** `mounts` (and a path's implied label) in one canonical spelling; left out when empty, so no mounts and `[]` hash alike. */
function withMounts(args: Record<string, unknown>, implied: readonly MountRequest[] = []): Record<string, unknown> {
  const { mounts: _given, ...rest } = args;
  const mounts = normaliseMounts(args["mounts"], implied);
  return mounts.length === 0 ? rest : { ...rest, mounts };
}

function sortedRecord(value: unknown): Record<string, string> {
  const entries = Object.entries((value ?? {}) as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const result: Record<string, string> = {};
  for (const [key, entry] of entries) Object.defineProperty(result, key, { value: entry, enumerable: true, writable: true, configurable: true });
  return result;
}

function canonicalEgress(value: unknown): string[] {
  if (!Array.isArray(value)) invalidArgument("egress", "must be a list");
  const rules = value.map((text: unknown) => {
    const rule = typeof text === "string" ? parseEgressRule(text) : undefined;
    return rule ?? invalidArgument("egress", `${JSON.stringify(text)} is not a canonical CIDR:port rule such as 10.1.0.0/16:443 or a name:port rule such as api.example.test:443 (lower-case host name)`);
  });
  return normaliseEgressRules(rules).map((rule) => rule.text);
}

const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Request fields that narrow the sandbox, by their argument names. */
function narrowingFrom(prepared: PreparedArguments): SandboxNarrowing {
  const narrowing: SandboxNarrowing = {};
  if (typeof prepared["timeout_s"] === "number") narrowing.timeout_s = prepared["timeout_s"];
  if (Array.isArray(prepared["egress"])) narrowing.egress = prepared["egress"] as string[];
  if (Array.isArray(prepared["mounts"])) narrowing.mounts = prepared["mounts"] as MountRequest[];
  return narrowing;
}

/** Arguments that are hub-only or became policy; the worker never sees them. */
const NOT_FOR_WORKER: ReadonlySet<string> = new Set(["host", "idempotency_key", "timeout_s", "egress", "lease", "mounts"]);

function defaultJobPayload({ manifest, operation, prepared, policy }: JobPayloadInput): JobPayload {
  const workerArguments: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(prepared)) {
    if (!NOT_FOR_WORKER.has(key)) workerArguments[key] = value;
  }
  return {
    schema: JOB_PAYLOAD_SCHEMA,
    host: String(prepared["host"]),
    capability: { id: manifest.id, version: manifest.version, worker_abi: manifest.worker_abi },
    operation: operation.name,
    mutating: operation.mutating,
    arguments: workerArguments,
    sandbox: policy,
  };
}

type Normaliser = (args: Record<string, unknown>) => PreparedArguments;

/**
 * An adapter from a table of per-operation normalisers. The table is data:
 * adding an operation adds a row, not a branch.
 */
/** Per-operation facts a table adapter may add about host path labels (docs/design.md#host-paths). */
export interface HostPathHooks {
  /** The operation writes only host path labels, never the workspace. */
  labelOnlyWrites?: (operation: string, prepared: PreparedArguments) => boolean;
  /** Labels the operation needs beyond its `mounts` argument (a rollback: the label it restores, rw). */
  impliedMounts?: (operation: string, prepared: PreparedArguments) => MountRequest[];
}

export function createTableAdapter(capability: string, normalisers: Readonly<Record<string, Normaliser>>, hooks: HostPathHooks = {}): CapabilityAdapter {
  const table = new Map(Object.entries(normalisers));
  return {
    capability,
    operations: [...table.keys()],
    prepareArguments(operation, args) {
      const normalise = table.get(operation.name);
      if (normalise === undefined) {
        throw new LeaseholdError("INTERNAL", `adapter ${capability} has no preparation for ${operation.name}`, { tier: "hub" });
      }
      return normalise({ ...args });
    },
    sandboxRequest: (operation, prepared) => {
      const narrowing = narrowingFrom(prepared);
      const implied = hooks.impliedMounts?.(operation.name, prepared) ?? [];
      return implied.length === 0 ? narrowing : { ...narrowing, mounts: normaliseMounts(narrowing.mounts, implied) };
    },
    writesWorkspace: (operation, prepared) => operation.mutating && hooks.labelOnlyWrites?.(operation.name, prepared) !== true,
    jobPayload: defaultJobPayload,
  };
}

/**
 * An adapter that changes nothing, for runtime-registered capabilities whose
 * arguments need no normalisation. It must be chosen explicitly at
 * registration; the registry never falls back to it.
 */
export function createPassthroughAdapter(capability: string, operations: readonly string[]): CapabilityAdapter {
  return createTableAdapter(capability, Object.fromEntries(operations.map((name) => [name, (args: Record<string, unknown>) => args])));
}

// ---------------------------------------------------------------------------
// Built-in adapters.

const prepareCommand: Normaliser = (args) => ({
  ...withMounts(args),
  cwd: normaliseWorkspacePath("cwd", args["cwd"] ?? "."),
  env: sortedRecord(args["env"]),
  stdin: args["stdin"] ?? "",
});

const prepareCommandNet: Normaliser = (args) => {
  const prepared = prepareCommand(args);
  if (args["egress"] !== undefined) prepared["egress"] = canonicalEgress(args["egress"]);
  return prepared;
};

export const shellAdapter = createTableAdapter("shell", { run_command: prepareCommand });

export const egressShellAdapter = createTableAdapter("egress-shell", { run_command_net: prepareCommandNet });

export const codeAdapter = createTableAdapter("code", {
  run_code: (args) => ({ ...args, stdin: args["stdin"] ?? "" }),
});

export const FS_READ_DEFAULT_LIMIT = 65_536;
export const FS_LIST_DEFAULT_LIMIT = 50;

export const workspaceAdapter = createTableAdapter("workspace", {
  fs_read: (args) => {
    const { path, implied } = normaliseOperationPath("path", args["path"], "ro");
    return {
      ...withMounts(args, implied),
      path,
      offset: args["offset"] ?? 0,
      limit: args["limit"] ?? FS_READ_DEFAULT_LIMIT,
      encoding: args["encoding"] ?? "utf8",
    };
  },
  fs_list: (args) => {
    const { path, implied } = normaliseOperationPath("path", args["path"], "ro");
    return {
      ...withMounts(args, implied),
      path,
      offset: args["offset"] ?? 0,
      limit: args["limit"] ?? FS_LIST_DEFAULT_LIMIT,
    };
  },
  fs_write: (args) => {
    const encoding = args["encoding"] ?? "utf8";
    if (encoding === "base64" && !BASE64_PATTERN.test(String(args["content"]))) {
      invalidArgument("content", "is not canonical base64 (RFC 4648, padded, no whitespace)");
    }
    const { path, implied } = normaliseOperationPath("path", args["path"], "rw");
    if (path === "." || path.endsWith(":.")) invalidArgument("path", "must name a file, not the workspace root or a label's root");
    return { ...withMounts(args, implied), path, encoding };
  },
  rollback: (args) => ({ ...args }),
}, {
  labelOnlyWrites: (operation, prepared) => operation === "rollback" || (operation === "fs_write" && splitLabelPath("path", prepared["path"]).label !== null),
  // The label restored is the one mount a rollback job gets, read-write: the guest restores it in place.
  // It is policy, not an argument: the job's arguments stay exactly {label, snapshot_id} (with host).
  impliedMounts: (operation, prepared) => (operation === "rollback" ? [{ label: String(prepared["label"]), mode: "rw" }] : []),
});

export const hostAdapter = createTableAdapter("host", { host_inspect: (args) => ({ ...args }) });

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * The artifact argument as the pipeline resolved it:
 * exactly `{sha256, bytes}`. Anything else here means the prepare step did
 * not run on it — refused, never passed on as base64 or a name.
 */
function resolvedArtifact(value: unknown): { sha256: string; bytes: number } {
  const ref = value as { sha256?: unknown; bytes?: unknown } | null;
  const keys = ref === null || typeof ref !== "object" ? [] : Object.keys(ref).sort();
  if (keys.join(",") !== "bytes,sha256" || typeof ref?.sha256 !== "string" || !SHA256_HEX.test(ref.sha256) || typeof ref.bytes !== "number" || !Number.isSafeInteger(ref.bytes) || ref.bytes < 1) {
    invalidArgument("artifact", "must be resolved to a stored artifact {sha256, bytes} before preparation (refused by a hub check)");
  }
  return { sha256: ref.sha256, bytes: ref.bytes };
}

const prepareApk: Normaliser = (args) => ({ ...args, artifact: resolvedArtifact(args["artifact"]) });

/** apk-static: the job payload's `arguments.artifact` is the `{sha256, bytes}` the guest fetches. */
export const apkStaticAdapter = createTableAdapter("apk-static", { apk_inspect: prepareApk, apk_preflight: prepareApk });

export const BUILTIN_ADAPTERS: readonly CapabilityAdapter[] = [shellAdapter, egressShellAdapter, codeAdapter, workspaceAdapter, hostAdapter, apkStaticAdapter];

export function builtinAdapterRegistry(): AdapterRegistry {
  return createAdapterRegistry(BUILTIN_ADAPTERS);
}
