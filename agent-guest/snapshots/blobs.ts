/**
 * The snapshot store's content-addressed bytes (docs/design.md#snapshots):
 * each regular file's content stored once, under
 * `<store>/blobs/<first two hex digits>/<sha256 hex>`, shared by every
 * snapshot of the guest that names it.
 *
 * A blob is written to `blobs/.tmp-<random>`, hashed as it is written (the
 * hash of the bytes in the blob, not of a second read of the source), made
 * 0400 and only then renamed to its hash: a half-written blob never has a
 * hash name, and a blob once named is never written again (a second copy of
 * the same bytes is dropped, not renamed over it). Which blobs stay is the
 * store's business (store.ts: mark and sweep over the retained manifests).
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { LeaseholdError } from "../../server/trust";
import { fdPath, hashFile } from "./tree";

const C = fs.constants;
const SHA256 = /^[0-9a-f]{64}$/;
const PREFIX = /^[0-9a-f]{2}$/;
const TMP = ".tmp-";

export type CopyMethod = "reflink" | "copy";

export const blobsDir = (store: string) => path.join(store, "blobs");

/** Where the blob of `sha256` lives; a name that is not a sha256 hex is refused (it would name a path). */
export function blobPath(store: string, sha256: string): string {
  if (!SHA256.test(sha256)) throw new LeaseholdError("INTERNAL", `snapshot store: ${JSON.stringify(sha256)} is not a sha256 hex`, { tier: "guest" });
  return path.join(store, "blobs", sha256.slice(0, 2), sha256);
}

export function writeAll(fd: number, chunk: Buffer): void {
  let off = 0;
  while (off < chunk.length) off += fs.writeSync(fd, chunk, off, chunk.length - off);
}

/** Prefix directories known to exist, per store: one `mkdir` per prefix, not per blob. */
const prefixesMade = new Map<string, Set<string>>();

/** Gives a written temporary its hash name, unless a blob of that name is stored already (then the temporary goes); whether it was new. */
function nameBlob(store: string, tmp: string, sha256: string): boolean {
  const dest = blobPath(store, sha256);
  // The guest is the store's only writer and store operations are synchronous: no blob of this name appears between the check and the rename.
  if (fs.existsSync(dest)) {
    fs.unlinkSync(tmp);
    return false;
  }
  const made = prefixesMade.get(store) ?? new Set<string>();
  prefixesMade.set(store, made);
  const prefix = sha256.slice(0, 2);
  if (!made.has(prefix)) {
    fs.mkdirSync(path.dirname(dest), { recursive: true, mode: 0o700 });
    made.add(prefix);
  }
  try {
    fs.renameSync(tmp, dest);
  } catch (error) {
    // The store was removed and made again under the same path since the prefix was made.
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" || !fs.existsSync(tmp)) throw error;
    fs.mkdirSync(path.dirname(dest), { recursive: true, mode: 0o700 });
    fs.renameSync(tmp, dest);
  }
  return true;
}

/** The clone's sha256, or undefined when the source's file system cannot clone into the store's (then nothing is left at `tmp`). */
function cloneInto(srcFd: number, tmp: string): string | undefined {
  try {
    // The source is reopened through its descriptor's magic link: the very inode held, no name looked up.
    fs.copyFileSync(fdPath(srcFd), tmp, C.COPYFILE_FICLONE_FORCE);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EXDEV" && code !== "EOPNOTSUPP" && code !== "ENOTSUP" && code !== "EINVAL") throw error;
    fs.rmSync(tmp, { force: true });
    return undefined;
  }
  const fd = fs.openSync(tmp, C.O_RDONLY | C.O_NOFOLLOW);
  try {
    fs.fchmodSync(fd, 0o400);
    return hashFile(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** One read-hash-write pass from the source into `tmp`; the hash is of the very bytes written. */
function copyInto(srcFd: number, tmp: string): string {
  // Made 0400: the mode binds later opens, not this descriptor, which writes the bytes once.
  const out = fs.openSync(tmp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o400);
  try {
    return hashFile(srcFd, (chunk) => writeAll(out, chunk));
  } finally {
    fs.closeSync(out);
  }
}

/**
 * Stores the bytes of the open regular file `srcFd` as a blob, by reflink
 * (then the clone is hashed; a source on a file system that cannot clone
 * into the store's is copied) or by one read-hash-write pass; returns the
 * sha256 hex of what the blob holds. A blob stored new is added to `created`.
 */
export function storeBlob(store: string, srcFd: number, method: CopyMethod, created: string[]): string {
  const tmp = path.join(blobsDir(store), `${TMP}${randomBytes(8).toString("hex")}`);
  try {
    const sha256 = (method === "reflink" ? cloneInto(srcFd, tmp) : undefined) ?? copyInto(srcFd, tmp);
    if (nameBlob(store, tmp, sha256)) created.push(sha256);
    return sha256;
  } catch (error) {
    fs.rmSync(tmp, { force: true });
    throw error;
  }
}

/**
 * Adopts an existing store file (a `leasehold.snapshot/1` snapshot's
 * `data/<n>`) as the blob of `expected`: linked under its hash name only
 * when its bytes hash to it. Returns whether the blob is stored.
 */
export function adoptBlob(store: string, file: string, expected: string): boolean {
  const dest = blobPath(store, expected);
  if (fs.existsSync(dest)) return true;
  const fd = fs.openSync(file, C.O_RDONLY | C.O_NOFOLLOW);
  try {
    if (hashFile(fd) !== expected) return false;
  } finally {
    fs.closeSync(fd);
  }
  fs.mkdirSync(path.dirname(dest), { recursive: true, mode: 0o700 });
  fs.linkSync(file, dest);
  fs.chmodSync(dest, 0o400);
  return true;
}

export interface SweepSeam {
  /** A test seam: called before each blob is unlinked, where a killed guest would stop a sweep. */
  beforeUnlink?: (sha256: string) => void;
}

/**
 * Removes every blob `named` does not hold, and every temporary a write
 * left (only while no store write is under way: store operations are
 * synchronous). Returns how many blobs went.
 */
export function sweepBlobs(store: string, named: ReadonlySet<string>, seam: SweepSeam = {}): number {
  const dir = blobsDir(store);
  if (!fs.existsSync(dir)) return 0;
  let removed = 0;
  for (const prefix of fs.readdirSync(dir)) {
    if (prefix.startsWith(TMP)) {
      fs.rmSync(path.join(dir, prefix), { force: true });
      continue;
    }
    if (!PREFIX.test(prefix)) continue;
    for (const name of fs.readdirSync(path.join(dir, prefix))) {
      if (named.has(name)) continue;
      seam.beforeUnlink?.(name);
      fs.rmSync(path.join(dir, prefix, name), { force: true });
      removed++;
    }
  }
  return removed;
}

/** Every stored blob's sha256 (tests and the sweep's accounting). */
export function storedBlobs(store: string): string[] {
  const dir = blobsDir(store);
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const prefix of fs.readdirSync(dir)) {
    if (!PREFIX.test(prefix)) continue;
    for (const name of fs.readdirSync(path.join(dir, prefix))) if (SHA256.test(name)) out.push(name);
  }
  return out.sort();
}
