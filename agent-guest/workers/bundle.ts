/**
 * Worker bundles: a capability worker is a directory of files (bundle.json
 * and the entry it names) whose identity is its content digest
 * (`bundleDigest`, bundle-digest.mjs — the one function build, guest and hub
 * use). The guest installs a shipped bundle once into a content-addressed,
 * root-only store and launches by verified digest: every file is read back
 * by descriptor and re-hashed at launch, and the bytes that were hashed are
 * the bytes piped to the sandbox — there is no path that is checked and then
 * run, so a file changed after install is refused (WORKER_DIGEST_MISMATCH),
 * never executed.
 *
 * Store layout: `<storeRoot>/sha256-<hex>/` (root-owned; store root 0700,
 * entry directories 0555, files 0444). An entry is written into a fresh
 * temporary directory of the store by descriptor, then renamed into place;
 * an entry already there is re-verified, never trusted.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { LeaseholdError } from "../../server/trust";
import { bundleDigest, bundlePathProblem } from "./bundle-digest.mjs";

export { bundleDigest, bundlePathProblem } from "./bundle-digest.mjs";

export const BUNDLE_SCHEMA = "leasehold.worker-bundle/1";
export const BUNDLE_MANIFEST = "bundle.json";

/** Bounds on what a bundle may hold: a worker is one bundled file plus its manifest, with room to spare. */
export const BUNDLE_LIMITS = {
  maxFiles: 64,
  maxDepth: 4,
  maxFileBytes: 16 * 1024 * 1024,
  maxTotalBytes: 32 * 1024 * 1024,
  maxManifestBytes: 4096,
} as const;

export interface BundleFile {
  path: string;
  bytes: Buffer;
}

export interface BundleManifest {
  schema: typeof BUNDLE_SCHEMA;
  capability: string;
  version: string;
  runtime: "node";
  entry: string;
}

export interface VerifiedBundle {
  digest: string;
  manifest: BundleManifest;
  /** The entry file's bytes, exactly those that were hashed. */
  entry: Buffer;
}

const DIGEST_PATTERN = /^sha256:([0-9a-f]{64})$/;
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_WRONLY, O_CREAT, O_EXCL } = fs.constants;

function refused(message: string, details?: Record<string, unknown>): LeaseholdError {
  return new LeaseholdError("INVALID_ARGUMENT", `worker bundle: ${message}`, { tier: "guest", ...(details ? { details } : {}) });
}

function mismatch(message: string, details: Record<string, unknown>): LeaseholdError {
  return new LeaseholdError("WORKER_DIGEST_MISMATCH", `worker bundle: ${message}; nothing was launched`, { tier: "guest", details });
}

/** The store entry name of a digest (`sha256-<hex>`), or a refusal for anything that is not one. */
export function storeEntryName(digest: string): string {
  const m = DIGEST_PATTERN.exec(digest);
  if (m === null) throw refused(`${JSON.stringify(digest)} is not a sha256:<64 hex> digest`);
  return `sha256-${m[1]}`;
}

/** Parses and checks bundle.json against the files present. */
export function parseBundleManifest(files: readonly BundleFile[]): BundleManifest {
  const raw = files.find((f) => f.path === BUNDLE_MANIFEST);
  if (raw === undefined) throw refused(`no ${BUNDLE_MANIFEST}`);
  if (raw.bytes.length > BUNDLE_LIMITS.maxManifestBytes) throw refused(`${BUNDLE_MANIFEST} is larger than ${BUNDLE_LIMITS.maxManifestBytes} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.bytes.toString("utf8"));
  } catch {
    throw refused(`${BUNDLE_MANIFEST} is not JSON`);
  }
  const m = parsed as Partial<Record<keyof BundleManifest, unknown>> | null;
  if (m === null || typeof m !== "object" || Array.isArray(m)) throw refused(`${BUNDLE_MANIFEST} is not an object`);
  const keys = Object.keys(m).sort().join(",");
  if (keys !== "capability,entry,runtime,schema,version") throw refused(`${BUNDLE_MANIFEST} must have exactly capability, entry, runtime, schema and version (has ${keys})`);
  if (m.schema !== BUNDLE_SCHEMA) throw refused(`${BUNDLE_MANIFEST} schema must be ${BUNDLE_SCHEMA}`);
  if (m.runtime !== "node") throw refused(`${BUNDLE_MANIFEST} runtime must be "node"`);
  if (typeof m.capability !== "string" || !/^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/.test(m.capability)) throw refused(`${BUNDLE_MANIFEST} capability is not a capability id`);
  if (typeof m.version !== "string" || m.version.length === 0 || m.version.length > 64) throw refused(`${BUNDLE_MANIFEST} version is missing`);
  if (typeof m.entry !== "string" || bundlePathProblem(m.entry) !== null || m.entry === BUNDLE_MANIFEST) throw refused(`${BUNDLE_MANIFEST} entry is not a file name of the bundle`);
  if (!files.some((f) => f.path === m.entry)) throw refused(`${BUNDLE_MANIFEST} names entry ${JSON.stringify(m.entry)}, which the bundle does not hold`);
  return { schema: BUNDLE_SCHEMA, capability: m.capability, version: m.version, runtime: "node", entry: m.entry };
}

/** A directory held by descriptor: entries are reached as /proc/self/fd/<fd>/<name>, one component at a time. */
function openDirectory(where: string): number {
  return fs.openSync(where, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

const under = (dirFd: number, name: string): string => `/proc/self/fd/${dirFd}/${name}`;

interface WalkOptions {
  /** Refuse an entry (file or directory) whose mode has any write bit: the store's files are 0444, its directories 0555. */
  readOnly: boolean;
  /** Refuse a file or directory not owned by this uid. */
  owner?: number;
  /** What a refusal is: a bad source is INVALID_ARGUMENT, a bad store entry WORKER_DIGEST_MISMATCH. */
  fail: (message: string, details: Record<string, unknown>) => LeaseholdError;
}

/**
 * Reads every file below a held directory, strictly: regular files and
 * directories only (a symlink, fifo, socket or device anywhere is refused,
 * never followed or opened for I/O), each file opened O_NOFOLLOW relative to
 * its held parent and checked to be the inode lstat saw, with one link;
 * bounded in count, depth and size.
 */
function walk(dirFd: number, prefix: string, depth: number, out: BundleFile[], total: { bytes: number }, o: WalkOptions): void {
  if (depth > BUNDLE_LIMITS.maxDepth) throw o.fail(`deeper than ${BUNDLE_LIMITS.maxDepth} directories`, { path: prefix });
  const names = fs.readdirSync(`/proc/self/fd/${dirFd}`).sort();
  for (const name of names) {
    const rel = prefix === "" ? name : `${prefix}/${name}`;
    const problem = bundlePathProblem(rel);
    if (problem !== null) throw o.fail(problem, { path: rel });
    const seen = fs.lstatSync(under(dirFd, name));
    if (o.owner !== undefined && seen.uid !== o.owner) throw o.fail(`${rel} is not owned by uid ${o.owner}`, { path: rel });
    if (o.readOnly && (seen.mode & 0o222) !== 0) throw o.fail(`${rel} is writable (mode ${(seen.mode & 0o777).toString(8)})`, { path: rel });
    if (seen.isDirectory()) {
      const fd = openDirectory(under(dirFd, name));
      try {
        const st = fs.fstatSync(fd);
        if (st.ino !== seen.ino || st.dev !== seen.dev) throw o.fail(`${rel} changed while it was read`, { path: rel });
        walk(fd, rel, depth + 1, out, total, o);
      } finally {
        fs.closeSync(fd);
      }
      continue;
    }
    if (!seen.isFile()) throw o.fail(`${rel} is not a regular file or directory`, { path: rel });
    if (out.length >= BUNDLE_LIMITS.maxFiles) throw o.fail(`more than ${BUNDLE_LIMITS.maxFiles} files`, { path: rel });
    let fd: number;
    try {
      fd = fs.openSync(under(dirFd, name), O_RDONLY | O_NOFOLLOW);
    } catch (error) {
      throw o.fail(`${rel} could not be opened without following a link (${(error as NodeJS.ErrnoException).code ?? "error"})`, { path: rel });
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile() || st.ino !== seen.ino || st.dev !== seen.dev) throw o.fail(`${rel} changed while it was read`, { path: rel });
      if (st.nlink !== 1) throw o.fail(`${rel} has ${st.nlink} links`, { path: rel });
      if (st.size > BUNDLE_LIMITS.maxFileBytes) throw o.fail(`${rel} is larger than ${BUNDLE_LIMITS.maxFileBytes} bytes`, { path: rel });
      total.bytes += st.size;
      if (total.bytes > BUNDLE_LIMITS.maxTotalBytes) throw o.fail(`larger than ${BUNDLE_LIMITS.maxTotalBytes} bytes in all`, { path: rel });
      const bytes = fs.readFileSync(fd);
      // The size is re-checked on the bytes read: a file that grew after fstat is not trusted either.
      if (bytes.length !== st.size) throw o.fail(`${rel} changed size while it was read`, { path: rel });
      out.push({ path: rel, bytes });
    } finally {
      fs.closeSync(fd);
    }
  }
}

function readHeld(dirFd: number, o: WalkOptions): BundleFile[] {
  const files: BundleFile[] = [];
  walk(dirFd, "", 0, files, { bytes: 0 }, o);
  if (files.length === 0) throw o.fail("the bundle holds no file", {});
  return files;
}

/** Reads a bundle directory (the shipped one in dist/workers/<id>/, or a test's) strictly, with its digest. */
export function readBundleDir(dir: string): { files: BundleFile[]; digest: string; manifest: BundleManifest } {
  let fd: number;
  try {
    fd = openDirectory(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new LeaseholdError("NOT_FOUND", `worker bundle: ${dir} does not exist`, { tier: "guest" });
    throw refused(`${dir} is not a directory that can be opened without following a link (${code ?? "error"})`);
  }
  try {
    const files = readHeld(fd, { readOnly: false, fail: refused });
    const manifest = parseBundleManifest(files);
    return { files, digest: bundleDigest(files), manifest };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Opens the store root, creating it 0700 when absent, and refuses one that is
 * a symlink, not a directory, not owned by this uid or open to anyone else:
 * whoever can write names in the store could swap an entry.
 */
function openStoreRoot(storeRoot: string, create: boolean): number {
  if (create) {
    try {
      fs.mkdirSync(storeRoot, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  let fd: number;
  try {
    fd = openDirectory(storeRoot);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new LeaseholdError("NOT_FOUND", `worker store ${storeRoot} does not exist`, { tier: "guest" });
    throw new LeaseholdError("CONFIG_INVALID", `worker store ${storeRoot} cannot be opened as a directory without following a link (${code ?? "error"})`, { tier: "guest" });
  }
  const st = fs.fstatSync(fd);
  const uid = process.getuid?.() ?? st.uid;
  if (st.uid !== uid || (st.mode & 0o077) !== 0) {
    fs.closeSync(fd);
    throw new LeaseholdError("CONFIG_INVALID", `worker store ${storeRoot} must be owned by uid ${uid} and closed to group and others (mode 0700); it is uid ${st.uid} mode ${(st.mode & 0o777).toString(8)}`, { tier: "guest" });
  }
  return fd;
}

function verifyEntry(rootFd: number, digest: string): VerifiedBundle {
  const name = storeEntryName(digest);
  let fd: number;
  try {
    fd = openDirectory(under(rootFd, name));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new LeaseholdError("NOT_FOUND", `worker bundle ${digest} is not installed on this host`, { tier: "guest", details: { expected: digest } });
    throw mismatch(`store entry ${name} is not a directory that opens without following a link (${code ?? "error"})`, { expected: digest });
  }
  try {
    const dirStat = fs.fstatSync(fd);
    const uid = process.getuid?.() ?? dirStat.uid;
    if ((dirStat.mode & 0o222) !== 0 || dirStat.uid !== uid) throw mismatch(`store entry ${name} is writable or not ours`, { expected: digest });
    const files = readHeld(fd, { readOnly: true, owner: uid, fail: (message, details) => mismatch(message, { ...details, expected: digest }) });
    const actual = bundleDigest(files);
    if (actual !== digest) throw mismatch(`store entry ${name} hashes to ${actual}`, { expected: digest, actual });
    let manifest: BundleManifest;
    try {
      manifest = parseBundleManifest(files);
    } catch (error) {
      throw mismatch(`store entry ${name}: ${(error as Error).message}`, { expected: digest });
    }
    const entry = files.find((f) => f.path === manifest.entry) as BundleFile;
    return { digest, manifest, entry: entry.bytes };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The bundle stored under `digest`, read by descriptor (O_NOFOLLOW every
 * component) and re-hashed now; the returned entry bytes are the ones that
 * were hashed. Anything else than a byte-identical, read-only, root-owned
 * entry — a changed, added or removed file, a symlink or other file type
 * swapped in — is WORKER_DIGEST_MISMATCH; an absent one NOT_FOUND.
 */
export function loadVerifiedBundle(storeRoot: string, digest: string): VerifiedBundle {
  storeEntryName(digest);
  const rootFd = openStoreRoot(storeRoot, false);
  try {
    return verifyEntry(rootFd, digest);
  } finally {
    fs.closeSync(rootFd);
  }
}

/** Writes the files into a held, empty directory by descriptor: sub-directories 0700 until sealed, files 0444. */
function writeFiles(dirFd: number, files: readonly BundleFile[]): void {
  const dirs = new Map<string, number>([["", dirFd]]);
  const opened: number[] = [];
  const dirOf = (rel: string): number => {
    const known = dirs.get(rel);
    if (known !== undefined) return known;
    const parentRel = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "";
    const parent = dirOf(parentRel);
    const name = rel.slice(rel.lastIndexOf("/") + 1);
    fs.mkdirSync(under(parent, name), { mode: 0o700 });
    const fd = openDirectory(under(parent, name));
    opened.push(fd);
    dirs.set(rel, fd);
    return fd;
  };
  try {
    for (const file of files) {
      const slash = file.path.lastIndexOf("/");
      const parent = dirOf(slash < 0 ? "" : file.path.slice(0, slash));
      const fd = fs.openSync(under(parent, file.path.slice(slash + 1)), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o444);
      try {
        fs.writeSync(fd, file.bytes);
        fs.fchmodSync(fd, 0o444);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
    // Seal deepest first, so a directory is never read-only while we still write below it.
    for (const fd of opened.reverse()) {
      fs.fchmodSync(fd, 0o555);
      fs.fsyncSync(fd);
    }
  } finally {
    for (const fd of opened) fs.closeSync(fd);
  }
}

/** Removes a directory tree inside the root-only store (only we can name things there). */
function removeInStore(rootFd: number, name: string): void {
  const target = under(rootFd, name);
  const chmodTree = (p: string): void => {
    const st = fs.lstatSync(p);
    if (!st.isDirectory()) return;
    fs.chmodSync(p, 0o700);
    for (const child of fs.readdirSync(p)) chmodTree(path.join(p, child));
  };
  try {
    chmodTree(target);
  } catch {
    // Already gone or unreadable: rmSync below says what is left.
  }
  fs.rmSync(target, { recursive: true, force: true });
}

/**
 * Installs the bundle in `sourceDir` into the store and returns its verified
 * form. Read strictly, hashed, written into a fresh temporary directory of
 * the store by descriptor, sealed read-only, renamed to `sha256-<hex>`. When
 * the entry already exists it is re-verified; one that fails (tampered,
 * half-written by a crash) is removed and written afresh.
 */
export function installBundle(sourceDir: string, storeRoot: string): VerifiedBundle {
  const source = readBundleDir(sourceDir);
  const name = storeEntryName(source.digest);
  const rootFd = openStoreRoot(storeRoot, true);
  try {
    try {
      return verifyEntry(rootFd, source.digest);
    } catch (error) {
      if (!(error instanceof LeaseholdError)) throw error;
      if (error.code === "WORKER_DIGEST_MISMATCH") removeInStore(rootFd, name);
      else if (error.code !== "NOT_FOUND") throw error;
    }
    const tmpName = `.tmp-${randomBytes(8).toString("hex")}`;
    fs.mkdirSync(under(rootFd, tmpName), { mode: 0o700 });
    const tmpFd = openDirectory(under(rootFd, tmpName));
    try {
      writeFiles(tmpFd, source.files);
      fs.fchmodSync(tmpFd, 0o555);
      fs.fsyncSync(tmpFd);
    } catch (error) {
      fs.closeSync(tmpFd);
      removeInStore(rootFd, tmpName);
      throw error;
    }
    fs.closeSync(tmpFd);
    try {
      fs.renameSync(under(rootFd, tmpName), under(rootFd, name));
    } catch (error) {
      // Another install got there first: its entry is verified below like any other.
      removeInStore(rootFd, tmpName);
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
    }
    fs.fsyncSync(rootFd);
    return verifyEntry(rootFd, source.digest);
  } finally {
    fs.closeSync(rootFd);
  }
}
