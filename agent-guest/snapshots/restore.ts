/**
 * A snapshot put back into its label's directory (docs/design.md#snapshots),
 * all or nothing: the tree is built in a staging directory beside the label
 * (same parent, same file system) and swapped with the label's directory in
 * one step (renameat2 RENAME_EXCHANGE on the held parent's descriptor). A
 * guest killed before the swap leaves the label's old tree untouched and a
 * staging directory the next restore of that label removes; killed after
 * it, the new tree, and the old one under the staging name until then.
 * Never a mix of both. The promise is against the guest dying, not the
 * machine losing power: nothing is fsynced before the swap (a flush would
 * cost the whole file system's dirty data on a shared disk), so after a
 * power cut the new tree's copied files may be empty; the snapshot is still
 * in the store and the rollback can be run again.
 *
 * Nothing is followed: the live tree and the staging tree are both reached
 * only through directory descriptors held from the label's parent down, a
 * link the workload left is never resolved, and a FIFO or device is never
 * opened. Files the snapshot holds unchanged in the live tree (same stamp,
 * owner and mode: tree.ts `stamp`) are hard-linked into the staging tree
 * instead of copied; every other file is made new from the store's bytes.
 *
 * A label that is itself a mount point cannot be swapped (its parent is
 * another file system): it is restored in place, entry by entry, and the
 * result says `atomic: false`.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { renameExchangeAt } from "../../native/index";
import { LeaseholdError } from "../../server/trust";
import { blobPath, writeAll, type CopyMethod } from "./blobs";
import { writeKnownStamps, type ManifestEntry, type SnapshotManifest } from "./store";
import { fdPath, hashFile, openChild, openDirNoFollow, sortedNames, stampOf, walkTree, type TreeBudget, type TreeEntry } from "./tree";

const C = fs.constants;
const O_DIR = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW;

export interface RestoreResult {
  tree_digest: `sha256:${string}`;
  identical: boolean;
  /** entries the snapshot recorded that could not be made again (sockets: only their server can) */
  not_restored: string[];
  /** whether the tree was swapped in whole (false: a mount-point label, restored in place) */
  atomic: boolean;
  /** the check's regular files: taken by a stamp the restore recorded as it made them, or read again */
  checked: { by_stamp: number; read: number };
}

export interface RestoreHooks {
  /** A test seam: called after each entry is made, so a test can fail a restore half-way. */
  afterEntry?: (entryPath: string) => void;
  /** A test seam: called between a live file's "unchanged" check and its link into the staging tree. */
  beforeLink?: (entryPath: string) => void;
  /** A test seam: called right after the swap, before the old tree is made root's (where a killed guest would stop). */
  afterSwap?: () => void;
  /**
   * Takes the removal of the old tree (swapped out, already root's and mode
   * 0700) to run later, e.g. once the job's result is delivered; without
   * it the old tree is removed before the restore returns.
   */
  deferRemoval?: (remove: () => void) => void;
}

/** The staging directories of a label are named `.<label dir>.leasehold-restore-<random>` beside it. */
const stagingPrefix = (base: string) => `.${base}.leasehold-restore-`;

/** Removes, by descriptor, the named entry and everything under it; a link is removed, never followed; a mount point is refused. */
function removeEntry(dirFd: number, name: string, shown: string, dev: number): void {
  const st = fs.lstatSync(fdPath(dirFd, name));
  if (st.dev !== dev) throw new LeaseholdError("POLICY_REFUSED", `rollback: ${shown} is a mount point inside the tree; nothing past it is touched`, { tier: "guest" });
  if (st.isDirectory()) {
    const child = openChild(dirFd, name, st, O_DIR, shown);
    try {
      for (const inner of sortedNames(child, shown)) removeEntry(child, inner, `${shown}/${inner}`, dev);
    } finally {
      fs.closeSync(child);
    }
    fs.rmdirSync(fdPath(dirFd, name));
  } else {
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

/** The blob's bytes into the new file; returns their sha256 hex (hashed while copying, or, for a reflink, of the clone). */
function copyOut(blob: string, destFd: number, method: CopyMethod): string {
  if (method === "reflink") {
    try {
      fs.copyFileSync(blob, fdPath(destFd), fs.constants.COPYFILE_FICLONE_FORCE);
      return hashFile(destFd);
    } catch (error) {
      // A label on another file system than the store's: the bytes are copied.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "EXDEV" && code !== "EOPNOTSUPP" && code !== "ENOTSUP" && code !== "EINVAL") throw error;
    }
  }
  const src = fs.openSync(blob, C.O_RDONLY | C.O_NOFOLLOW);
  try {
    return hashFile(src, (chunk) => writeAll(destFd, chunk));
  } finally {
    fs.closeSync(src);
  }
}

/** FIFOs and devices: made with mknod(1) on the held directory's magic link (Node has no mknod). */
function makeNode(parentFd: number, name: string, e: ManifestEntry): boolean {
  const where = `/proc/${process.pid}/fd/${parentFd}/${name}`;
  const rdev = e.rdev ?? 0;
  const kind = e.type === "fifo" ? ["p"] : e.type === "char_device" || e.type === "block_device" ? [e.type === "char_device" ? "c" : "b", String((rdev >>> 8) & 0xfff), String((rdev & 0xff) | ((rdev >>> 12) & 0xfff00))] : null;
  if (kind === null) return false;
  const r = spawnSync("mknod", ["-m", (e.mode & 0o777).toString(8), where, ...kind], { stdio: "ignore", env: { PATH: "/usr/bin:/bin" } as unknown as NodeJS.ProcessEnv, timeout: 10_000 });
  return r.status === 0;
}

function lstatOrNull(at: string): fs.BigIntStats | null {
  try {
    return fs.lstatSync(at, { bigint: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** Where one restore makes its entries, and what it learns on the way. */
interface Build {
  store: string;
  manifest: SnapshotManifest;
  /** the live tree's device: an entry on another one is never reused */
  dev: number;
  /** stamp → sha256 of files known to hold given bytes (kept or made here) */
  known: Map<string, string>;
  notRestored: string[];
  hooks: RestoreHooks;
}

/** One level of the walk: the directory being built and, when it still exists unchanged in kind, the live one at the same path. */
interface Level {
  path: string;
  fd: number;
  live: number | null;
}

/** Makes one non-root entry under `parent` (a file is linked from the live tree when unchanged, else copied from the store); returns a new level for a directory. */
function makeEntry(b: Build, parent: Level, e: ManifestEntry, name: string): Level | null {
  const at = fdPath(parent.fd, name);
  const liveSt = parent.live === null ? null : lstatOrNull(fdPath(parent.live, name));
  const liveSame = liveSt !== null && Number(liveSt.dev) === b.dev && parent.live !== null && unchanged(e, parent.live, name, liveSt);
  if (e.type === "directory") {
    fs.mkdirSync(at, 0o700);
    const fd = openChild(parent.fd, name, fs.lstatSync(at), O_DIR, e.path);
    fs.fchownSync(fd, e.uid, e.gid);
    fs.fchmodSync(fd, e.mode);
    const live = liveSame && liveSt !== null && parent.live !== null ? openChild(parent.live, name, fs.lstatSync(fdPath(parent.live, name)), O_DIR, e.path) : null;
    return { path: e.path, fd, live };
  }
  if (e.type === "file" && liveSame && liveSt !== null && parent.live !== null && e.sha256 !== undefined) {
    b.hooks.beforeLink?.(e.path);
    // linkat without AT_SYMLINK_FOLLOW: the name's own inode, never a link's target.
    fs.linkSync(fdPath(parent.live, name), at);
    // The link itself sets ctime, so a write between the check above and the link would hide behind
    // it: the linked inode must still have the bytes' size and mtime (a write sets mtime), else its
    // link goes and the file is made from the blob.
    const linked = fs.lstatSync(at, { bigint: true });
    if (linked.ino === liveSt.ino && linked.size === liveSt.size && linked.mtimeNs === liveSt.mtimeNs && linked.mode === liveSt.mode && linked.uid === liveSt.uid && linked.gid === liveSt.gid) {
      b.known.set(stampOf(linked), e.sha256);
      return null;
    }
    fs.unlinkSync(at);
  }
  if (e.type === "file") {
    const fd = fs.openSync(at, C.O_RDWR | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
    try {
      const sha = copyOut(blobPath(b.store, e.sha256 ?? ""), fd, b.manifest.method);
      fs.fchownSync(fd, e.uid, e.gid);
      fs.fchmodSync(fd, e.mode);
      b.known.set(stampOf(fs.fstatSync(fd, { bigint: true })), sha);
    } finally {
      fs.closeSync(fd);
    }
  } else if (e.type === "symlink") {
    fs.symlinkSync(e.target ?? "", at);
    fs.lchownSync(at, e.uid, e.gid);
  } else if (makeNode(parent.fd, name, e)) {
    fs.lchownSync(at, e.uid, e.gid);
  } else {
    b.notRestored.push(e.path);
  }
  return null;
}

/** Builds the snapshot's tree under `newRoot` (an empty directory), reusing unchanged files of `liveRoot`. */
function buildTree(b: Build, liveRoot: number, newRoot: number): void {
  const stack: Level[] = [{ path: "", fd: newRoot, live: liveRoot }];
  const close = (l: Level) => {
    fs.closeSync(l.fd);
    if (l.live !== null) fs.closeSync(l.live);
  };
  try {
    for (const e of b.manifest.entries) {
      if (e.path === "") {
        fs.fchownSync(newRoot, e.uid, e.gid);
        fs.fchmodSync(newRoot, e.mode);
        continue;
      }
      const dir = e.path.includes("/") ? e.path.slice(0, e.path.lastIndexOf("/")) : "";
      while (stack.length > 1 && (stack[stack.length - 1] as Level).path !== dir) close(stack.pop() as Level);
      const parent = stack[stack.length - 1] as Level;
      if (parent.path !== dir) throw new LeaseholdError("INTERNAL", `snapshot ${b.manifest.id}: ${e.path} comes before its directory`, { tier: "guest" });
      const level = makeEntry(b, parent, e, e.path.slice(e.path.lastIndexOf("/") + 1));
      if (level !== null) stack.push(level);
      b.hooks.afterEntry?.(e.path);
    }
  } finally {
    while (stack.length > 1) close(stack.pop() as Level);
  }
}

/**
 * The swap record (`<store>/restoring/<label>.json`): written before the
 * swap, removed once the swapped-out tree is root's and 0700. It names the
 * directory that will carry the staging name after the swap — the label's
 * old root, by device and inode — so a guest killed between the swap and
 * the chmod leaves a record by which the next restore knows that directory
 * (still its owner's, its mode unchanged) for the old tree.
 */
const SwapRecord = z.object({ staging: z.string().max(300), dev: z.string().regex(/^[0-9]+$/), ino: z.string().regex(/^[0-9]+$/) }).strict();
type SwapRecord = z.infer<typeof SwapRecord>;
const swapRecordPath = (store: string, label: string) => path.join(store, "restoring", `${label}.json`);

function readSwapRecord(store: string, label: string): SwapRecord | null {
  let text: string;
  try {
    text = fs.readFileSync(swapRecordPath(store, label), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    const parsed = SwapRecord.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function writeSwapRecord(store: string, label: string, record: SwapRecord): void {
  const file = swapRecordPath(store, label);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp-${randomBytes(4).toString("hex")}`;
  fs.writeFileSync(tmp, JSON.stringify(record), { mode: 0o600, flag: "wx" });
  fs.renameSync(tmp, file);
}

/**
 * Removes what an earlier restore of this label left beside it: root's own
 * directories of the staging name (killed before the swap, or after the
 * chmod), and the one directory of that name the swap record names by
 * device and inode (killed between the swap and the chmod: the old root,
 * still its owner's) — made root's and 0700 on its descriptor first. Any
 * other user's directory of the prefix is left alone.
 */
function sweepStaging(parentFd: number, base: string, dev: number, record: SwapRecord | null): void {
  for (const name of sortedNames(parentFd, "")) {
    if (!name.startsWith(stagingPrefix(base))) continue;
    const st = fs.lstatSync(fdPath(parentFd, name), { bigint: true });
    if (!st.isDirectory() || Number(st.dev) !== dev) continue;
    if (st.uid === 0n) {
      removeEntry(parentFd, name, name, dev);
    } else if (record !== null && record.staging === name && record.dev === String(st.dev) && record.ino === String(st.ino)) {
      const fd = openChild(parentFd, name, st, O_DIR, name);
      try {
        fs.fchownSync(fd, 0, 0);
        fs.fchmodSync(fd, 0o700);
      } finally {
        fs.closeSync(fd);
      }
      removeEntry(parentFd, name, name, dev);
    }
  }
}

function openParent(hostPath: string): number {
  const parent = path.dirname(hostPath);
  return parent === "/" ? fs.openSync("/", O_DIR) : openDirNoFollow(parent);
}

/**
 * Makes the tree at `hostPath` what the snapshot recorded, swapped in whole
 * (see the file comment). The restored tree is walked again; `identical` is
 * whether its digest equals the snapshot's.
 */
export function restoreSnapshot(store: string, manifest: SnapshotManifest, hostPath: string, budget: TreeBudget, hooks: RestoreHooks = {}): RestoreResult {
  if (manifest.path !== hostPath) throw new LeaseholdError("POLICY_REFUSED", `snapshot ${manifest.id} is of ${manifest.path}, not ${hostPath}`, { tier: "guest" });
  // The label's directory is reached through the trusted walk, then as a name in its held parent.
  fs.closeSync(openDirNoFollow(hostPath));
  const parentFd = openParent(hostPath);
  const base = path.basename(hostPath);
  // Cleared once the parent and the old root are handed to the old tree's removal.
  let held = true;
  try {
    const liveRoot = openChild(parentFd, base, fs.lstatSync(fdPath(parentFd, base)), O_DIR, hostPath);
    const dev = fs.fstatSync(liveRoot).dev;
    const parentDev = fs.fstatSync(parentFd).dev;
    const b: Build = { store, manifest, dev, known: new Map(), notRestored: [], hooks };
    for (const e of manifest.entries) if (e.stamp !== undefined && e.sha256 !== undefined) b.known.set(e.stamp, e.sha256);
    if (parentDev !== dev) {
      fs.closeSync(liveRoot);
      return restoreInPlace(b, hostPath, budget);
    }
    sweepStaging(parentFd, base, dev, readSwapRecord(store, manifest.label));
    fs.rmSync(swapRecordPath(store, manifest.label), { force: true });
    const staging = `${stagingPrefix(base)}${randomBytes(6).toString("hex")}`;
    fs.mkdirSync(fdPath(parentFd, staging), 0o700);
    const newRoot = openChild(parentFd, staging, fs.lstatSync(fdPath(parentFd, staging)), O_DIR, staging);
    let swapped = false;
    try {
      buildTree(b, liveRoot, newRoot);
      const oldSt = fs.fstatSync(liveRoot, { bigint: true });
      writeSwapRecord(store, manifest.label, { staging, dev: String(oldSt.dev), ino: String(oldSt.ino) });
      const exchanged = renameExchangeAt(parentFd, base, staging);
      if (!exchanged.ok) fs.rmSync(swapRecordPath(store, manifest.label), { force: true });
      if (!exchanged.ok && (exchanged.errno === "EXDEV" || exchanged.errno === "EBUSY")) {
        // A bind mount of the label (same device, other mount): the swap cannot cross it.
        removeEntry(parentFd, staging, staging, dev);
        return restoreInPlace(b, hostPath, budget);
      }
      if (!exchanged.ok) throw new LeaseholdError("INTERNAL", `rollback: the restored tree could not be swapped in (${exchanged.errno}); the label's tree was not replaced`, { tier: "guest" });
      swapped = true;
      hooks.afterSwap?.();
      // The old tree now has the staging name: root's and 0700 at once, so no other user enters it
      // while it waits for removal, and a sweep after a crash knows it for one of ours.
      fs.fchownSync(liveRoot, 0, 0);
      fs.fchmodSync(liveRoot, 0o700);
      fs.rmSync(swapRecordPath(store, manifest.label), { force: true });
      // Checked before the old tree goes: unlinking its names changes the ctime of every file the
      // restore linked, which would make each of them unknown to this walk and re-read.
      const after = checkRestored(newRoot, b, budget, hostPath);
      const result: RestoreResult = { tree_digest: after.digest, identical: after.digest === manifest.tree_digest, not_restored: b.notRestored, atomic: true, checked: after.checked };
      const remove = oldTreeRemoval(parentFd, liveRoot, staging, dev);
      held = false;
      if (hooks.deferRemoval) hooks.deferRemoval(remove);
      else remove();
      return result;
    } catch (error) {
      if (!swapped && fs.existsSync(fdPath(parentFd, staging))) removeEntry(parentFd, staging, staging, dev);
      if (swapped && held) {
        held = false;
        oldTreeRemoval(parentFd, liveRoot, staging, dev)();
      }
      throw error;
    } finally {
      fs.closeSync(newRoot);
      if (held) fs.closeSync(liveRoot);
    }
  } finally {
    if (held) fs.closeSync(parentFd);
  }
}

/**
 * Removes the swapped-out tree, by descriptor, once: only while `staging`
 * in the held parent is still the very directory swapped out (a later
 * restore of the label may have swept it already). Owns both descriptors.
 */
function oldTreeRemoval(parentFd: number, oldRoot: number, staging: string, dev: number): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    try {
      const st = lstatOrNull(fdPath(parentFd, staging));
      const old = fs.fstatSync(oldRoot, { bigint: true });
      if (st !== null && st.dev === old.dev && st.ino === old.ino) removeEntry(parentFd, staging, staging, dev);
    } finally {
      fs.closeSync(oldRoot);
      fs.closeSync(parentFd);
    }
  };
}

/** Walks the restored tree: files whose stamp the restore recorded (made or linked by it) are taken as known, the rest read. */
function checkRestored(rootFd: number, b: Build, budget: TreeBudget, hostPath: string): { digest: `sha256:${string}`; checked: RestoreResult["checked"] } {
  const checked = { by_stamp: 0, read: 0 };
  const stored: TreeEntry[] = [];
  const after = walkTree(rootFd, widen(budget, b.manifest), {
    known: (entry) => {
      const sha = entry.stamp === undefined ? undefined : b.known.get(entry.stamp);
      if (sha !== undefined) {
        checked.by_stamp++;
        stored.push({ ...entry, sha256: sha });
      }
      return sha;
    },
    file: (_entry, fd) => {
      checked.read++;
      return hashFile(fd);
    },
  });
  // The stamps of the files whose bytes are blobs (the snapshot's), for the label's next snapshot;
  // a file read here (changed since the restore made it) has no blob and is left out.
  writeKnownStamps(b.store, b.manifest.label, hostPath, stored);
  return { digest: after.digest, checked };
}

/** The walk after a restore may meet the snapshot's own size even if the ceiling's budget shrank since. */
const widen = (budget: TreeBudget, m: SnapshotManifest): TreeBudget => ({ max_bytes: Math.max(budget.max_bytes, m.bytes), max_inodes: Math.max(budget.max_inodes, m.entries.length) });

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

/**
 * A label that is a mount point: everything the snapshot does not hold as it
 * is now removed by descriptor, then each missing entry made under its held
 * parent. Not atomic: a guest killed half-way leaves the tree partly
 * restored (the snapshot, and the one taken of the tree it replaced, stay).
 */
function restoreInPlace(b: Build, hostPath: string, budget: TreeBudget): RestoreResult {
  const rootFd = openDirNoFollow(hostPath);
  try {
    pruneToSnapshot(rootFd, "", b.dev, new Map(b.manifest.entries.map((e) => [e.path, e])));
    // Kept entries are skipped below (the live level is the tree itself, whose unchanged entries stay).
    const stack: Level[] = [{ path: "", fd: rootFd, live: null }];
    try {
      for (const e of b.manifest.entries) {
        if (e.path === "") {
          fs.fchownSync(rootFd, e.uid, e.gid);
          fs.fchmodSync(rootFd, e.mode);
          continue;
        }
        const dir = e.path.includes("/") ? e.path.slice(0, e.path.lastIndexOf("/")) : "";
        while (stack.length > 1 && (stack[stack.length - 1] as Level).path !== dir) fs.closeSync((stack.pop() as Level).fd);
        const parent = stack[stack.length - 1] as Level;
        if (parent.path !== dir) throw new LeaseholdError("INTERNAL", `snapshot ${b.manifest.id}: ${e.path} comes before its directory`, { tier: "guest" });
        const name = e.path.slice(e.path.lastIndexOf("/") + 1);
        const present = lstatOrNull(fdPath(parent.fd, name));
        if (present !== null && e.type === "directory") {
          const fd = openChild(parent.fd, name, fs.lstatSync(fdPath(parent.fd, name)), O_DIR, e.path);
          stack.push({ path: e.path, fd, live: null });
          fs.fchownSync(fd, e.uid, e.gid);
          fs.fchmodSync(fd, e.mode);
        } else if (present === null) {
          const level = makeEntry(b, parent, e, name);
          if (level !== null) stack.push(level);
        }
        b.hooks.afterEntry?.(e.path);
      }
    } finally {
      while (stack.length > 1) fs.closeSync((stack.pop() as Level).fd);
    }
    const after = checkRestored(rootFd, b, budget, hostPath);
    return { tree_digest: after.digest, identical: after.digest === b.manifest.tree_digest, not_restored: b.notRestored, atomic: false, checked: after.checked };
  } finally {
    fs.closeSync(rootFd);
  }
}
