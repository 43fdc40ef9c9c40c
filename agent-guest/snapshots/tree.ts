/**
 * A host path's tree, walked by descriptor (docs/design.md#snapshots): the
 * entries in one canonical order and the tree digest over them.
 *
 * The walk never follows a symlink and never opens what is not a regular
 * file or a directory: each step opens `name` inside the directory
 * descriptor it holds (`/proc/self/fd/<dir>/<name>` with O_NOFOLLOW, the
 * same single-component technique as agent-guest/workspace), checks the
 * opened inode is the one lstat saw, and records symlinks by their target
 * text, FIFOs, sockets and devices by type (and device number) only — a
 * FIFO a workload planted is never opened, so it cannot hang the guest.
 * Bounded: more bytes or entries than the label's budget is POLICY_REFUSED
 * before anything else happens.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { LeaseholdError } from "../../server/trust";
import { openTrustedDir } from "../workspace/trusted-dir";
import { entryType } from "../workspace/workspace";

const C = fs.constants;
const O_DIR = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW;
const O_FILE = C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK;
const CHUNK = 1 << 20;

export type TreeEntryType = "file" | "directory" | "symlink" | "fifo" | "socket" | "char_device" | "block_device";

/** One entry; `path` is relative to the tree's root ("" for the root itself), "/"-separated. */
export interface TreeEntry {
  path: string;
  type: TreeEntryType;
  /** permission bits and setuid/setgid/sticky (st_mode & 0o7777) */
  mode: number;
  uid: number;
  gid: number;
  /** regular files: byte length; others 0 */
  size: number;
  /** regular files: sha256 hex of the content */
  sha256?: string;
  /** symlinks: the link text, never resolved */
  target?: string;
  /** devices: st_rdev */
  rdev?: number;
  /**
   * regular files: "<dev>:<ino>:<ctime ns>:<size>" when walked. Not in the
   * digest. The kernel sets ctime on every change to a file's bytes or
   * attributes, and only a clock change (root) can set it back, so the same
   * stamp means the same content as when the file was last hashed.
   */
  stamp?: string;
}

export interface TreeBudget {
  max_bytes: number;
  max_inodes: number;
}

export interface TreeSummary {
  entries: TreeEntry[];
  bytes: number;
  files: number;
  digest: `sha256:${string}`;
}

export const fdPath = (fd: number, name?: string) => (name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`);
/**
 * The same inode of the same kind: a file unlinked between lstat and open
 * frees its inode number, and a FIFO made at once in its place can get that
 * number back — the kind tells them apart, so a planted FIFO is never read.
 */
const sameInode = (a: fs.Stats, b: fs.Stats | fs.BigIntStats) => a.dev === Number(b.dev) && a.ino === Number(b.ino) && (a.mode & C.S_IFMT) === (Number(b.mode) & C.S_IFMT);

function refuse(message: string, details: Record<string, unknown> = {}): never {
  throw new LeaseholdError("POLICY_REFUSED", `host path tree (guest check): ${message}; nothing was run`, { tier: "guest", details });
}

export function entryTypeOf(st: fs.Stats | fs.BigIntStats): TreeEntryType {
  // The type predicates are the same on both kinds of stats.
  const type = entryType(st as fs.Stats);
  return type === "unknown" ? refuse("an entry of unknown type") : type;
}

/**
 * Opens a host path label's directory through the guest's trusted walk
 * (agent-guest/workspace/trusted-dir.ts): never through a symlink, never
 * below a directory every user may write without the sticky bit.
 */
export function openDirNoFollow(absolute: string): number {
  const opened = openTrustedDir(absolute);
  if (opened.ok) return opened.fd;
  const p = opened.problem;
  switch (p.kind) {
    case "not_absolute":
      return refuse(`${absolute} is not a normalised absolute directory below /`);
    case "symlink":
    case "not_directory":
      return refuse(`${absolute}: a component is a symlink or not a directory; host paths are never followed through links`, { path: absolute });
    case "missing":
      return refuse(`${absolute} does not exist`, { path: absolute });
    case "world_writable":
      return refuse(`${absolute}: ${p.ancestor} is writable by every user without the sticky bit, so another user could swap ${p.at}`, { path: absolute });
  }
}

/** Names in a directory, sorted by their bytes; a name that is not UTF-8 is refused (it could not be spelled back). */
export function sortedNames(dirFd: number, shown: string): string[] {
  const raw = fs.readdirSync(fdPath(dirFd), { encoding: "buffer" });
  const names = raw.map((b) => {
    const s = b.toString("utf8");
    if (!Buffer.from(s, "utf8").equals(b)) refuse(`a name in ${shown || "the root"} is not UTF-8`, { path: shown });
    return s;
  });
  return names.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/** Opens `name` in `dirFd` as the inode lstat saw, never following it; refuses a swap. */
export function openChild(dirFd: number, name: string, st: fs.Stats | fs.BigIntStats, flags: number, shown: string): number {
  let fd: number;
  try {
    fd = fs.openSync(fdPath(dirFd, name), flags);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR" || code === "ENOENT" || code === "ENXIO") refuse(`${shown} changed during the walk (race detected)`, { path: shown });
    throw e;
  }
  if (!sameInode(fs.fstatSync(fd), st)) {
    fs.closeSync(fd);
    refuse(`${shown} was replaced during the walk (race detected)`, { path: shown });
  }
  return fd;
}

let shared: Buffer | undefined;
/**
 * One read buffer for every file: the walk is synchronous, so no two reads
 * share it at once, and a fresh 1 MiB buffer per file (most are far
 * smaller) cost more than hashing their bytes.
 */
function chunkBuffer(): Buffer {
  shared ??= Buffer.allocUnsafe(CHUNK);
  return shared;
}

/** Hashes (and, with `sink`, hands on) a regular file's bytes from its descriptor. */
export function hashFile(fd: number, sink?: (chunk: Buffer) => void): string {
  const h = createHash("sha256");
  const buf = chunkBuffer();
  for (;;) {
    const n = fs.readSync(fd, buf, 0, CHUNK, null);
    if (n === 0) break;
    const chunk = buf.subarray(0, n);
    h.update(chunk);
    sink?.(chunk);
  }
  return h.digest("hex");
}

/** The digest over entries in walk order: one canonical JSON line per entry. */
export function treeDigest(entries: readonly TreeEntry[]): `sha256:${string}` {
  const h = createHash("sha256");
  h.update("leasehold-tree/1\n");
  for (const e of entries) {
    h.update(JSON.stringify([e.path, e.type, e.mode, e.uid, e.gid, e.size, e.sha256 ?? null, e.target ?? null, e.rdev ?? null]));
    h.update("\n");
  }
  return `sha256:${h.digest("hex")}`;
}

export interface WalkHooks {
  /** Called for each regular file with its open descriptor (positioned at 0); returns its sha256 hex. */
  file?: (entry: Omit<TreeEntry, "sha256">, fd: number) => string;
  /** Before a regular file is opened: its sha256 hex when a file of the same stamp was hashed already (it is then not opened). */
  known?: (entry: Omit<TreeEntry, "sha256">) => string | undefined;
  /** A test seam: called between a regular file's lstat and its open, where a swap would race the walk. */
  beforeOpen?: (entryPath: string) => void;
}

/** `known` for a walk: the stamps → sha256 of an earlier walk's entries. */
export function knownFrom(entries: readonly TreeEntry[]): (entry: Omit<TreeEntry, "sha256">) => string | undefined {
  const byStamp = new Map<string, string>();
  for (const e of entries) if (e.stamp !== undefined && e.sha256 !== undefined) byStamp.set(e.stamp, e.sha256);
  return (entry) => (entry.stamp === undefined ? undefined : byStamp.get(entry.stamp));
}

export function stampOf(st: fs.BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.ctimeNs}:${st.size}`;
}

/**
 * Walks the tree under `rootFd` (a directory descriptor), pre-order with
 * names sorted by bytes, within `budget`. Hard links are walked as the
 * separate names they are; a mount point inside the tree is refused (the
 * label is one file system's tree).
 */
export function walkTree(rootFd: number, budget: TreeBudget, hooks: WalkHooks = {}): TreeSummary {
  const rootSt = fs.fstatSync(rootFd);
  const entries: TreeEntry[] = [];
  let bytes = 0;
  let files = 0;
  const count = (add: number) => {
    bytes += add;
    if (entries.length > budget.max_inodes) refuse(`the tree has more than ${budget.max_inodes} entries (its budget)`, { max_inodes: budget.max_inodes });
    if (bytes > budget.max_bytes) refuse(`the tree holds more than ${budget.max_bytes} bytes (its budget)`, { max_bytes: budget.max_bytes });
  };
  const base = (path: string, st: fs.Stats | fs.BigIntStats): TreeEntry => ({ path, type: entryTypeOf(st), mode: Number(st.mode) & 0o7777, uid: Number(st.uid), gid: Number(st.gid), size: 0 });
  entries.push(base("", rootSt));
  count(0);
  const visit = (dirFd: number, rel: string) => {
    for (const name of sortedNames(dirFd, rel)) {
      const path = rel === "" ? name : `${rel}/${name}`;
      const st = fs.lstatSync(fdPath(dirFd, name), { bigint: true });
      if (Number(st.dev) !== rootSt.dev) refuse(`${path} is on another file system (a mount point inside the tree)`, { path });
      const entry = base(path, st);
      if (entry.type === "file") {
        entry.size = Number(st.size);
        entries.push(entry);
        count(entry.size);
        files++;
        // A file whose stamp (from lstat) was hashed before is not opened at all: nothing is read from it.
        entry.stamp = stampOf(st);
        const seen = hooks.known?.(entry);
        if (seen !== undefined) {
          entry.sha256 = seen;
          continue;
        }
        hooks.beforeOpen?.(path);
        const fd = openChild(dirFd, name, st, O_FILE, path);
        try {
          // The stamp of the opened inode: what is hashed (or taken as known) is this file.
          entry.stamp = stampOf(fs.fstatSync(fd, { bigint: true }));
          const known = hooks.known?.(entry);
          entry.sha256 = known ?? (hooks.file ? hooks.file(entry, fd) : hashFile(fd));
        } finally {
          fs.closeSync(fd);
        }
      } else if (entry.type === "directory") {
        entries.push(entry);
        count(0);
        const fd = openChild(dirFd, name, st, O_DIR, path);
        try {
          visit(fd, path);
        } finally {
          fs.closeSync(fd);
        }
      } else if (entry.type === "symlink") {
        // readlink of a name inside the held directory: the link is read, not followed.
        entry.target = fs.readlinkSync(fdPath(dirFd, name));
        entries.push(entry);
        count(0);
      } else {
        if (entry.type === "char_device" || entry.type === "block_device") entry.rdev = Number(st.rdev);
        entries.push(entry);
        count(0);
      }
    }
  };
  visit(rootFd, "");
  return { entries, bytes, files, digest: treeDigest(entries) };
}
