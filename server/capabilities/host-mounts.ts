/**
 * Host paths an action asks for (docs/design.md#host-paths): the `mounts`
 * argument and `label:` paths, normalised, then compiled against the host
 * ceiling's `host_paths` as the host's guest last reported them.
 *
 * Nothing is clamped here, as with every ceiling field: `rw` on a label the
 * host lists `ro`, or any mount on a host that reports no host paths, is
 * POLICY_REFUSED naming the label; a label the host does not list is a bad
 * argument, INVALID_ARGUMENT naming the field (`checkLabelsListed`, which the
 * pipeline runs first; `compileMounts` refuses it too). The hub's check
 * is a courtesy that answers before anything is held or run; the guest
 * checks the signed policy again against its own ceiling file, which is
 * what counts.
 */
import { LeaseholdError } from "../errors/index";
import { HOST_PATH_LABEL_PATTERN, MAX_HOST_PATHS, type CompiledMount, type HostPathEntry, type HostPathMode, type SnapshotSummary } from "../trust/host-paths";

export type { CompiledMount, HostPathEntry };
export type MountMode = HostPathMode;
/** One label as an action asks for it (prepared arguments). */
export interface MountRequest {
  label: string;
  mode: MountMode;
}
/** A ceiling entry the way the hub needs it: label, path, maximum mode. */
export type HostPathCeiling = Pick<HostPathEntry, "label" | "path" | "mode">;

/** At most this many labels per action: the ceiling lists at most as many. */
export const MAX_MOUNTS = MAX_HOST_PATHS;

function invalidArgument(field: string, message: string): never {
  throw new LeaseholdError("INVALID_ARGUMENT", `${field}: ${message} (refused by a hub check)`, { tier: "hub", details: { path: `/${field}` } });
}

function refused(message: string, label: string, hint: string, details: Record<string, unknown> = {}): never {
  throw new LeaseholdError("POLICY_REFUSED", `${message} (refused by a hub policy check)`, { tier: "hub", hint, details: { field: "mounts", label, ...details } });
}

function higher(a: MountMode, b: MountMode): MountMode {
  return a === "rw" || b === "rw" ? "rw" : "ro";
}

/**
 * `mounts` as the caller wrote it (`"logs"` or `{label, mode}`), plus the
 * labels a `label:` path implies, as one list sorted by label. A label the
 * caller lists twice is refused (which mode was meant?); a label both listed
 * and implied by a path gets the higher of the two modes, since the path's
 * operation needs it. Empty means no host paths.
 */
export function normaliseMounts(value: unknown, implied: readonly MountRequest[] = []): MountRequest[] {
  const byLabel = new Map<string, MountMode>();
  if (value !== undefined) {
    if (!Array.isArray(value)) invalidArgument("mounts", "must be a list");
    if (value.length > MAX_MOUNTS) invalidArgument("mounts", `lists more than ${MAX_MOUNTS} labels`);
    for (const entry of value as unknown[]) {
      const request: Partial<MountRequest> = typeof entry === "string" ? { label: entry, mode: "ro" } : ((entry ?? {}) as Partial<MountRequest>);
      const { label, mode } = request;
      if (typeof label !== "string" || !HOST_PATH_LABEL_PATTERN.test(label)) invalidArgument("mounts", `${JSON.stringify(label)} is not a host path label (${HOST_PATH_LABEL_PATTERN.source})`);
      if (mode !== "ro" && mode !== "rw") invalidArgument("mounts", `mode of ${label} must be "ro" or "rw"`);
      if (byLabel.has(label)) invalidArgument("mounts", `lists label ${label} twice`);
      byLabel.set(label, mode);
    }
  }
  for (const { label, mode } of implied) byLabel.set(label, higher(byLabel.get(label) ?? "ro", mode));
  return [...byLabel.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([label, mode]) => ({ label, mode }));
}

/** A label path split: `{label: "logs", relative: "nginx/access.log"}`; `label` null for a workspace path. */
export interface SplitPath {
  label: string | null;
  /** The rest, still to be normalised as a relative path. */
  relative: string;
}

/**
 * Splits `label:relative/path`. A first segment that contains ':' is a label
 * path and must be a well-formed one — never silently a workspace file name
 * (a workspace file whose first segment contains ':' is written `./name`).
 */
export function splitLabelPath(field: string, value: unknown): SplitPath {
  if (typeof value !== "string") invalidArgument(field, "must be a string");
  const firstSegment = value.split("/")[0] ?? "";
  const colon = firstSegment.indexOf(":");
  if (colon < 0) return { label: null, relative: value };
  const label = firstSegment.slice(0, colon);
  if (!HOST_PATH_LABEL_PATTERN.test(label)) {
    invalidArgument(field, `${JSON.stringify(label)} before ':' is not a host path label (${HOST_PATH_LABEL_PATTERN.source}); write ./${firstSegment} for a workspace file of that name`);
  }
  return { label, relative: value.slice(colon + 1) };
}

/** Which argument named `label`: `mounts` when the caller listed it there, else the first `label:` path argument. */
function fieldNaming(label: string, args: Record<string, unknown>): string {
  const listed = Array.isArray(args["mounts"]) ? (args["mounts"] as unknown[]) : [];
  if (listed.some((entry) => entry === label || (typeof entry === "object" && entry !== null && (entry as { label?: unknown }).label === label))) return "mounts";
  for (const [name, value] of Object.entries(args)) {
    if (name !== "mounts" && typeof value === "string" && value.startsWith(`${label}:`)) return name;
  }
  return "mounts";
}

/**
 * An argument the guest will certainly refuse, refused first (docs/design.md#prechecks):
 * a label the host's ceiling does not list is INVALID_ARGUMENT naming the
 * argument that asked for it (`mounts`, or the `label:` path), before
 * anything is held for a person. Certain because the labels come from the
 * ceiling the guest reported and checks again; a host that reports no host
 * paths at all (`null`) is left to `compileMounts`, which refuses every
 * mount there as policy.
 */
export function checkLabelsListed(host: string, requested: readonly MountRequest[], args: Record<string, unknown>, hostPaths: readonly HostPathCeiling[] | null): void {
  if (hostPaths === null) return;
  for (const { label } of requested) {
    if (hostPaths.some((entry) => entry.label === label)) continue;
    const field = fieldNaming(label, args);
    throw new LeaseholdError("INVALID_ARGUMENT", `${field}: host ${host}'s ceiling lists no host path labelled ${label} (refused by a hub check)`, {
      tier: "hub",
      hint: `hosts_list shows the labels host ${host} lists`,
      details: { field, path: `/${field}`, label, listed: hostPaths.map((entry) => entry.label) },
    });
  }
}

/**
 * The signed policy's `mounts`: each requested label with the ceiling's path,
 * sorted by label. `hostPaths` null means the host's last health report
 * listed no host paths at all (an older guest, or a ceiling without any).
 * `mutating` false (fs_read, fs_list): a rw label is refused, since the
 * operation cannot use it and it would be writable under a read-only lease.
 */
export function compileMounts(input: { host: string; operation: string; mutating: boolean; requested: readonly MountRequest[]; hostPaths: readonly HostPathCeiling[] | null }): CompiledMount[] {
  const { host, operation, requested, hostPaths } = input;
  const mounts: CompiledMount[] = [];
  for (const { label, mode } of requested) {
    if (hostPaths === null) {
      refused(`host ${host} reports no host paths; label ${label} cannot be mounted`, label, "an operator lists host paths in the host's ceiling file (host_paths); hosts_list shows what a host reports");
    }
    const entry = hostPaths.find((candidate) => candidate.label === label);
    if (entry === undefined) {
      refused(`host ${host}'s ceiling lists no host path labelled ${label}`, label, `hosts_list shows the labels host ${host} lists`, { listed: hostPaths.map((candidate) => candidate.label) });
    }
    if (mode === "rw" && entry.mode !== "rw") {
      refused(`host ${host}'s ceiling lists ${label} (${entry.path}) read-only; rw is refused, not narrowed`, label, `ask for ${label} read-only, or have the operator list it rw in the host's ceiling`, { requested: "rw", allowed: entry.mode });
    }
    if (mode === "rw" && !input.mutating) {
      refused(`${operation} is read-only; it cannot take ${label} read-write`, label, `list ${label} read-only for ${operation}`, { requested: "rw", allowed: "ro" });
    }
    mounts.push({ label, path: entry.path, mode });
  }
  return mounts.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}

/** A snapshot as the hub needs it to check a reference: id and label. */
export type SnapshotReference = Pick<SnapshotSummary, "id" | "label">;

/**
 * An action that names a `snapshot_id` (rollback) must name one the host
 * last reported for that `label`; otherwise NOT_FOUND at the hub, before
 * anything is held for a person. The guest checks again against its own
 * snapshot store, which is what counts.
 */
export function checkSnapshotReference(host: string, prepared: Record<string, unknown>, snapshots: readonly SnapshotReference[]): void {
  const id = prepared["snapshot_id"];
  if (id === undefined) return;
  const label = prepared["label"];
  if (typeof id !== "string" || typeof label !== "string" || !snapshots.some((snapshot) => snapshot.id === id && snapshot.label === label)) {
    throw new LeaseholdError("NOT_FOUND", `host ${host} reported no snapshot ${JSON.stringify(id)} of label ${JSON.stringify(label)} (refused by a hub check)`, {
      tier: "hub",
      hint: `hosts_list (or leasehold snapshot list --host ${host}) shows the snapshots host ${host} keeps`,
      details: { field: "snapshot_id", label, snapshot_id: id },
    });
  }
}
