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
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { LeaseholdError, SnapshotSummary } from "../../server/trust";
import { fdPath, hashFile, openChild, openDirNoFollow, sortedNames, stampOf, treeDigest, walkTree, type TreeBudget, type TreeEntry } from "./tree";

const C = fs.constants;
const O_DIR = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW;
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
type ManifestEntry = z.infer<typeof Entry>;

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

function writeAll(fd: number, chunk: Buffer): void {
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
export function takeSnapshot(store: string, label: string, hostPath: string, budget: TreeBudget, now = new Date()): SnapshotManifest {
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
      file: (entry, fd) => {
        const i = n++;
        dataOf.set(entry.path, i);
        const dest = path.join(tmp, "data", String(i));
        // Unchanged since the label's last snapshot (same stamp): share its stored bytes, which
        // nothing ever writes to, instead of copying them again.
        const prior = entry.stamp === undefined ? undefined : previous.get(entry.stamp);
        if (prior !== undefined) {
          try {
            fs.linkSync(prior.data, dest);
            return prior.sha256;
          } catch {
            // pruned meanwhile: copy
          }
        }
        return copyInto(fd, dest, method);
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
  const newest = listSnapshots(store).find((s) => s.label === label);
  if (newest === undefined) return out;
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

/** Retained snapshots, most recent first. */
export function listSnapshots(store: string): SnapshotSummary[] {
  if (!fs.existsSync(store)) return [];
  const out: SnapshotSummary[] = [];
  for (const name of fs.readdirSync(store)) {
    if (name.startsWith(".")) continue;
    try {
      const m = readManifest(store, name);
      out.push({ id: m.id, label: m.label, created_at: m.created_at, bytes: m.bytes, files: m.files, tree_digest: m.tree_digest });
    } catch {
      // A directory that is not a complete snapshot is not listed.
    }
  }
  return out.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1));
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

/** Removes everything inside the held directory by descriptor; no link is followed, no mount point crossed. */
function clearDirectory(dirFd: number, rel: string, dev: number): void {
  for (const name of sortedNames(dirFd, rel)) removeEntry(dirFd, name, rel === "" ? name : `${rel}/${name}`, dev);
}

function removeEntry(dirFd: number, name: string, shown: string, dev: number): void {
  const st = fs.lstatSync(fdPath(dirFd, name));
  if (st.dev !== dev) throw new LeaseholdError("POLICY_REFUSED", `rollback: ${shown} is a mount point inside the tree; nothing past it is touched`, { tier: "guest" });
  if (st.isDirectory()) {
    const child = openChild(dirFd, name, st, O_DIR, shown);
    try {
      clearDirectory(child, shown, dev);
    } finally {
      fs.closeSync(child);
    }
    fs.rmdirSync(fdPath(dirFd, name));
  } else {
    // unlink removes the name, whatever it is (a symlink is removed, not followed).
    fs.unlinkSync(fdPath(dirFd, name));
  }
}

/** Whether the entry found is the one the snapshot recorded, untouched since (files: the same stamp, owner and mode). */
function unchanged(want: ManifestEntry, dirFd: number, name: string, st: fs.BigIntStats): boolean {
  const mode = Number(st.mode & 0o7777n);
  const same = (t: string) => want.type === t && want.uid === Number(st.uid) && want.gid === Number(st.gid);
  if (st.isDirectory()) return want.type === "directory";
  if (st.isFile()) return same("file") && want.mode === mode && want.stamp === stampOf(st);
  if (st.isSymbolicLink()) return same("symlink") && fs.readlinkSync(fdPath(dirFd, name)) === want.target;
  if (st.isFIFO()) return same("fifo") && want.mode === mode;
  if (st.isCharacterDevice() || st.isBlockDevice()) return same(st.isCharacterDevice() ? "char_device" : "block_device") && want.mode === mode && want.rdev === Number(st.rdev);
  return false;
}

/** Removes, by descriptor, every entry the snapshot does not hold as it is now; keeps (and descends into) the rest. */
function pruneToSnapshot(dirFd: number, rel: string, dev: number, want: ReadonlyMap<string, ManifestEntry>): void {
  for (const name of sortedNames(dirFd, rel)) {
    const shown = rel === "" ? name : `${rel}/${name}`;
    const st = fs.lstatSync(fdPath(dirFd, name), { bigint: true });
    const w = want.get(shown);
    if (Number(st.dev) !== dev || w === undefined || !unchanged(w, dirFd, name, st)) {
      removeEntry(dirFd, name, shown, dev);
      continue;
    }
    if (st.isDirectory()) {
      const child = openChild(dirFd, name, fs.lstatSync(fdPath(dirFd, name)), O_DIR, shown);
      try {
        pruneToSnapshot(child, shown, dev, want);
      } finally {
        fs.closeSync(child);
      }
    }
  }
}

/** The stored bytes into the new file; returns their sha256 hex (hashed while copying, or, for a reflink, of the clone). */
function copyOut(dataFile: string, destFd: number, method: CopyMethod): string {
  if (method === "reflink") {
    fs.copyFileSync(dataFile, fdPath(destFd), fs.constants.COPYFILE_FICLONE_FORCE);
    return hashFile(destFd);
  }
  const src = fs.openSync(dataFile, C.O_RDONLY | C.O_NOFOLLOW);
  try {
    return hashFile(src, (chunk) => writeAll(destFd, chunk));
  } finally {
    fs.closeSync(src);
  }
}

/** FIFOs and devices: made with mknod(1) on the held directory's magic link (Node has no mknod). */
function makeNode(parentFd: number, name: string, e: ManifestEntry): boolean {
  const where = `/proc/${process.pid}/fd/${parentFd}/${name}`;
  const kind = e.type === "fifo" ? ["p"] : e.type === "char_device" || e.type === "block_device" ? [e.type === "char_device" ? "c" : "b", String(((e.rdev ?? 0) >>> 8) & 0xfff), String(((e.rdev ?? 0) & 0xff) | (((e.rdev ?? 0) >>> 12) & 0xfff00))] : null;
  if (kind === null) return false;
  const r = spawnSync("mknod", ["-m", (e.mode & 0o777).toString(8), where, ...kind], { stdio: "ignore", env: { PATH: "/usr/bin:/bin" } as unknown as NodeJS.ProcessEnv, timeout: 10_000 });
  return r.status === 0;
}

export interface RestoreResult {
  tree_digest: `sha256:${string}`;
  identical: boolean;
  /** entries the snapshot recorded that could not be made again (sockets: only their server can) */
  not_restored: string[];
}

/**
 * Makes the tree at `hostPath` what the snapshot recorded: everything in it
 * removed by descriptor (links the workload left are removed, never
 * followed), then every entry made again under its held parent directory,
 * owner and mode set on the descriptor. The restored tree is walked again;
 * `identical` is whether its digest equals the snapshot's.
 */
export function restoreSnapshot(store: string, manifest: SnapshotManifest, hostPath: string, budget: TreeBudget): RestoreResult {
  if (manifest.path !== hostPath) throw new LeaseholdError("POLICY_REFUSED", `snapshot ${manifest.id} is of ${manifest.path}, not ${hostPath}`, { tier: "guest" });
  const rootFd = openDirNoFollow(hostPath);
  const notRestored: string[] = [];
  // Stamps of files known to hold given bytes: kept ones (from the snapshot) and the ones made here.
  const known = new Map<string, string>();
  for (const e of manifest.entries) if (e.stamp !== undefined && e.sha256 !== undefined) known.set(e.stamp, e.sha256);
  try {
    const rootSt = fs.fstatSync(rootFd);
    pruneToSnapshot(rootFd, "", rootSt.dev, new Map(manifest.entries.map((e) => [e.path, e])));
    const stack: Array<{ path: string; fd: number }> = [{ path: "", fd: rootFd }];
    const parentOf = (p: string) => {
      const dir = p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "";
      while (stack.length > 1 && (stack[stack.length - 1] as { path: string }).path !== dir) fs.closeSync((stack.pop() as { fd: number }).fd);
      const top = stack[stack.length - 1] as { path: string; fd: number };
      if (top.path !== dir) throw new LeaseholdError("INTERNAL", `snapshot ${manifest.id}: ${p} comes before its directory`, { tier: "guest" });
      return top.fd;
    };
    try {
      for (const e of manifest.entries) {
        if (e.path === "") {
          fs.fchownSync(rootFd, e.uid, e.gid);
          fs.fchmodSync(rootFd, e.mode);
          continue;
        }
        const parent = parentOf(e.path);
        const name = e.path.slice(e.path.lastIndexOf("/") + 1);
        const at = fdPath(parent, name);
        let present: fs.Stats | null = null;
        try {
          present = fs.lstatSync(at);
        } catch {
          present = null;
        }
        if (present !== null && e.type !== "directory") continue; // kept by pruneToSnapshot: unchanged
        if (e.type === "directory") {
          if (present === null) fs.mkdirSync(at, 0o700);
          const st = fs.lstatSync(at);
          const fd = openChild(parent, name, st, O_DIR, e.path);
          fs.fchownSync(fd, e.uid, e.gid);
          fs.fchmodSync(fd, e.mode);
          stack.push({ path: e.path, fd });
        } else if (e.type === "file") {
          const fd = fs.openSync(at, C.O_RDWR | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
          try {
            const sha = copyOut(path.join(store, manifest.id, "data", String(e.data)), fd, manifest.method);
            fs.fchownSync(fd, e.uid, e.gid);
            fs.fchmodSync(fd, e.mode);
            known.set(stampOf(fs.fstatSync(fd, { bigint: true })), sha);
          } finally {
            fs.closeSync(fd);
          }
        } else if (e.type === "symlink") {
          fs.symlinkSync(e.target ?? "", at);
          fs.lchownSync(at, e.uid, e.gid);
        } else if (makeNode(parent, name, e)) {
          fs.lchownSync(at, e.uid, e.gid);
        } else {
          notRestored.push(e.path);
        }
      }
    } finally {
      while (stack.length > 1) fs.closeSync((stack.pop() as { fd: number }).fd);
    }
    // Files with a known stamp are not read again: their bytes were hashed when kept or made.
    const after = walkTree(rootFd, { max_bytes: Math.max(budget.max_bytes, manifest.bytes), max_inodes: Math.max(budget.max_inodes, manifest.entries.length) }, { known: (entry) => (entry.stamp === undefined ? undefined : known.get(entry.stamp)) });
    return { tree_digest: after.digest, identical: after.digest === manifest.tree_digest, not_restored: notRestored };
  } finally {
    fs.closeSync(rootFd);
  }
}

/** The digest of a manifest's own entries (a stored snapshot checked against its recorded digest). */
export function manifestDigest(m: SnapshotManifest): `sha256:${string}` {
  return treeDigest(m.entries.map(({ data: _data, ...e }) => e as TreeEntry));
}

/** The snapshot's entries as a walk's `known` hook: stamps whose bytes it hashed. */
export function manifestEntries(m: SnapshotManifest): TreeEntry[] {
  return m.entries.map(({ data: _data, ...e }) => e as TreeEntry);
}
