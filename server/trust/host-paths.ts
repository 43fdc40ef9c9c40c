/**
 * Host paths and their snapshots, as both sides spell them
 * (docs/design.md#ceiling, docs/design.md#sandbox).
 *
 * A host's ceiling may name host directories under a label with a maximum
 * mode (`logs: /var/log ro`, `app: /srv/app rw`). A compiled policy asks for
 * labels by name (`CompiledMount`); the guest binds each at `/host/<label>`
 * in the lease's mount namespace, read-only unless the job was given "rw".
 * Before a job that writes a label, the guest snapshots the label's tree; a
 * `rollback` job restores one snapshot byte for byte. The zod schemas here
 * are what the guest's ceiling loader, the guest's health report and the
 * hub's health intake all parse with.
 */
import { z } from "zod";

/** A label: lower case, starts with a letter, at most 32 characters. */
export const HOST_PATH_LABEL_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
export const MAX_HOST_PATHS = 32;
/** The health report lists at most this many snapshots, most recent first. */
export const MAX_REPORTED_SNAPSHOTS = 256;
/** Where a label appears inside the lease. */
export const HOST_PATH_MOUNT_DIR = "/host";

export const HostPathLabel = z.string().regex(HOST_PATH_LABEL_PATTERN, { message: "must match ^[a-z][a-z0-9_-]{0,31}$" });
export const HostPathMode = z.enum(["ro", "rw"]);
export type HostPathMode = z.infer<typeof HostPathMode>;

const absolutePath = z
  .string()
  .min(2)
  .max(4096)
  .refine((p) => !p.includes("\0") && p.startsWith("/") && !p.endsWith("/") && !p.split("/").slice(1).some((s) => s === "" || s === "." || s === ".."), {
    message: "must be a normalised absolute path other than / (no '.', '..', '//' or trailing '/')",
  });
const id = z.number().int().min(0).max(2 ** 32 - 2);
const treeDigest = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/**
 * One host path a ceiling lists. `owner`: the uid/gid files the job creates
 * or changes under a "rw" label belong to on the host (absent: the owner of
 * the path itself). `max_bytes` / `max_inodes`: the budget a "rw" label's
 * tree must fit to be digested and snapshotted (absent: the guest's default,
 * docs/design.md#ceiling).
 */
export const HostPathEntry = z
  .object({
    label: HostPathLabel,
    path: absolutePath,
    mode: HostPathMode,
    owner: z.object({ uid: id, gid: id }).strict().optional(),
    max_bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    max_inodes: z.number().int().min(1).max(2 ** 32 - 1).optional(),
  })
  .strict();
export type HostPathEntry = z.infer<typeof HostPathEntry>;

/** One retained snapshot of a label's tree, as the health report lists it. */
export const SnapshotSummary = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/),
    label: HostPathLabel,
    created_at: z.iso.datetime(),
    bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    files: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    tree_digest: treeDigest,
  })
  .strict();
export type SnapshotSummary = z.infer<typeof SnapshotSummary>;

/** The health report's `host_paths` and `snapshots` (docs/design.md#ceiling). */
export const HostPathsReport = z
  .object({
    host_paths: z.array(HostPathEntry).max(MAX_HOST_PATHS),
    snapshots: z.array(SnapshotSummary).max(MAX_REPORTED_SNAPSHOTS),
  })
  .strict();

/**
 * A label a compiled policy asks for. `path` is the ceiling's path for the
 * label as the hub last saw it in the host's health report; the guest
 * refuses a job whose path differs from its own ceiling's, so a job approved
 * against one directory never runs against another.
 */
export const CompiledMount = z.object({ label: HostPathLabel, path: absolutePath, mode: HostPathMode }).strict();
export type CompiledMount = z.infer<typeof CompiledMount>;

/** The `rollback` operation's arguments (a job operation of the built-in capability). */
export const ROLLBACK_OPERATION = "rollback";
export const RollbackArguments = z.object({ label: HostPathLabel, snapshot_id: SnapshotSummary.shape.id }).strict();
export type RollbackArguments = z.infer<typeof RollbackArguments>;

/** What evidence records for each bound label; digests and snapshot id only for "rw". */
export const EvidenceMount = z
  .object({
    label: HostPathLabel,
    path: absolutePath,
    mode: HostPathMode,
    tree_before: treeDigest.optional(),
    tree_after: treeDigest.optional(),
    snapshot_id: SnapshotSummary.shape.id.optional(),
  })
  .strict();
export type EvidenceMount = z.infer<typeof EvidenceMount>;
