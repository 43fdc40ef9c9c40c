/**
 * The guest's snapshot store (docs/design.md#snapshots): a record of an
 * "rw" label's tree taken before a job may change it, restored byte for
 * byte by a `rollback` job, and pruned by count, age and bytes.
 *
 * Layout, under the guest's state directory (root-only, outside every
 * workspace and every host path): `<store>/<id>/manifest.json` (the entries
 * in walk order, tree.ts, each regular file naming its content by sha256)
 * and `summary.json`; the bytes in `<store>/blobs/` (blobs.ts), stored once
 * whatever number of snapshots name them. A snapshot's manifest is built in
 * `.tmp-<id>` and renamed into place only when every blob it names is
 * stored, so a listing never shows half of one and a manifest never names a
 * blob not yet written.
 *
 * Known stamps (`<store>/known/<label>.json`): the stamps, and the blobs,
 * of the label's tree as the digest after its last job (or its last
 * restore) found it, so the next snapshot takes every file the job changed
 * by its `lstat` too. Pruning marks the blobs every manifest and every
 * known-stamps file names and sweeps the rest.
 *
 * Every store operation is synchronous and the guest is the store's only
 * writer, so no sweep runs while a blob or manifest is half-written.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { HostPathLabel, LeaseholdError, SnapshotSummary } from "../../server/trust";
import { adoptBlob, blobPath, blobsDir, storeBlob, sweepBlobs, type CopyMethod, type SweepSeam } from "./blobs";
import { openDirNoFollow, treeDigest, walkTree, type TreeBudget, type TreeEntry, type WalkHooks } from "./tree";

export { writeAll, type CopyMethod } from "./blobs";

const MANIFEST_SCHEMA = "leasehold.snapshot/2";
const MANIFEST_SCHEMA_V1 = "leasehold.snapshot/1";
const KNOWN_SCHEMA = "leasehold.known-stamps/1";
const SHA256 = z.string().regex(/^[0-9a-f]{64}$/);

const EntryFields = {
  path: z.string().max(4096),
  type: z.enum(["file", "directory", "symlink", "fifo", "socket", "char_device", "block_device"]),
  mode: z.number().int().min(0).max(0o7777),
  uid: z.number().int().min(0),
  gid: z.number().int().min(0),
  size: z.number().int().min(0),
  sha256: SHA256.optional(),
  target: z.string().max(4096).optional(),
  rdev: z.number().int().min(0).optional(),
  stamp: z.string().max(128).optional(),
};
/** A regular file's entry names its blob by `sha256`. */
const Entry = z.object(EntryFields).strict();
export type ManifestEntry = z.infer<typeof Entry>;

const Header = {
  id: SnapshotSummary.shape.id,
  label: SnapshotSummary.shape.label,
  path: z.string(),
  created_at: z.iso.datetime(),
  bytes: z.number().int().min(0),
  files: z.number().int().min(0),
  tree_digest: SnapshotSummary.shape.tree_digest,
  method: z.enum(["reflink", "copy"]),
};
const Manifest = z.object({ schema: z.literal(MANIFEST_SCHEMA), ...Header, entries: z.array(Entry) }).strict();
export type SnapshotManifest = z.infer<typeof Manifest>;

/** A `leasehold.snapshot/1` manifest: its own `data/<n>` per regular file. Read only to migrate it. */
const ManifestV1 = z.object({ schema: z.literal(MANIFEST_SCHEMA_V1), ...Header, entries: z.array(z.object({ ...EntryFields, data: z.number().int().min(0).optional() }).strict()) }).strict();

/**
 * `summary.json` beside each manifest: what a listing needs (the manifest's
 * header without its entries), so listing and finding a label's newest
 * snapshot read a few hundred bytes per snapshot, not every entry.
 */
const Summary = z.object(Header).strict();
type StoredSummary = z.infer<typeof Summary>;

const Known = z
  .object({
    schema: z.literal(KNOWN_SCHEMA),
    label: HostPathLabel,
    path: z.string(),
    files: z.array(z.tuple([z.string().max(128), SHA256])),
  })
  .strict();

/** How many snapshots are kept: per label by count, all by age and total bytes (docs/design.md#snapshots). */
export interface Retention {
  keep_per_label: number;
  max_age_s: number;
  max_bytes: number;
}
export const DEFAULT_RETENTION: Readonly<Retention> = Object.freeze({ keep_per_label: 10, max_age_s: 30 * 24 * 3600, max_bytes: 16 * 1024 ** 3 });

/** The store's own directories beside the snapshots' (an id's pattern would admit their names). */
const STORE_DIRS = new Set(["blobs", "known", "restoring"]);
const isSnapshotName = (name: string) => !STORE_DIRS.has(name) && SnapshotSummary.shape.id.safeParse(name).success;

const reflinkByStore = new Map<string, boolean>();

/** Whether the store's file system clones files (FICLONE), tried once on two scratch files. */
export function storeReflinks(store: string): boolean {
  const known = reflinkByStore.get(store);
  if (known !== undefined) return known;
  const a = path.join(store, `.probe-${randomBytes(4).toString("hex")}`);
  let ok: boolean;
  try {
    fs.writeFileSync(a, "x", { mode: 0o600, flag: "wx" });
    fs.copyFileSync(a, `${a}.clone`, fs.constants.COPYFILE_FICLONE_FORCE);
    ok = true;
  } catch {
    ok = false;
  } finally {
    fs.rmSync(a, { force: true });
    fs.rmSync(`${a}.clone`, { force: true });
  }
  reflinkByStore.set(store, ok);
  return ok;
}

/** Opens (creating, mode 0700, root-owned) the store directory and its blob directory. */
export function ensureStore(store: string): void {
  for (const dir of [store, blobsDir(store)]) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = fs.lstatSync(dir);
    if (!st.isDirectory() || (st.mode & 0o077) !== 0 || st.uid !== (process.geteuid?.() ?? st.uid)) {
      throw new LeaseholdError("CONFIG_INVALID", `snapshot store ${dir} must be a directory of this user, mode 0700`, { tier: "guest" });
    }
  }
  migrateOnce(store);
}

export interface Migration {
  /** `leasehold.snapshot/1` snapshots whose bytes became blobs and whose manifest was rewritten */
  migrated: string[];
  /** v1 snapshots removed: a stored file did not hash to what its manifest says (it could not be restored byte for byte) */
  dropped: string[];
}

const migratedStores = new Set<string>();

/**
 * Turns every `leasehold.snapshot/1` snapshot into a v2 one, once per store
 * and process: each `data/<n>` linked as the blob of its entry's sha256
 * (after checking it hashes to it), then the manifest rewritten by rename,
 * then `data/` removed. A guest killed half-way leaves either the v1
 * manifest (the next start migrates it again: links already made are
 * found) or the v2 one beside a `data/` the next start removes.
 */
export function migrateStore(store: string): Migration {
  const out: Migration = { migrated: [], dropped: [] };
  if (!fs.existsSync(store)) return out;
  for (const id of fs.readdirSync(store)) {
    if (!isSnapshotName(id)) continue;
    const dir = path.join(store, id);
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
    } catch {
      continue;
    }
    const v1 = ManifestV1.safeParse(raw);
    if (!v1.success) {
      if (Manifest.safeParse(raw).success) fs.rmSync(path.join(dir, "data"), { recursive: true, force: true });
      continue;
    }
    fs.mkdirSync(blobsDir(store), { recursive: true, mode: 0o700 });
    const whole = v1.data.entries.every((e) => e.type !== "file" || (e.sha256 !== undefined && e.data !== undefined && adoptBlob(store, path.join(dir, "data", String(e.data)), e.sha256)));
    if (!whole) {
      fs.rmSync(dir, { recursive: true, force: true });
      out.dropped.push(id);
      continue;
    }
    const manifest: SnapshotManifest = { ...v1.data, schema: MANIFEST_SCHEMA, entries: v1.data.entries.map(({ data: _data, ...e }) => e) };
    const tmp = path.join(dir, `.manifest-${randomBytes(4).toString("hex")}`);
    fs.writeFileSync(tmp, JSON.stringify(manifest), { mode: 0o600, flag: "wx" });
    fs.renameSync(tmp, path.join(dir, "manifest.json"));
    fs.rmSync(path.join(dir, "data"), { recursive: true, force: true });
    out.migrated.push(id);
  }
  migratedStores.add(store);
  return out;
}

/** `migrateStore` once per store and process (the daemon runs it at start; a store made by this code has nothing to migrate). */
function migrateOnce(store: string): void {
  if (!migratedStores.has(store)) migrateStore(store);
}

export function newSnapshotId(now = Date.now()): string {
  return `s${now.toString(36)}-${randomBytes(4).toString("hex")}`;
}

const methodOf = (store: string): CopyMethod => (storeReflinks(store) ? "reflink" : "copy");

/** Snapshots the tree at `hostPath` (opened without following links) into the store. */
export function takeSnapshot(store: string, label: string, hostPath: string, budget: TreeBudget, now = new Date(), seam: Pick<WalkHooks, "beforeOpen"> = {}): SnapshotManifest {
  ensureStore(store);
  const method = methodOf(store);
  const id = newSnapshotId(now.getTime());
  const tmp = path.join(store, `.tmp-${id}`);
  fs.mkdirSync(tmp, { mode: 0o700 });
  const known = knownStamps(store, label, hostPath);
  const created: string[] = [];
  const rootFd = openDirNoFollow(hostPath);
  try {
    const tree = walkTree(rootFd, budget, {
      ...seam,
      // Unchanged since the label's last snapshot, job or restore (same stamp): its blob is stored
      // already, named by a manifest or a known-stamps file pruning keeps, and the live file is not opened.
      known: (entry) => (entry.stamp === undefined ? undefined : known.get(entry.stamp)),
      file: (_entry, fd) => storeBlob(store, fd, method, created),
    });
    const manifest: SnapshotManifest = {
      schema: MANIFEST_SCHEMA,
      id,
      label,
      path: hostPath,
      created_at: now.toISOString(),
      bytes: tree.bytes,
      files: tree.files,
      tree_digest: tree.digest,
      method,
      entries: tree.entries,
    };
    fs.writeFileSync(path.join(tmp, "manifest.json"), JSON.stringify(manifest), { mode: 0o600, flag: "wx" });
    const { schema: _schema, entries: _entries, ...summary } = manifest;
    fs.writeFileSync(path.join(tmp, "summary.json"), JSON.stringify(summary satisfies StoredSummary), { mode: 0o600, flag: "wx" });
    fs.renameSync(tmp, path.join(store, id));
    // Every stamp it held is in this manifest now, for every file the tree still has.
    fs.rmSync(knownPath(store, label), { force: true });
    return manifest;
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    dropCreated(store, created);
    throw error;
  } finally {
    fs.closeSync(rootFd);
  }
}

/**
 * A failed snapshot or digest keeps nothing: the blobs it stored new (no
 * manifest or known-stamps file can name them yet) go with it. A guest
 * killed instead leaves them to the next sweep.
 */
function dropCreated(store: string, created: readonly string[]): void {
  for (const sha of created) fs.rmSync(blobPath(store, sha), { force: true });
}

const knownPath = (store: string, label: string) => {
  if (!HostPathLabel.safeParse(label).success) throw new LeaseholdError("INVALID_ARGUMENT", `host path label ${JSON.stringify(label)} is malformed`, { tier: "guest" });
  return path.join(store, "known", `${label}.json`);
};

function readKnown(store: string, label: string): z.infer<typeof Known> | undefined {
  let text: string;
  try {
    text = fs.readFileSync(knownPath(store, label), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const parsed = Known.safeParse(JSON.parse(text));
  return parsed.success && parsed.data.label === label ? parsed.data : undefined;
}

/**
 * Records the stamps of `entries` (a walk of the label's tree) whose bytes
 * are stored as blobs, for the label's next snapshot. Written by rename.
 */
export function writeKnownStamps(store: string, label: string, hostPath: string, entries: readonly TreeEntry[]): void {
  const files = entries.flatMap((e): Array<[string, string]> => (e.stamp !== undefined && e.sha256 !== undefined ? [[e.stamp, e.sha256]] : []));
  const file = knownPath(store, label);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp-${randomBytes(4).toString("hex")}`;
  fs.writeFileSync(tmp, JSON.stringify({ schema: KNOWN_SCHEMA, label, path: hostPath, files } satisfies z.infer<typeof Known>), { mode: 0o600, flag: "wx" });
  fs.renameSync(tmp, file);
}

/** Stamp → sha256 of every file whose blob is stored: the label's newest snapshot of this path and its known-stamps file. */
function knownStamps(store: string, label: string, hostPath: string): Map<string, string> {
  const out = new Map<string, string>();
  const newest = storedSummaries(store).find((s) => s.label === label);
  if (newest !== undefined && newest.path === hostPath) {
    const m = readManifest(store, newest.id);
    if (m.path === hostPath) for (const e of m.entries) if (e.stamp !== undefined && e.sha256 !== undefined) out.set(e.stamp, e.sha256);
  }
  const k = readKnown(store, label);
  if (k !== undefined && k.path === hostPath) for (const [stamp, sha] of k.files) out.set(stamp, sha);
  return out;
}

/**
 * The tree digest after a job (docs/design.md#snapshots): files whose stamp
 * the snapshot before it hashed are not read; every other file is read
 * once, its bytes stored as a blob on the way and its stamp recorded, so
 * the label's next snapshot reads none of them. Bounded by the label's budget.
 */
export function digestAfterJob(store: string, label: string, hostPath: string, budget: TreeBudget, before: readonly TreeEntry[]): `sha256:${string}` {
  ensureStore(store);
  const method = methodOf(store);
  const byStamp = new Map<string, string>();
  for (const e of before) if (e.stamp !== undefined && e.sha256 !== undefined) byStamp.set(e.stamp, e.sha256);
  const created: string[] = [];
  const fd = openDirNoFollow(hostPath);
  try {
    const tree = walkTree(fd, budget, {
      known: (entry) => (entry.stamp === undefined ? undefined : byStamp.get(entry.stamp)),
      file: (_entry, fileFd) => storeBlob(store, fileFd, method, created),
    });
    writeKnownStamps(store, label, hostPath, tree.entries);
    return tree.digest;
  } catch (error) {
    dropCreated(store, created);
    throw error;
  } finally {
    fs.closeSync(fd);
  }
}

function parseManifest(store: string, id: string): SnapshotManifest {
  let text: string;
  try {
    text = fs.readFileSync(path.join(store, id, "manifest.json"), "utf8");
  } catch {
    throw new LeaseholdError("NOT_FOUND", `snapshot ${id} is not held by this guest (pruned, or never taken here)`, { tier: "guest", details: { snapshot_id: id } });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    raw = undefined;
  }
  const parsed = Manifest.safeParse(raw);
  if (!parsed.success) throw new LeaseholdError("INTERNAL", `snapshot ${id}: manifest unreadable`, { tier: "guest" });
  return parsed.data;
}

export function readManifest(store: string, id: string): SnapshotManifest {
  if (!SnapshotSummary.shape.id.safeParse(id).success) throw new LeaseholdError("INVALID_ARGUMENT", `snapshot id ${JSON.stringify(id)} is malformed`, { tier: "guest" });
  migrateOnce(store);
  return parseManifest(store, id);
}

/** One snapshot's summary: its `summary.json`, or its manifest's header for a snapshot stored without one. */
function readSummary(store: string, id: string): StoredSummary {
  let text: string;
  try {
    text = fs.readFileSync(path.join(store, id, "summary.json"), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    const { schema: _schema, entries: _entries, ...header } = parseManifest(store, id);
    return header;
  }
  const parsed = Summary.safeParse(JSON.parse(text));
  if (!parsed.success || parsed.data.id !== id) throw new LeaseholdError("INTERNAL", `snapshot ${id}: summary unreadable`, { tier: "guest" });
  return parsed.data;
}

/** Every complete snapshot's summary, most recent first. */
function storedSummaries(store: string): StoredSummary[] {
  if (!fs.existsSync(store)) return [];
  const out: StoredSummary[] = [];
  for (const name of fs.readdirSync(store)) {
    if (!isSnapshotName(name)) continue;
    try {
      out.push(readSummary(store, name));
    } catch {
      // A directory that is not a complete snapshot is not listed.
    }
  }
  return out.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1));
}

/** Retained snapshots, most recent first. */
export function listSnapshots(store: string): SnapshotSummary[] {
  return storedSummaries(store).map((s) => ({ id: s.id, label: s.label, created_at: s.created_at, bytes: s.bytes, files: s.files, tree_digest: s.tree_digest }));
}

/** The id of the newest retained snapshot of `label` taken of `hostPath`, if any. */
export function newestSnapshotOf(store: string, label: string, hostPath: string): string | undefined {
  return storedSummaries(store).find((s) => s.label === label && s.path === hostPath)?.id;
}

/**
 * Removes snapshots a previous run left half-built (`.tmp-<id>`, never
 * listed) and the blobs no manifest names (a snapshot killed after storing
 * some). Before the first job. Returns how many snapshots.
 */
export function sweepPartialSnapshots(store: string): number {
  if (!fs.existsSync(store)) return 0;
  let n = 0;
  for (const name of fs.readdirSync(store)) {
    if (!name.startsWith(".tmp-")) continue;
    fs.rmSync(path.join(store, name), { recursive: true, force: true });
    n++;
  }
  sweepUnnamed(store);
  return n;
}

/** The blob sizes a manifest names, by sha256 (a blob named twice counted once). */
function blobSizes(m: SnapshotManifest): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of m.entries) if (e.sha256 !== undefined) out.set(e.sha256, e.size);
  return out;
}

/**
 * Every blob a manifest or a known-stamps file in the store names; null
 * when one of them cannot be read (then nothing may be swept: its blobs
 * are not known).
 */
function namedBlobs(store: string): Set<string> | null {
  migrateOnce(store);
  const named = new Set<string>();
  for (const name of fs.readdirSync(store)) {
    if (!isSnapshotName(name)) continue;
    try {
      for (const sha of blobSizes(parseManifest(store, name)).keys()) named.add(sha);
    } catch {
      return null;
    }
  }
  const knownDir = path.join(store, "known");
  for (const name of fs.existsSync(knownDir) ? fs.readdirSync(knownDir) : []) {
    if (!name.endsWith(".json")) continue;
    const k = readKnown(store, name.slice(0, -".json".length));
    if (k === undefined) return null;
    for (const [, sha] of k.files) named.add(sha);
  }
  return named;
}

/** Sweeps the blobs nothing names; nothing when a manifest or known-stamps file is unreadable. */
function sweepUnnamed(store: string, seam: SweepSeam = {}): number {
  const named = namedBlobs(store);
  return named === null ? 0 : sweepBlobs(store, named, seam);
}

export interface PruneSeam extends SweepSeam {
  /** A test seam: called after each snapshot's manifest is removed, before the blobs are swept. */
  afterRemove?: (id: string) => void;
}

/**
 * Removes snapshots beyond the retention; returns the ids removed. The
 * newest of each label is always kept; `max_bytes` counts each blob once.
 * Manifests go first (each by one rename out of the listing, then removed),
 * then every blob no remaining manifest or known-stamps file names: a guest
 * killed anywhere in between leaves blobs the next prune sweeps, never a
 * manifest naming a missing blob.
 */
export function pruneSnapshots(store: string, retention: Retention, now = new Date(), seam: PruneSeam = {}): string[] {
  if (!fs.existsSync(store)) return [];
  migrateOnce(store);
  const removed: string[] = [];
  const perLabel = new Map<string, number>();
  const counted = new Set<string>();
  let bytes = 0;
  for (const s of storedSummaries(store)) {
    const rank = (perLabel.get(s.label) ?? 0) + 1;
    perLabel.set(s.label, rank);
    let adds = s.bytes;
    let sizes: Map<string, number> | undefined;
    try {
      sizes = blobSizes(parseManifest(store, s.id));
      adds = 0;
      for (const [sha, size] of sizes) if (!counted.has(sha)) adds += size;
    } catch {
      // Its manifest unreadable: counted at its tree's bytes (the sweep below keeps every blob).
    }
    const old = now.getTime() - Date.parse(s.created_at) > retention.max_age_s * 1000;
    const over = rank > retention.keep_per_label || (rank > 1 && (old || bytes + adds > retention.max_bytes));
    if (over) {
      removed.push(s.id);
    } else {
      bytes += adds;
      for (const sha of sizes?.keys() ?? []) counted.add(sha);
    }
  }
  for (const id of removed) {
    const gone = path.join(store, `.gone-${id}`);
    fs.renameSync(path.join(store, id), gone);
    fs.rmSync(gone, { recursive: true, force: true });
    seam.afterRemove?.(id);
  }
  // Removals a killed prune left half-done.
  for (const name of fs.readdirSync(store)) if (name.startsWith(".gone-")) fs.rmSync(path.join(store, name), { recursive: true, force: true });
  sweepUnnamed(store, seam);
  return removed;
}

/** The digest of a manifest's own entries (a stored snapshot checked against its recorded digest). */
export function manifestDigest(m: SnapshotManifest): `sha256:${string}` {
  return treeDigest(m.entries as TreeEntry[]);
}

/** The snapshot's entries as a walk's `known` hook: stamps whose bytes it hashed. */
export function manifestEntries(m: SnapshotManifest): TreeEntry[] {
  return m.entries as TreeEntry[];
}
