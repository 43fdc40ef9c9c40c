/**
 * The capability registry: which manifests exist, which are active, and which
 * one owns each operation name.
 *
 * Resolution is a map lookup (operation name → owner → adapter), so the
 * pipeline has no branch per operation or capability. Start-up fails with
 * `CONFIG_INVALID` — naming the manifest source(s) — on any invalid manifest,
 * a duplicate capability id, an operation claimed by two manifests, a
 * manifest without a matching adapter, or an enabled id that is not a
 * declared opt-in capability. Registration is all-or-nothing: a refused
 * manifest leaves the registry as it was.
 */
import { readdir, readFile, lstat } from "node:fs/promises";
import { join } from "node:path";

import { LeaseholdError } from "../errors/index";
import { builtinAdapterRegistry, type AdapterRegistry, type CapabilityAdapter } from "./adapters";
import { BUILTIN_MANIFESTS, type ManifestSource } from "./builtin";
import { MANIFEST_LIMITS, parseManifest, parseManifestText, type Activation, type Manifest, type OperationDeclaration, type TrustBoundary } from "./manifest-schema";
import { computeReadiness, summariseCapabilityHealth, type CapabilityHealthSummary, type CapabilityReadiness, type HostReport, type ReadinessOptions } from "./readiness";
import { pinShippedBundles, type PinOptions } from "./worker-pins";

export type { ManifestSource } from "./builtin";

export interface RuntimeManifestSource extends ManifestSource {
  /** The adapter for this manifest; without it the registry's adapter map must have one. */
  adapter?: CapabilityAdapter;
}

export interface RegisteredCapability {
  readonly manifest: Manifest;
  readonly source: string;
  readonly adapter: CapabilityAdapter;
}

export interface OperationResolution {
  readonly manifest: Manifest;
  readonly operation: OperationDeclaration;
  readonly adapter: CapabilityAdapter;
  readonly source: string;
}

export interface CapabilityListing {
  id: string;
  version: string;
  trust_boundary: TrustBoundary;
  activation: Activation;
  /** False only for an opt-in capability whose id is not enabled. */
  active: boolean;
  /** "active", or "not_enabled" for a declared opt-in capability that exposes no tools. */
  status: "active" | "not_enabled";
  operations: { name: string; mutating: boolean; description: string }[];
  /** The worker content digest the hub requires (the manifest's pin), or null when the capability pins none. */
  worker_digest: string | null;
  /** Present when host reports were supplied. */
  readiness?: CapabilityReadiness;
}

export interface ListOptions {
  hostReports?: readonly HostReport[];
  readiness?: ReadinessOptions;
}

export interface CapabilityRegistry {
  /** Validates and adds one manifest at run time; all-or-nothing. */
  register(source: RuntimeManifestSource): RegisteredCapability;
  /**
   * The owner of an operation. Throws `NOT_FOUND` for an unknown name and
   * `CAPABILITY_UNAVAILABLE` when its capability is an opt-in not enabled.
   * Readiness on the target host is checked separately (`computeReadiness`).
   */
  resolveOperation(name: string): OperationResolution;
  get(id: string): RegisteredCapability | undefined;
  isActive(id: string): boolean;
  /** Enables an opt-in capability by its exact id. */
  enable(id: string): void;
  disable(id: string): void;
  /** Every declared capability, sorted by id, active or not. */
  list(options?: ListOptions): CapabilityListing[];
  /** Operations of active capabilities, sorted by name: the tool surface. */
  activeOperations(): OperationResolution[];
  /** Hub-health verdict over active capabilities. */
  health(hostReports: readonly HostReport[], options?: ReadinessOptions): CapabilityHealthSummary;
}

export interface CapabilityRegistryOptions {
  /** Load the shipped manifests (default true). */
  includeBuiltins?: boolean;
  /** Further manifests, e.g. from `readManifestDirectory`. */
  manifests?: readonly RuntimeManifestSource[];
  /** Exact ids of opt-in capabilities the admin enabled. No prefixes, no globs. */
  enabled?: Iterable<string>;
  /** Adapters by manifest id (default: the built-in adapters). */
  adapters?: AdapterRegistry;
  /** Where the built-in bundle capabilities' shipped bundles are, and which those are (./worker-pins.ts). */
  shippedBundles?: PinOptions;
}

function configError(message: string, details?: Record<string, unknown>): LeaseholdError {
  return new LeaseholdError("CONFIG_INVALID", message, {
    tier: "config",
    hint: "fix the capability configuration; the hub does not start with a conflicting capability set",
    ...(details === undefined ? {} : { details }),
  });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function byName<T>(key: (item: T) => string): (a: T, b: T) => number {
  return (a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
}

class Registry implements CapabilityRegistry {
  readonly #capabilities = new Map<string, RegisteredCapability>();
  readonly #operations = new Map<string, { capability: string; operation: OperationDeclaration }>();
  readonly #enabled = new Set<string>();
  readonly #adapters: AdapterRegistry;

  constructor(adapters: AdapterRegistry) {
    this.#adapters = adapters;
  }

  register(input: RuntimeManifestSource): RegisteredCapability {
    // Validate a private copy: the caller may not mutate what we checked.
    const manifest = deepFreeze(parseManifest(structuredClone(input.manifest), input.source));
    const existing = this.#capabilities.get(manifest.id);
    if (existing !== undefined) {
      throw configError(`capability id "${manifest.id}" is declared by both ${existing.source} and ${input.source}`, {
        capability: manifest.id,
        sources: [existing.source, input.source],
      });
    }
    for (const operation of manifest.operations) {
      const owner = this.#operations.get(operation.name);
      if (owner !== undefined) {
        const ownerSource = this.#capabilities.get(owner.capability)?.source ?? "unknown";
        throw configError(
          `operation "${operation.name}" is claimed by capability "${owner.capability}" (${ownerSource}) and by capability "${manifest.id}" (${input.source}); each operation has exactly one owner`,
          { operation: operation.name, capabilities: [owner.capability, manifest.id], sources: [ownerSource, input.source] },
        );
      }
    }
    const adapter = input.adapter ?? this.#adapters.get(manifest.id);
    if (adapter === undefined) {
      throw configError(`capability manifest ${input.source} (id "${manifest.id}") has no adapter registered`, { capability: manifest.id });
    }
    if (adapter.capability !== manifest.id) {
      throw configError(`capability manifest ${input.source}: adapter serves "${adapter.capability}", not "${manifest.id}"`);
    }
    const unsupported = manifest.operations.filter((operation) => !adapter.operations.includes(operation.name));
    if (unsupported.length > 0) {
      throw configError(
        `capability manifest ${input.source}: adapter for "${manifest.id}" cannot prepare ${unsupported.map((operation) => operation.name).join(", ")}`,
      );
    }

    const registered: RegisteredCapability = Object.freeze({ manifest, source: input.source, adapter });
    this.#capabilities.set(manifest.id, registered);
    for (const operation of manifest.operations) this.#operations.set(operation.name, { capability: manifest.id, operation });
    return registered;
  }

  resolveOperation(name: string): OperationResolution {
    const owned = this.#operations.get(name);
    const registered = owned === undefined ? undefined : this.#capabilities.get(owned.capability);
    if (owned === undefined || registered === undefined) {
      throw new LeaseholdError("NOT_FOUND", `unknown operation "${name}"`, { tier: "hub", hint: "list_capabilities shows the operations this hub serves" });
    }
    if (!this.isActive(registered.manifest.id)) {
      throw new LeaseholdError(
        "CAPABILITY_UNAVAILABLE",
        `operation "${name}" belongs to capability "${registered.manifest.id}", which is declared but not enabled (opt-in)`,
        { tier: "hub", retryable: false, hint: "an admin enables an opt-in capability by its exact id", details: { capability: registered.manifest.id } },
      );
    }
    return { manifest: registered.manifest, operation: owned.operation, adapter: registered.adapter, source: registered.source };
  }

  get(id: string): RegisteredCapability | undefined {
    return this.#capabilities.get(id);
  }

  isActive(id: string): boolean {
    const registered = this.#capabilities.get(id);
    if (registered === undefined) return false;
    return registered.manifest.activation !== "opt-in" || this.#enabled.has(id);
  }

  enable(id: string): void {
    const registered = this.#capabilities.get(id);
    if (registered === undefined) throw configError(`cannot enable capability "${id}": no manifest declares it (ids match exactly)`);
    if (registered.manifest.activation !== "opt-in") {
      throw configError(`cannot enable capability "${id}": it is ${registered.manifest.activation}, and only opt-in capabilities are enabled by id`);
    }
    this.#enabled.add(id);
  }

  disable(id: string): void {
    this.#enabled.delete(id);
  }

  list(options: ListOptions = {}): CapabilityListing[] {
    return [...this.#capabilities.values()].sort(byName((entry) => entry.manifest.id)).map(({ manifest }) => {
      const active = this.isActive(manifest.id);
      const listing: CapabilityListing = {
        id: manifest.id,
        version: manifest.version,
        trust_boundary: manifest.trust_boundary,
        activation: manifest.activation,
        active,
        status: active ? "active" : "not_enabled",
        operations: manifest.operations.map(({ name, mutating, description }) => ({ name, mutating, description })),
        worker_digest: manifest.worker_digest ?? null,
      };
      if (options.hostReports !== undefined) listing.readiness = computeReadiness(manifest, options.hostReports, options.readiness);
      return listing;
    });
  }

  activeOperations(): OperationResolution[] {
    const result: OperationResolution[] = [];
    for (const owned of this.#operations.values()) {
      const registered = this.#capabilities.get(owned.capability);
      if (registered !== undefined && this.isActive(registered.manifest.id)) {
        result.push({ manifest: registered.manifest, operation: owned.operation, adapter: registered.adapter, source: registered.source });
      }
    }
    return result.sort(byName((entry) => entry.operation.name));
  }

  health(hostReports: readonly HostReport[], options: ReadinessOptions = {}): CapabilityHealthSummary {
    const entries = [...this.#capabilities.values()]
      .filter((entry) => this.isActive(entry.manifest.id))
      .sort(byName((entry) => entry.manifest.id))
      .map(({ manifest }) => ({ manifest, readiness: computeReadiness(manifest, hostReports, options) }));
    return summariseCapabilityHealth(entries);
  }
}

/**
 * Builds a registry from built-ins and the given manifests, then applies the
 * enabled set. Throws `CONFIG_INVALID` at the first problem.
 */
export function createCapabilityRegistry(options: CapabilityRegistryOptions = {}): CapabilityRegistry {
  const registry = new Registry(options.adapters ?? builtinAdapterRegistry());
  // Built-in bundle capabilities are pinned to the bundle this hub ships (worker-pins.ts).
  if (options.includeBuiltins ?? true) for (const source of pinShippedBundles(BUILTIN_MANIFESTS, options.shippedBundles)) registry.register(source);
  for (const source of options.manifests ?? []) registry.register(source);
  for (const id of options.enabled ?? []) registry.enable(id);
  return registry;
}

/**
 * Reads every `*.json` file of a directory (not recursive) as a manifest
 * source, sorted by file name. Each must be a regular file (symlinks are
 * refused), at most `MANIFEST_LIMITS.maxFileBytes`, and named `<id>.json` so a
 * file's name says what it declares.
 */
export async function readManifestDirectory(directory: string): Promise<ManifestSource[]> {
  let names: string[];
  try {
    names = (await readdir(directory)).filter((name) => name.endsWith(".json")).sort();
  } catch (error) {
    throw configError(`capability manifest directory ${directory} cannot be read: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
  }
  const sources: ManifestSource[] = [];
  for (const name of names) {
    const path = join(directory, name);
    const stat = await lstat(path);
    if (!stat.isFile()) throw configError(`capability manifest ${path} is not a regular file (symlinks are refused)`);
    if (stat.size > MANIFEST_LIMITS.maxFileBytes) throw configError(`capability manifest ${path} is larger than ${MANIFEST_LIMITS.maxFileBytes} bytes`);
    const manifest = parseManifestText(await readFile(path, "utf8"), path);
    if (`${manifest.id}.json` !== name) throw configError(`capability manifest ${path} declares id "${manifest.id}"; name the file ${manifest.id}.json`);
    sources.push({ source: path, manifest });
  }
  return sources;
}

export interface LoadCapabilityRegistryOptions extends CapabilityRegistryOptions {
  /** A directory of extra `<id>.json` manifests. */
  manifestDirectory?: string;
}

/** Start-up entry point: built-ins + a manifest directory + runtime objects + enabled ids. */
export async function loadCapabilityRegistry(options: LoadCapabilityRegistryOptions = {}): Promise<CapabilityRegistry> {
  const fromDirectory = options.manifestDirectory === undefined ? [] : await readManifestDirectory(options.manifestDirectory);
  return createCapabilityRegistry({ ...options, manifests: [...fromDirectory, ...(options.manifests ?? [])] });
}
