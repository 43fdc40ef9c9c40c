import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { LeaseholdError, type ErrorCode } from "../../server/trust";

/**
 * The one path module behind fs_read / fs_write / fs_list on a host.
 * Tier: guest user-space check (docs/design.md#enforcement) — a check in
 * the guest daemon, not a kernel object. Every refusal says so.
 *
 * Rules, each with a case in workspace.test.ts:
 *  - paths are relative to the workspace root: absolute paths are refused;
 *    any `..` component is refused (lexical escape) even when it would stay
 *    inside; NUL, control characters, over-long paths/components/depth are
 *    invalid arguments.
 *  - the workspace root is an absolute, normalised path to a directory none
 *    of whose components is a symlink; its (dev, inode) is fixed when the
 *    Workspace is opened and re-verified by every operation.
 *  - resolution is fd-relative, like openat(2): starting from "/", every
 *    component is lstat'ed and then opened through `/proc/self/fd/<dir>/<name>`
 *    with O_NOFOLLOW|O_DIRECTORY, so the kernel resolves each step relative to
 *    a directory we already hold and never follows a symlink; the opened fd's
 *    (dev, inode) must equal what lstat saw. A symlinked component anywhere
 *    is refused, whether it was there at check time or swapped in later.
 *  - no mount point is crossed (every directory has the root's st_dev).
 *  - before a read, write or list, /proc/self/fd says where the directory fd
 *    really is; it must still be inside the root (resolved escape).
 *  - reads open only regular files with one link (a hard link may alias a
 *    file outside the workspace); the target is first opened O_PATH, so a
 *    fifo or device swapped in is never opened for I/O.
 *  - writes never write through an existing path: a temp file is created
 *    O_EXCL|O_NOFOLLOW in the same directory, written, fsync'ed and renamed
 *    over the target (rename replaces a symlink instead of following it),
 *    then the directory is fsync'ed. Writing over a symlink, directory, fifo
 *    or device is refused. Missing parents are created only after every
 *    existing ancestor passed the checks (mkdir never follows a symlink).
 *  - the descriptor rule: root never changes anything by path in here. Every
 *    chown/chmod is fchown/fchmod on a descriptor we opened O_NOFOLLOW
 *    relative to a directory we hold, after checking its inode (a new
 *    directory: made 0700, opened, checked to be the root-owned empty one we
 *    made, then fchown'ed to its parent's owner and fchmod'ed 0755). The
 *    remaining path calls act on one entry of a held directory and never
 *    follow its last component: mkdir, open O_CREAT|O_EXCL|O_NOFOLLOW,
 *    rename, unlink, lstat. No utimes/chmod/chown by path exists here.
 *  - sizes are bounded: read and list page with offset / limit / has_more.
 *
 * What holds under races (TOCTOU): see README.md "Workspace races".
 * Requires Linux with /proc mounted; otherwise the module refuses to open a
 * workspace (UNENFORCEABLE) rather than fall back to path-string checks.
 */

export interface WorkspaceLimits {
  maxPathBytes: number;
  maxComponentBytes: number;
  maxDepth: number;
  maxReadBytes: number;
  defaultReadBytes: number;
  maxWriteBytes: number;
  defaultListLimit: number;
  maxListLimit: number;
  /** Directory entries scanned at most for one listing. */
  maxListScan: number;
}

export const DEFAULT_WORKSPACE_LIMITS: Readonly<WorkspaceLimits> = Object.freeze({
  maxPathBytes: 4096,
  maxComponentBytes: 255,
  maxDepth: 64,
  maxReadBytes: 8 * 1024 * 1024,
  defaultReadBytes: 1024 * 1024,
  maxWriteBytes: 8 * 1024 * 1024,
  defaultListLimit: 50,
  maxListLimit: 200,
  maxListScan: 10_000,
});

/** Points between a check and the operation it guards; tests use them to swap things in. */
export type WorkspaceStage = "component-checked" | "target-checked" | "before-commit";

export interface WorkspaceOptions {
  limits?: Partial<WorkspaceLimits>;
  /** Test seam: called synchronously at each stage with the workspace-relative path. */
  onStage?: (stage: WorkspaceStage, relativePath: string) => void;
}

export interface ReadResult {
  path: string;
  content: Buffer;
  offset: number;
  bytes: number;
  total_bytes: number;
  has_more: boolean;
  sha256: string;
  /**
   * With `context`: the page plus up to `context` bytes on each side, read
   * from the same descriptor (one consistent view), starting at file offset
   * `from`. The scrubber needs them so a page boundary cannot cut a secret
   * out of its pattern (server/trust/scrub/window.ts); they never leave the host.
   */
  around?: { bytes: Buffer; from: number };
}

export interface WriteResult {
  path: string;
  bytes: number;
  sha256: string;
  created: boolean;
}

export type EntryType = "file" | "directory" | "symlink" | "fifo" | "socket" | "char_device" | "block_device" | "unknown";

export interface ListEntry {
  /** UTF-8 name, or base64 of the raw bytes when `name_encoding` is "base64". */
  name: string;
  name_encoding: "utf8" | "base64";
  type: EntryType;
  /** Size in bytes, for regular files only. */
  size?: number;
}

export interface ListResult {
  path: string;
  entries: ListEntry[];
  offset: number;
  limit: number;
  total: number;
  has_more: boolean;
}

const TIER_PREFIX = "guest user-space path check";
const C = fs.constants;
// O_PATH is not in fs.constants. 010000000 on every Linux architecture Node
// supports except alpha/parisc/sparc, which Node does not ship for.
const O_PATH = 0o10000000;
const O_DIR = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW;
const TEMP_PREFIX = ".lh-tmp-";

function refuse(code: ErrorCode, message: string, relPath?: string): never {
  throw new LeaseholdError(code, `${TIER_PREFIX}: ${message}`, {
    tier: "guest",
    ...(relPath !== undefined ? { details: { path: relPath } } : {}),
  });
}

const fdPath = (fd: number, name?: string) => (name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`);
const sameInode = (a: fs.Stats, b: fs.Stats) => a.dev === b.dev && a.ino === b.ino;
const errnoOf = (e: unknown) => (e as NodeJS.ErrnoException).code;

function closeQuietly(fd: number | undefined): void {
  if (fd === undefined) return;
  try {
    fs.closeSync(fd);
  } catch {
    /* already closed */
  }
}

/** What an lstat says an entry is (the workspace listing and the host-path tree walk). */
export function entryType(st: fs.Stats): EntryType {
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "directory";
  if (st.isSymbolicLink()) return "symlink";
  if (st.isFIFO()) return "fifo";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice()) return "char_device";
  if (st.isBlockDevice()) return "block_device";
  return "unknown";
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0001-\u001f\u007f]/;

/**
 * Lexical checks on a workspace-relative path. Returns its components
 * (empty for the root itself). Never touches the filesystem.
 */
/**
 * A workspace image can hold a `.leasehold-jobs` directory of root-only job
 * inputs left by an older guest that kept them there and was killed
 * mid-job (the guest's job directories are in its state directory,
 * daemon/bundle-run.ts). Workspace operations run as root, so they refuse
 * the name rather than read another caller's input from it.
 */
export const GUEST_JOBS_DIR = ".leasehold-jobs";

export function parseRelativePath(input: unknown, limits: WorkspaceLimits = DEFAULT_WORKSPACE_LIMITS): string[] {
  if (typeof input !== "string") refuse("INVALID_ARGUMENT", "path must be a string");
  if (input.includes("\0")) refuse("INVALID_ARGUMENT", "path contains a NUL byte");
  if (LONE_SURROGATE.test(input)) refuse("INVALID_ARGUMENT", "path is not valid Unicode");
  if (CONTROL.test(input)) refuse("INVALID_ARGUMENT", "path contains a control character", input);
  if (Buffer.byteLength(input) > limits.maxPathBytes) refuse("INVALID_ARGUMENT", `path is longer than ${limits.maxPathBytes} bytes`);
  if (input.startsWith("/")) {
    refuse("POLICY_REFUSED", "absolute path refused; workspace paths are relative to the workspace root", input);
  }
  const parts = input.split("/").filter((p) => p !== "" && p !== ".");
  for (const part of parts) {
    if (part === "..") refuse("POLICY_REFUSED", "'..' component refused (lexical escape)", input);
    if (Buffer.byteLength(part) > limits.maxComponentBytes) {
      refuse("INVALID_ARGUMENT", `path component longer than ${limits.maxComponentBytes} bytes`, input);
    }
  }
  if (parts.length > limits.maxDepth) refuse("INVALID_ARGUMENT", `path deeper than ${limits.maxDepth} components`, input);
  if (parts[0] === GUEST_JOBS_DIR) refuse("POLICY_REFUSED", `${GUEST_JOBS_DIR} is reserved for the guest's job inputs`, input);
  return parts;
}

function checkPaging(offset: unknown, limit: unknown, defaultLimit: number, maxLimit: number): { offset: number; limit: number } {
  const o = offset ?? 0;
  const l = limit ?? defaultLimit;
  if (typeof o !== "number" || !Number.isSafeInteger(o) || o < 0) refuse("INVALID_ARGUMENT", "offset must be a non-negative integer");
  if (typeof l !== "number" || !Number.isSafeInteger(l) || l < 1 || l > maxLimit) {
    refuse("INVALID_ARGUMENT", `limit must be an integer from 1 to ${maxLimit}`);
  }
  return { offset: o, limit: l };
}

export class Workspace {
  readonly root: string;
  readonly limits: WorkspaceLimits;
  private readonly rootComponents: string[];
  private readonly rootIdentity: fs.Stats;
  private readonly onStage: WorkspaceOptions["onStage"];

  private constructor(root: string, components: string[], identity: fs.Stats, options: WorkspaceOptions) {
    this.root = root;
    this.rootComponents = components;
    this.rootIdentity = identity;
    this.limits = { ...DEFAULT_WORKSPACE_LIMITS, ...options.limits };
    this.onStage = options.onStage;
  }

  /**
   * Validates the workspace root and pins its identity. Nothing is created:
   * the root must already exist, as a directory, with no symlink anywhere on
   * its path (checked component by component from "/" before anything else).
   */
  static open(root: string, options: WorkspaceOptions = {}): Workspace {
    if (process.platform !== "linux") refuse("UNENFORCEABLE", "workspace checks need Linux (/proc/self/fd, O_PATH)");
    try {
      fs.statSync("/proc/self/fd");
    } catch {
      refuse("UNENFORCEABLE", "/proc is not mounted; fd-relative resolution is unavailable");
    }
    if (typeof root !== "string" || root.includes("\0")) refuse("INVALID_ARGUMENT", "workspace root must be a string without NUL");
    if (!path.isAbsolute(root)) refuse("INVALID_ARGUMENT", "workspace root must be an absolute path");
    if (path.posix.normalize(root) !== root || (root.length > 1 && root.endsWith("/"))) {
      refuse("INVALID_ARGUMENT", "workspace root must be a normalised path (no '.', '..', '//' or trailing '/')");
    }
    const components = root.split("/").filter(Boolean);
    if (components.length === 0) refuse("POLICY_REFUSED", "the filesystem root cannot be a workspace root");
    const limits = { ...DEFAULT_WORKSPACE_LIMITS, ...options.limits };
    let fd = fs.openSync("/", O_DIR);
    try {
      for (const [i, name] of components.entries()) {
        const shown = "/" + components.slice(0, i + 1).join("/");
        let st: fs.Stats;
        try {
          st = fs.lstatSync(fdPath(fd, name));
        } catch (e) {
          if (errnoOf(e) === "ENOENT") refuse("NOT_FOUND", `workspace root ${root} does not exist (${shown} is missing)`);
          throw e;
        }
        if (st.isSymbolicLink()) refuse("POLICY_REFUSED", `workspace root ${root} has a symlinked component ${shown}; configure the real path`);
        if (!st.isDirectory()) refuse("INVALID_ARGUMENT", `workspace root component ${shown} is not a directory`);
        const next = fs.openSync(fdPath(fd, name), O_DIR);
        fs.closeSync(fd);
        fd = next;
        if (!sameInode(fs.fstatSync(fd), st)) refuse("POLICY_REFUSED", `workspace root component ${shown} changed during the check`);
      }
      const identity = fs.fstatSync(fd);
      return new Workspace(root, components, identity, { ...options, limits });
    } finally {
      closeQuietly(fd);
    }
  }

  /** Reads up to `limit` bytes from `offset` of a regular file. */
  read(relPath: string, opts: { offset?: number; limit?: number; context?: number } = {}): ReadResult {
    const parts = parseRelativePath(relPath, this.limits);
    if (parts.length === 0) refuse("INVALID_ARGUMENT", "path names the workspace root, not a file", relPath);
    const { offset, limit } = checkPaging(opts.offset, opts.limit, this.limits.defaultReadBytes, this.limits.maxReadBytes);
    const name = parts[parts.length - 1] as string;
    const shown = parts.join("/");
    const dir = this.walk(parts.slice(0, -1), false);
    let pathFd: number | undefined;
    let fd: number | undefined;
    try {
      const st = this.lstatTarget(dir, name, shown);
      if (st === null) refuse("NOT_FOUND", `${shown} does not exist`, shown);
      this.checkReadable(st, shown);
      this.onStage?.("target-checked", shown);
      // O_PATH: a handle on exactly this directory entry without opening it for
      // I/O, so a fifo or device swapped in after the lstat is never opened.
      try {
        pathFd = fs.openSync(fdPath(dir, name), O_PATH | C.O_NOFOLLOW);
      } catch (e) {
        if (errnoOf(e) === "ENOENT") refuse("NOT_FOUND", `${shown} disappeared during the check`, shown);
        throw e;
      }
      const pinned = fs.fstatSync(pathFd);
      if (!sameInode(pinned, st)) refuse("POLICY_REFUSED", `${shown} was replaced during the check (race detected)`, shown);
      this.checkReadable(pinned, shown);
      this.assertInside(dir, shown);
      // Re-open the pinned inode itself (the magic link names the inode, not a path).
      fd = fs.openSync(fdPath(pathFd), C.O_RDONLY | C.O_NONBLOCK);
      const live = fs.fstatSync(fd);
      if (!sameInode(live, st) || !live.isFile()) refuse("POLICY_REFUSED", `${shown} was replaced during the check (race detected)`, shown);
      const total = live.size;
      const context = opts.context ?? 0;
      if (!Number.isSafeInteger(context) || context < 0) refuse("INVALID_ARGUMENT", "context must be a non-negative integer");
      const from = Math.max(0, Math.min(offset, total) - context);
      const want = Math.max(0, Math.min(limit, total - offset));
      const wideEnd = Math.min(total, offset + want + context);
      const wideWant = Math.max(0, wideEnd - from);
      const wide = Buffer.alloc(wideWant);
      let wideGot = 0;
      while (wideGot < wideWant) {
        const n = fs.readSync(fd, wide, wideGot, wideWant - wideGot, from + wideGot);
        if (n === 0) break;
        wideGot += n;
      }
      const read = wide.subarray(0, wideGot);
      // The file may have shrunk since fstat: the page is what was actually read.
      const slice = read.subarray(Math.min(read.length, offset - from), Math.min(read.length, offset - from + want));
      const got = slice.length;
      return {
        path: shown,
        content: slice,
        offset,
        bytes: got,
        total_bytes: total,
        has_more: offset + got < total,
        sha256: createHash("sha256").update(slice).digest("hex"),
        ...(context > 0 ? { around: { bytes: read, from } } : {}),
      };
    } finally {
      closeQuietly(fd);
      closeQuietly(pathFd);
      closeQuietly(dir);
    }
  }

  /**
   * Replaces (or creates) a regular file atomically: temp file in the same
   * directory, fsync, rename, fsync of the directory. Readers see the old or
   * the new content, never a mix. New files take the parent directory's owner
   * when the guest runs as root.
   */
  write(relPath: string, content: Uint8Array, opts: { createParents?: boolean } = {}): WriteResult {
    try {
      return this.writeFile(relPath, content, opts);
    } catch (e) {
      // The kernel's bound on the workspace (its image's size and inode count) is a stated refusal.
      if (errnoOf(e) === "ENOSPC" || errnoOf(e) === "EDQUOT") throw this.full(relPath, content.byteLength);
      throw e;
    }
  }

  /**
   * WORKSPACE_FULL with the file system's size and use in bytes and inodes
   * (statfs of the root the workspace was opened on), and what was asked.
   */
  private full(relPath: string, asked: number): LeaseholdError {
    const figures: Record<string, number> = { bytes_asked: asked };
    let text: string;
    try {
      const s = fs.statfsSync(this.root);
      const bytesTotal = s.blocks * s.bsize;
      const bytesFree = s.bavail * s.bsize;
      Object.assign(figures, { bytes_total: bytesTotal, bytes_used: bytesTotal - s.bfree * s.bsize, bytes_free: bytesFree, inodes_total: s.files, inodes_used: s.files - s.ffree, inodes_free: s.ffree });
      text = `: ${bytesFree} of ${bytesTotal} bytes free, ${s.ffree} of ${s.files} inodes free`;
    } catch {
      text = " (its size and use could not be read)";
    }
    return new LeaseholdError("WORKSPACE_FULL", `${TIER_PREFIX}: the workspace is full${text}; ${asked} bytes to ${JSON.stringify(relPath)} were not written (free space or inodes in the workspace, or raise workspace_max_bytes in the host ceiling)`, {
      tier: "guest",
      details: { path: relPath, ...figures },
    });
  }

  private writeFile(relPath: string, content: Uint8Array, opts: { createParents?: boolean }): WriteResult {
    const parts = parseRelativePath(relPath, this.limits);
    if (parts.length === 0) refuse("INVALID_ARGUMENT", "path names the workspace root, not a file", relPath);
    if (!(content instanceof Uint8Array)) refuse("INVALID_ARGUMENT", "content must be bytes");
    if (content.byteLength > this.limits.maxWriteBytes) {
      refuse("POLICY_REFUSED", `content is ${content.byteLength} bytes; the write limit is ${this.limits.maxWriteBytes}`, relPath);
    }
    const name = parts[parts.length - 1] as string;
    if (name.startsWith(TEMP_PREFIX)) refuse("INVALID_ARGUMENT", `names starting with ${TEMP_PREFIX} are reserved`, relPath);
    const shown = parts.join("/");
    const dir = this.walk(parts.slice(0, -1), opts.createParents ?? true);
    let fd: number | undefined;
    let tempName: string | undefined;
    try {
      const existing = this.lstatTarget(dir, name, shown);
      if (existing !== null) {
        if (existing.isSymbolicLink()) refuse("POLICY_REFUSED", `${shown} is a symlink; writing over a symlink is refused`, shown);
        if (existing.isDirectory()) refuse("INVALID_ARGUMENT", `${shown} is a directory`, shown);
        if (!existing.isFile()) refuse("POLICY_REFUSED", `${shown} is not a regular file (${entryType(existing)})`, shown);
      }
      this.onStage?.("target-checked", shown);
      const dirStat = fs.fstatSync(dir);
      tempName = `${TEMP_PREFIX}${randomBytes(12).toString("hex")}`;
      const mode = existing ? existing.mode & 0o777 : 0o644;
      fd = fs.openSync(fdPath(dir, tempName), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
      if (process.getuid?.() === 0) fs.fchownSync(fd, existing?.uid ?? dirStat.uid, existing?.gid ?? dirStat.gid);
      fs.fchmodSync(fd, mode);
      let done = 0;
      while (done < content.byteLength) done += fs.writeSync(fd, content, done, content.byteLength - done);
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      fd = undefined;
      this.onStage?.("before-commit", shown);
      this.assertInside(dir, shown);
      // rename(2) does not follow a symlink at the destination: one swapped in
      // since the check is replaced, and nothing is written through it.
      fs.renameSync(fdPath(dir, tempName), fdPath(dir, name));
      tempName = undefined;
      fs.fsyncSync(dir);
      return {
        path: shown,
        bytes: content.byteLength,
        sha256: createHash("sha256").update(content).digest("hex"),
        created: existing === null,
      };
    } catch (e) {
      if (e instanceof LeaseholdError) throw e;
      if (errnoOf(e) === "EISDIR") refuse("INVALID_ARGUMENT", `${shown} is a directory`, shown);
      throw e;
    } finally {
      closeQuietly(fd);
      if (tempName !== undefined) {
        try {
          fs.unlinkSync(fdPath(dir, tempName));
        } catch {
          /* nothing to clean */
        }
      }
      closeQuietly(dir);
    }
  }

  /**
   * Checks that `relPath` names an existing directory of the workspace by the
   * same rules as every operation (no absolute path, no `..`, no symlinked
   * component, no mount point, still inside the root) and returns its
   * normalised relative form ("" for the root). Nothing is created. A missing
   * component is NOT_FOUND, naming it.
   */
  directory(relPath: string): string {
    const parts = parseRelativePath(relPath, this.limits);
    const dir = this.walk(parts, false);
    try {
      this.assertInside(dir, parts.join("/") || ".");
      return parts.join("/");
    } finally {
      closeQuietly(dir);
    }
  }

  /** Lists a directory, sorted by name, paged. Entries are lstat'ed (symlinks are reported, not followed). */
  list(relPath: string, opts: { offset?: number; limit?: number } = {}): ListResult {
    const parts = parseRelativePath(relPath, this.limits);
    const { offset, limit } = checkPaging(opts.offset, opts.limit, this.limits.defaultListLimit, this.limits.maxListLimit);
    const shown = parts.join("/");
    const dir = this.walk(parts, false);
    let handle: fs.Dir | undefined;
    try {
      this.assertInside(dir, shown || ".");
      handle = fs.opendirSync(fdPath(dir), { encoding: "buffer" as BufferEncoding });
      const names: Buffer[] = [];
      for (;;) {
        const entry = handle.readSync();
        if (entry === null) break;
        if (names.length >= this.limits.maxListScan) {
          refuse("POLICY_REFUSED", `directory ${shown || "."} has more than ${this.limits.maxListScan} entries; listing refused`, shown);
        }
        names.push(entry.name as unknown as Buffer);
      }
      names.sort(Buffer.compare);
      const page = names.slice(offset, offset + limit);
      const utf8 = new TextDecoder("utf-8", { fatal: true });
      const entries: ListEntry[] = [];
      for (const raw of page) {
        let name: string;
        let encoding: ListEntry["name_encoding"] = "utf8";
        try {
          name = utf8.decode(raw);
        } catch {
          name = raw.toString("base64");
          encoding = "base64";
        }
        let st: fs.Stats | null = null;
        try {
          st = fs.lstatSync(Buffer.concat([Buffer.from(`${fdPath(dir)}/`), raw]));
        } catch {
          /* removed since readdir */
        }
        if (st === null) continue;
        const item: ListEntry = { name, name_encoding: encoding, type: entryType(st) };
        if (st.isFile()) item.size = st.size;
        entries.push(item);
      }
      return { path: shown || ".", entries, offset, limit, total: names.length, has_more: offset + page.length < names.length };
    } finally {
      if (handle) {
        try {
          handle.closeSync();
        } catch {
          /* closed */
        }
      }
      closeQuietly(dir);
    }
  }

  // -------------------------------------------------------------------------

  /** Opens the root by walking from "/" and checks it is still the pinned directory. */
  private openRoot(): number {
    let fd = fs.openSync("/", O_DIR);
    try {
      for (const name of this.rootComponents) {
        let next: number;
        try {
          next = fs.openSync(fdPath(fd, name), O_DIR);
        } catch (e) {
          const code = errnoOf(e);
          if (code === "ELOOP" || code === "ENOTDIR") refuse("POLICY_REFUSED", `workspace root ${this.root} now has a symlinked or non-directory component`);
          if (code === "ENOENT") refuse("NOT_FOUND", `workspace root ${this.root} no longer exists`);
          throw e;
        }
        fs.closeSync(fd);
        fd = next;
      }
      if (!sameInode(fs.fstatSync(fd), this.rootIdentity)) refuse("POLICY_REFUSED", `workspace root ${this.root} was replaced since it was opened`);
      const result = fd;
      fd = -1;
      return result;
    } finally {
      if (fd !== -1) closeQuietly(fd);
    }
  }

  /**
   * Descends through `parts` from the root, one fd-relative step at a time,
   * creating missing directories when `create` (only after every existing
   * ancestor passed). Returns an fd for the last directory; the caller closes it.
   */
  private walk(parts: string[], create: boolean): number {
    let fd = this.openRoot();
    try {
      for (const [i, name] of parts.entries()) {
        const shown = parts.slice(0, i + 1).join("/");
        let st = this.lstatTarget(fd, name, shown);
        let made = false;
        if (st === null) {
          if (!create) refuse("NOT_FOUND", `${shown} does not exist`, shown);
          // mkdir(2) never follows a symlink at its last component (EEXIST),
          // and the /proc/self/fd/<dir>/ prefix resolves to the directory we hold.
          try {
            fs.mkdirSync(fdPath(fd, name), 0o700);
            made = true;
          } catch (e) {
            if (errnoOf(e) !== "EEXIST") throw e;
          }
          st = this.lstatTarget(fd, name, shown);
          if (st === null) refuse("NOT_FOUND", `${shown} disappeared while being created`, shown);
        }
        if (st.isSymbolicLink()) refuse("POLICY_REFUSED", `symlinked path component ${shown} refused`, shown);
        if (!st.isDirectory()) refuse("INVALID_ARGUMENT", `path component ${shown} is not a directory`, shown);
        if (st.dev !== this.rootIdentity.dev) refuse("POLICY_REFUSED", `path component ${shown} is on another filesystem (mount point)`, shown);
        this.onStage?.("component-checked", shown);
        const next = this.openChildDir(fd, name, shown, st);
        const parent = fs.fstatSync(fd);
        fs.closeSync(fd);
        fd = next;
        if (made) this.adoptNewDirectory(fd, st, parent, shown);
      }
      const result = fd;
      fd = -1;
      return result;
    } finally {
      if (fd !== -1) closeQuietly(fd);
    }
  }

  /**
   * Opens `name` inside the directory fd as a directory, never following a
   * symlink, and checks it is the inode `expected` (what lstat saw).
   *
   * Why this is openat(dir, name, O_NOFOLLOW) even though Node has no openat:
   * `/proc/self/fd/<dir>` is a magic link the kernel resolves to the very
   * directory the fd holds (not to a path string that could have been
   * renamed), so the only component left to resolve is `name`, which is a
   * single component (parseRelativePath refused "/" and ".." in it) and is
   * never followed under O_NOFOLLOW (ELOOP). What openat2's
   * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS adds over this — refusing symlinks
   * and ".." in the *middle* of a path — cannot arise with one component.
   * The inode check closes the remaining gap: an entry swapped for another
   * directory between the lstat and the open is refused, not used.
   */
  private openChildDir(dir: number, name: string, shown: string, expected: fs.Stats): number {
    let next: number;
    try {
      next = fs.openSync(fdPath(dir, name), O_DIR);
    } catch (e) {
      const code = errnoOf(e);
      if (code === "ELOOP" || code === "ENOTDIR") {
        refuse("POLICY_REFUSED", `path component ${shown} became a symlink during the check (race detected)`, shown);
      }
      if (code === "ENOENT") refuse("NOT_FOUND", `${shown} disappeared during the check`, shown);
      throw e;
    }
    if (!sameInode(fs.fstatSync(next), expected)) {
      closeQuietly(next);
      refuse("POLICY_REFUSED", `path component ${shown} was replaced during the check (race detected)`, shown);
    }
    return next;
  }

  /**
   * A directory this walk just made: give it its parent's owner and mode 0755,
   * on the descriptor. The attack this prevents: chown by path
   * follows a symlink at the last component, so a job that can write the
   * parent swaps the new entry for a symlink (renameat2 RENAME_EXCHANGE)
   * between mkdir and chown, and root chowns a file outside the workspace to
   * a lease uid. fchown/fchmod act on the inode we hold, whatever the name
   * points to by now. It must still look freshly made by us — root-owned
   * (no lease uid can create a root-owned directory) and without sub-directories (nlink ≤ 2) —
   * so a directory swapped in between mkdir and the open is refused instead
   * of being handed to the parent's owner.
   */
  private adoptNewDirectory(fd: number, st: fs.Stats, parent: fs.Stats, shown: string): void {
    const euid = process.geteuid?.() ?? -1;
    // nlink > 2: it has sub-directories, so it is not the empty one we made.
    if (st.uid !== euid || st.nlink > 2) refuse("POLICY_REFUSED", `${shown} was replaced while being created (race detected)`, shown);
    if (euid === 0) fs.fchownSync(fd, parent.uid, parent.gid);
    fs.fchmodSync(fd, 0o755);
  }

  /** lstat of `name` inside the directory fd, or null if absent. */
  private lstatTarget(dir: number, name: string, shown: string): fs.Stats | null {
    try {
      return fs.lstatSync(fdPath(dir, name));
    } catch (e) {
      const code = errnoOf(e);
      if (code === "ENOENT") return null;
      if (code === "ENOTDIR") refuse("INVALID_ARGUMENT", `a component of ${shown} is not a directory`, shown);
      if (code === "ENAMETOOLONG") refuse("INVALID_ARGUMENT", `${shown} is too long`, shown);
      throw e;
    }
  }

  private checkReadable(st: fs.Stats, shown: string): void {
    if (st.isSymbolicLink()) refuse("POLICY_REFUSED", `${shown} is a symlink; symlinks are not followed`, shown);
    if (st.isDirectory()) refuse("INVALID_ARGUMENT", `${shown} is a directory (use fs_list)`, shown);
    if (!st.isFile()) refuse("POLICY_REFUSED", `${shown} is not a regular file (${entryType(st)}); only regular files are read`, shown);
    if (st.nlink > 1) refuse("POLICY_REFUSED", `${shown} has ${st.nlink} hard links and may alias a file outside the workspace`, shown);
    if (st.dev !== this.rootIdentity.dev) refuse("POLICY_REFUSED", `${shown} is on another filesystem (mount point)`, shown);
  }

  /** Where the kernel says the directory fd is now: must be the root or below it. */
  private assertInside(dir: number, shown: string): void {
    let where: string;
    try {
      where = fs.readlinkSync(fdPath(dir));
    } catch {
      return refuse("POLICY_REFUSED", `cannot confirm where ${shown} resolves`, shown);
    }
    if (where !== this.root && !where.startsWith(`${this.root}/`)) {
      refuse("POLICY_REFUSED", `${shown} resolves outside the workspace root (resolved escape)`, shown);
    }
  }
}
