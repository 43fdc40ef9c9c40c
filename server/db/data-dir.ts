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
