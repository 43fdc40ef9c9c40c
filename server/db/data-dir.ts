import fs from "node:fs";
import path from "node:path";
import { LeaseholdError } from "../errors";

/**
 * Checks that `dir` is (or can become) a writable directory WITHOUT creating
 * anything, and returns its canonical path (symlinks in existing ancestors
 * resolved) so two spellings of one directory share one lock.
 */
export function inspectDataDir(dir: string): { canonical: string; exists: boolean } {
  let existing = path.resolve(dir);
  const missing: string[] = [];
  for (;;) {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(existing);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT") throw dataDirError(dir, `cannot inspect ${existing}: ${code ?? String(error)}`);
    }
    if (stat) {
      if (!stat.isDirectory()) {
        throw dataDirError(dir, `${existing} exists and is not a directory`);
      }
      try {
        fs.accessSync(existing, fs.constants.W_OK | fs.constants.X_OK);
      } catch {
        throw dataDirError(dir, `${existing} is not writable by this user`);
      }
      if (isReadOnlyMount(existing)) throw dataDirError(dir, `${existing} is on a read-only file system`);
      break;
    }
    missing.unshift(path.basename(existing));
    const parent = path.dirname(existing);
    if (parent === existing) throw dataDirError(dir, "no existing ancestor directory");
    existing = parent;
  }
  const canonical = path.join(fs.realpathSync(existing), ...missing);
  return { canonical, exists: missing.length === 0 };
}

/** Creates the data directory (owner-only) once the lock is held. */
export function createDataDir(canonical: string): void {
  // One component at a time: Node's recursive mkdir can spin forever on
  // pseudo file systems (e.g. /proc) that answer ENOENT to every mkdir.
  const missing: string[] = [];
  let dir = canonical;
  while (!fs.existsSync(dir)) {
    missing.unshift(dir);
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  for (const component of missing) {
    try {
      fs.mkdirSync(component, { mode: 0o700 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EEXIST" && fs.statSync(component).isDirectory()) continue;
      throw dataDirError(canonical, `cannot create ${component}: ${code ?? String(error)}`);
    }
  }
}

function dataDirError(dir: string, reason: string): LeaseholdError {
  return new LeaseholdError("CONFIG_INVALID", `LEASEHOLD_DATA_DIR ${dir} is not usable: ${reason}`, { tier: "config" });
}

/** Root can write anywhere access() looks, except on a read-only mount. */
function isReadOnlyMount(dir: string): boolean {
  try {
    const mounts = fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n");
    let best: { point: string; ro: boolean } | undefined;
    for (const line of mounts) {
      const fields = line.split(" ");
      const point = fields[4]?.replace(/\\040/g, " ");
      const options = fields[5];
      if (!point || !options) continue;
      const inside = dir === point || dir.startsWith(point.endsWith("/") ? point : `${point}/`);
      if (inside && (!best || point.length >= best.point.length)) best = { point, ro: options.split(",").includes("ro") };
    }
    return best?.ro ?? false;
  } catch {
    return false;
  }
}

/** Only the owner may read, write or enter anything the hub writes. */
export const PRIVATE_UMASK = 0o077;

let startingUmask: number | undefined;

/**
 * The umask the process started with, for children that are not the hub
 * (the local guest and, through it, the jobs it launches keep the mask the
 * operator gave them; they live in their own state and workspace).
 */
export function startingProcessUmask(): number {
  if (startingUmask !== undefined) return startingUmask;
  // process.umask() without an argument is deprecated: read it by setting and restoring.
  const current = process.umask(0o022);
  process.umask(current);
  return current;
}

/**
 * Makes the data directory private before anything is opened in it: the
 * process's umask becomes 077 (PGlite creates its files 0666 and would leave
 * the database readable by every local user), the directory itself 0700,
 * and every file and directory already in it loses its group and other bits
 * (a directory made by hand, or by an older hub, with 0755/0666 files).
 * Refused, naming the directory, when this user does not own it (chmod
 * would fail, and another user's directory is not ours to hold secrets in).
 * Symlinks are not followed; other file systems mounted inside (the local
 * guest's workspace image) are not entered.
 */
export function makeDataDirPrivate(canonical: string): void {
  const before = process.umask(PRIVATE_UMASK);
  startingUmask ??= before;
  let st: fs.Stats;
  try {
    st = fs.lstatSync(canonical);
  } catch (error) {
    throw dataDirError(canonical, `cannot inspect it: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  if (!st.isDirectory()) throw dataDirError(canonical, "it is not a directory");
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw dataDirError(canonical, `it is owned by uid ${st.uid}, not by this user (uid ${uid}); it cannot be made private (0700)`);
  }
  try {
    fs.chmodSync(canonical, 0o700);
  } catch (error) {
    throw dataDirError(canonical, `cannot make it private (0700): ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  privatise(canonical, st.dev, uid);
}

/** Takes group and other bits off everything under `dir` (same rules as makeDataDirPrivate). */
export function makeTreePrivate(dir: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch {
    return;
  }
  if (!st.isDirectory()) return;
  if ((st.mode & 0o077) !== 0) fs.chmodSync(dir, st.mode & 0o7700);
  privatise(dir, st.dev, process.getuid?.());
}

function privatise(dir: string, dev: number, uid: number | undefined): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(file);
    } catch {
      continue;
    }
    // A symlink's target is not ours to change; another file system (a mounted workspace) is not entered.
    if (st.isSymbolicLink() || st.dev !== dev) continue;
    // Files of other owners (none, normally) are left; root may chmod them but they are not the hub's.
    if (uid !== undefined && st.uid !== uid && uid !== 0) continue;
    if ((st.mode & 0o077) !== 0) {
      try {
        fs.chmodSync(file, st.mode & 0o7700);
      } catch {
        // A socket or a file that vanished: nothing to keep private.
      }
    }
    if (st.isDirectory()) privatise(file, dev, uid);
  }
}
