/**
 * Worker bundles, as both executables read them: a capability worker is a
 * directory of files (bundle.json and the entry it names) whose identity is
 * its content digest (`bundleDigest`, bundle-digest.mjs — the one function
 * build, guest and hub use). The hub reads the shipped bundle to pin its
 * digest (server/capabilities/worker-pins.ts); the guest reads it to install
 * it into its root-only store and reads store entries back by the same walk
 * (agent-guest/workers/bundle.ts). Reading only: nothing here writes,
 * creates or removes a file.
 */
import fs from "node:fs";
import { LeaseholdError } from "./leasehold-error";
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

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;

/** A bundle that cannot be read as one (INVALID_ARGUMENT): the refusal reader and store share. */
export function bundleRefusal(message: string, details?: Record<string, unknown>): LeaseholdError {
  return new LeaseholdError("INVALID_ARGUMENT", `worker bundle: ${message}`, { tier: "guest", ...(details ? { details } : {}) });
}

/** Parses and checks bundle.json against the files present. */
export function parseBundleManifest(files: readonly BundleFile[]): BundleManifest {
  const raw = files.find((f) => f.path === BUNDLE_MANIFEST);
  if (raw === undefined) throw bundleRefusal(`no ${BUNDLE_MANIFEST}`);
  if (raw.bytes.length > BUNDLE_LIMITS.maxManifestBytes) throw bundleRefusal(`${BUNDLE_MANIFEST} is larger than ${BUNDLE_LIMITS.maxManifestBytes} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.bytes.toString("utf8"));
  } catch {
    throw bundleRefusal(`${BUNDLE_MANIFEST} is not JSON`);
  }
  const m = parsed as Partial<Record<keyof BundleManifest, unknown>> | null;
  if (m === null || typeof m !== "object" || Array.isArray(m)) throw bundleRefusal(`${BUNDLE_MANIFEST} is not an object`);
  const keys = Object.keys(m).sort().join(",");
  if (keys !== "capability,entry,runtime,schema,version") throw bundleRefusal(`${BUNDLE_MANIFEST} must have exactly capability, entry, runtime, schema and version (has ${keys})`);
  if (m.schema !== BUNDLE_SCHEMA) throw bundleRefusal(`${BUNDLE_MANIFEST} schema must be ${BUNDLE_SCHEMA}`);
  if (m.runtime !== "node") throw bundleRefusal(`${BUNDLE_MANIFEST} runtime must be "node"`);
  if (typeof m.capability !== "string" || !/^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/.test(m.capability)) throw bundleRefusal(`${BUNDLE_MANIFEST} capability is not a capability id`);
  if (typeof m.version !== "string" || m.version.length === 0 || m.version.length > 64) throw bundleRefusal(`${BUNDLE_MANIFEST} version is missing`);
  if (typeof m.entry !== "string" || bundlePathProblem(m.entry) !== null || m.entry === BUNDLE_MANIFEST) throw bundleRefusal(`${BUNDLE_MANIFEST} entry is not a file name of the bundle`);
  if (!files.some((f) => f.path === m.entry)) throw bundleRefusal(`${BUNDLE_MANIFEST} names entry ${JSON.stringify(m.entry)}, which the bundle does not hold`);
  return { schema: BUNDLE_SCHEMA, capability: m.capability, version: m.version, runtime: "node", entry: m.entry };
}

/** A directory held by descriptor: entries are reached as /proc/self/fd/<fd>/<name>, one component at a time. */
export function openDirectory(where: string): number {
  return fs.openSync(where, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

export const under = (dirFd: number, name: string): string => `/proc/self/fd/${dirFd}/${name}`;

export interface WalkOptions {
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

/** Every file below a held directory (`walk`), refusing an empty one. */
export function readHeld(dirFd: number, o: WalkOptions): BundleFile[] {
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
    throw bundleRefusal(`${dir} is not a directory that can be opened without following a link (${code ?? "error"})`);
  }
  try {
    const files = readHeld(fd, { readOnly: false, fail: bundleRefusal });
    const manifest = parseBundleManifest(files);
    return { files, digest: bundleDigest(files), manifest };
  } finally {
    fs.closeSync(fd);
  }
}
