/**
 * The guest's snapshot store (docs/design.md#snapshots): a copy of an "rw"
 * label's tree taken before a job may change it, restored byte for byte by
 * a `rollback` job, and pruned by count, age and bytes.
 *
 * Layout, under the guest's state directory (root-only, outside every
 * workspace and every host path): `<store>/<id>/manifest.json` (the entries
 * in walk order, tree.ts) and `<store>/<id>/data/<n>` (the n-th regular
 * file's bytes). A snapshot is built in `.tmp-<id>` and renamed into place
 * only when complete, so a listing never shows half of one.
 *
 * Copying: FICLONE (reflink: shared extents, copy-on-write) when the store's
 * file system has it, probed once per store; else one bounded pass that
 * reads, hashes and writes each file. Either way the label's budget bounds
 * the walk before a byte is copied beyond it.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { LeaseholdError, SnapshotSummary } from "../../server/trust";
import { fdPath, hashFile, openDirNoFollow, treeDigest, walkTree, type TreeBudget, type TreeEntry, type WalkHooks } from "./tree";

const C = fs.constants;
const MANIFEST_SCHEMA = "leasehold.snapshot/1";

export type CopyMethod = "reflink" | "copy";

const Entry = z
  .object({
    path: z.string().max(4096),
    type: z.enum(["file", "directory", "symlink", "fifo", "socket", "char_device", "block_device"]),
    mode: z.number().int().min(0).max(0o7777),
    uid: z.number().int().min(0),
    gid: z.number().int().min(0),
    size: z.number().int().min(0),
    sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    target: z.string().max(4096).optional(),
    rdev: z.number().int().min(0).optional(),
    stamp: z.string().max(128).optional(),
    data: z.number().int().min(0).optional(),
  })
  .strict();
export type ManifestEntry = z.infer<typeof Entry>;

const Manifest = z
  .object({
    schema: z.literal(MANIFEST_SCHEMA),
    id: SnapshotSummary.shape.id,
    label: SnapshotSummary.shape.label,
    path: z.string(),
    created_at: z.iso.datetime(),
    bytes: z.number().int().min(0),
    files: z.number().int().min(0),
    tree_digest: SnapshotSummary.shape.tree_digest,
    method: z.enum(["reflink", "copy"]),
    entries: z.array(Entry),
  })
  .strict();
export type SnapshotManifest = z.infer<typeof Manifest>;

/**
 * `summary.json` beside each manifest: what a listing needs (the manifest's
 * header without its entries), so listing, pruning and finding a label's
 * newest snapshot read a few hundred bytes per snapshot, not every entry.
 */
const Summary = Manifest.omit({ schema: true, entries: true }).strict();
type StoredSummary = z.infer<typeof Summary>;

/** How many snapshots are kept: per label by count, all by age and total bytes (docs/design.md#snapshots). */
export interface Retention {
  keep_per_label: number;
  max_age_s: number;
  max_bytes: number;
}
export const DEFAULT_RETENTION: Readonly<Retention> = Object.freeze({ keep_per_label: 10, max_age_s: 30 * 24 * 3600, max_bytes: 16 * 1024 ** 3 });

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

/** Opens (creating, mode 0700, root-owned) the store directory. */
export function ensureStore(store: string): void {
  fs.mkdirSync(store, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(store);
  if (!st.isDirectory() || (st.mode & 0o077) !== 0 || st.uid !== (process.geteuid?.() ?? st.uid)) {
    throw new LeaseholdError("CONFIG_INVALID", `snapshot store ${store} must be a directory of this user, mode 0700`, { tier: "guest" });
  }
}

export function writeAll(fd: number, chunk: Buffer): void {
  let off = 0;
  while (off < chunk.length) off += fs.writeSync(fd, chunk, off, chunk.length - off);
}

/** Copies the open source file into `dest` (created), by reflink or by a read-hash-write pass; returns the sha256 hex. */
function copyInto(srcFd: number, dest: string, method: CopyMethod): string {
  if (method === "reflink") {
    // The source is reopened through its descriptor's magic link: the very inode held, no name looked up.
    fs.copyFileSync(fdPath(srcFd), dest, fs.constants.COPYFILE_FICLONE_FORCE);
    return hashFile(srcFd);
  }
  const out = fs.openSync(dest, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
  try {
    return hashFile(srcFd, (chunk) => writeAll(out, chunk));
  } finally {
    fs.closeSync(out);
  }
}

export function newSnapshotId(now = Date.now()): string {
  return `s${now.toString(36)}-${randomBytes(4).toString("hex")}`;
}

/** Snapshots the tree at `hostPath` (opened without following links) into the store. */
export function takeSnapshot(store: string, label: string, hostPath: string, budget: TreeBudget, now = new Date(), seam: Pick<WalkHooks, "beforeOpen"> = {}): SnapshotManifest {
  ensureStore(store);
  const method: CopyMethod = storeReflinks(store) ? "reflink" : "copy";
  const id = newSnapshotId(now.getTime());
  const tmp = path.join(store, `.tmp-${id}`);
  fs.mkdirSync(path.join(tmp, "data"), { recursive: true, mode: 0o700 });
  const previous = previousFiles(store, label, hostPath);
  const rootFd = openDirNoFollow(hostPath);
  try {
    let n = 0;
    const dataOf = new Map<string, number>();
    const tree = walkTree(rootFd, budget, {
      ...seam,
      // Unchanged since the label's last snapshot (same stamp): its stored bytes, which nothing
      // ever writes to, are linked instead of copied, and the live file is not even opened.
      known: (entry) => {
        const prior = entry.stamp === undefined ? undefined : previous.get(entry.stamp);
        if (prior === undefined) return undefined;
        try {
          fs.linkSync(prior.data, path.join(tmp, "data", String(n)));
        } catch {
          return undefined; // pruned meanwhile: copied from the live file instead
        }
        dataOf.set(entry.path, n++);
        return prior.sha256;
      },
      file: (entry, fd) => {
        const i = n++;
        dataOf.set(entry.path, i);
        return copyInto(fd, path.join(tmp, "data", String(i)), method);
      },
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
      entries: tree.entries.map((e) => ({ ...e, ...(dataOf.has(e.path) ? { data: dataOf.get(e.path) as number } : {}) })),
    };
    fs.writeFileSync(path.join(tmp, "manifest.json"), JSON.stringify(manifest), { mode: 0o600, flag: "wx" });
    const { schema: _schema, entries: _entries, ...summary } = manifest;
    fs.writeFileSync(path.join(tmp, "summary.json"), JSON.stringify(summary satisfies StoredSummary), { mode: 0o600, flag: "wx" });
    fs.renameSync(tmp, path.join(store, id));
    return manifest;
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw error;
  } finally {
    fs.closeSync(rootFd);
  }
}

/** The label's newest snapshot of this path: its files by stamp, with where their bytes are stored. */
function previousFiles(store: string, label: string, hostPath: string): Map<string, { sha256: string; data: string }> {
  const out = new Map<string, { sha256: string; data: string }>();
  const newest = storedSummaries(store).find((s) => s.label === label);
  if (newest === undefined || newest.path !== hostPath) return out;
  const m = readManifest(store, newest.id);
  if (m.path !== hostPath) return out;
  for (const e of m.entries) {
    if (e.stamp !== undefined && e.sha256 !== undefined && e.data !== undefined) out.set(e.stamp, { sha256: e.sha256, data: path.join(store, m.id, "data", String(e.data)) });
  }
  return out;
}

export function readManifest(store: string, id: string): SnapshotManifest {
  if (!SnapshotSummary.shape.id.safeParse(id).success) throw new LeaseholdError("INVALID_ARGUMENT", `snapshot id ${JSON.stringify(id)} is malformed`, { tier: "guest" });
  let text: string;
  try {
    text = fs.readFileSync(path.join(store, id, "manifest.json"), "utf8");
  } catch {
    throw new LeaseholdError("NOT_FOUND", `snapshot ${id} is not held by this guest (pruned, or never taken here)`, { tier: "guest", details: { snapshot_id: id } });
  }
  const parsed = Manifest.safeParse(JSON.parse(text));
  if (!parsed.success) throw new LeaseholdError("INTERNAL", `snapshot ${id}: manifest unreadable`, { tier: "guest" });
  return parsed.data;
}

/** One snapshot's summary: its `summary.json`, or its manifest's header for a snapshot stored without one. */
function readSummary(store: string, id: string): StoredSummary {
  let text: string;
  try {
    text = fs.readFileSync(path.join(store, id, "summary.json"), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    const { schema: _schema, entries: _entries, ...header } = readManifest(store, id);
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
    if (name.startsWith(".") || !SnapshotSummary.shape.id.safeParse(name).success) continue;
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
 * listed). Only before the first job: during jobs another label's snapshot
 * may be building there. Returns how many.
 */
export function sweepPartialSnapshots(store: string): number {
  if (!fs.existsSync(store)) return 0;
  let n = 0;
  for (const name of fs.readdirSync(store)) {
    if (!name.startsWith(".tmp-")) continue;
    fs.rmSync(path.join(store, name), { recursive: true, force: true });
    n++;
  }
  return n;
}

/** Removes snapshots beyond the retention; returns the ids removed. The newest of each label is always kept. */
export function pruneSnapshots(store: string, retention: Retention, now = new Date()): string[] {
  const all = listSnapshots(store);
  const removed: string[] = [];
  const perLabel = new Map<string, number>();
  let bytes = 0;
  for (const s of all) {
    const rank = (perLabel.get(s.label) ?? 0) + 1;
    perLabel.set(s.label, rank);
    const old = now.getTime() - Date.parse(s.created_at) > retention.max_age_s * 1000;
    const over = rank > retention.keep_per_label || (rank > 1 && (old || bytes + s.bytes > retention.max_bytes));
    if (over) {
      fs.rmSync(path.join(store, s.id), { recursive: true, force: true });
      removed.push(s.id);
    } else {
      bytes += s.bytes;
    }
  }
  return removed;
}

/** The digest of a manifest's own entries (a stored snapshot checked against its recorded digest). */
export function manifestDigest(m: SnapshotManifest): `sha256:${string}` {
  return treeDigest(m.entries.map(({ data: _data, ...e }) => e as TreeEntry));
}

/** The snapshot's entries as a walk's `known` hook: stamps whose bytes it hashed. */
export function manifestEntries(m: SnapshotManifest): TreeEntry[] {
  return m.entries.map(({ data: _data, ...e }) => e as TreeEntry);
}
