/**
 * The guest's worker-bundle store. A bundle is read and digested by the
 * contract's reader (server/trust/bundle.ts, the code the hub pins digests
 * with). The guest installs a shipped bundle once into a content-addressed,
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
import { bundleDigest, bundleRefusal, openDirectory, parseBundleManifest, readBundleDir, readHeld, under, type BundleFile, type BundleManifest } from "../../server/trust/bundle";

export interface VerifiedBundle {
  digest: string;
  manifest: BundleManifest;
  /** The entry file's bytes, exactly those that were hashed. */
  entry: Buffer;
}

const DIGEST_PATTERN = /^sha256:([0-9a-f]{64})$/;
const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;

function mismatch(message: string, details: Record<string, unknown>): LeaseholdError {
  return new LeaseholdError("WORKER_DIGEST_MISMATCH", `worker bundle: ${message}; nothing was launched`, { tier: "guest", details });
}

/** The store entry name of a digest (`sha256-<hex>`), or a refusal for anything that is not one. */
export function storeEntryName(digest: string): string {
  const m = DIGEST_PATTERN.exec(digest);
  if (m === null) throw bundleRefusal(`${JSON.stringify(digest)} is not a sha256:<64 hex> digest`);
  return `sha256-${m[1]}`;
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
