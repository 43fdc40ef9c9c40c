// Installs Debian packages the project needs when they are missing.
// Used by `npm start` / `npm test` so a fresh machine needs nothing by hand.
// Only node builtins here: this runs before `npm ci` has installed anything.
import { execFileSync, spawnSync } from "node:child_process";

/** True when dpkg reports the package as installed. */
export function isDebianPackageInstalled(name) {
  const r = spawnSync("dpkg-query", ["-W", "-f=${Status}", name], { encoding: "utf8" });
  return r.status === 0 && r.stdout.includes("install ok installed");
}

let updated = false;

/**
 * Ensures every named Debian package is installed, running apt-get as root.
 * Throws with a one-line reason when that is impossible (not root, no apt).
 * @param {string[]} names
 * @param {{quiet?: boolean}} [opts]
 */
export function ensureDebianPackages(names, opts = {}) {
  const missing = names.filter((n) => !isDebianPackageInstalled(n));
  if (missing.length === 0) return [];
  if (typeof process.getuid === "function" && process.getuid() !== 0) {
    throw new Error(`missing Debian packages (${missing.join(", ")}); install them as root: apt-get install -y ${missing.join(" ")}`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const stdio = opts.quiet ? ["ignore", "ignore", "inherit"] : "inherit";
  // Two test files may install at once (the serial group runs two side by
  // side): the second waits for apt's and dpkg's locks instead of failing.
  const lockWait = ["-o", "DPkg::Lock::Timeout=600"];
  if (!updated) {
    console.log(`[setup] apt-get update (for ${missing.join(", ")})`);
    execFileSync("apt-get", [...lockWait, "update", "-qq"], { stdio, env });
    updated = true;
  }
  console.log(`[setup] apt-get install ${missing.join(" ")}`);
  execFileSync("apt-get", [...lockWait, "install", "-y", "-qq", "--no-install-recommends", ...missing], { stdio, env });
  return missing;
}
