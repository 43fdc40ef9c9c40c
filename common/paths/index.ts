/**
 * Where the Leasehold checkout is, from the code that is running: the nearest
 * directory above this module holding a package.json named "leasehold".
 *
 * The same code runs from three places — server/ itself (vitest, tsx),
 * one bundle per executable in dist/ (`npm run build`), and Next.js server
 * chunks under .next/ — so a fixed `../../` from a source file is right in
 * only one of them. All three sit inside the checkout, so walking up works
 * in each. The working directory is used only when the module location is
 * unknown (a bundler that replaced `import.meta.url`), never before it: a
 * root process started in a directory someone else controls must not take
 * its migrations or binaries from there.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LeaseholdError } from "../../server/trust";

export const PACKAGE_NAME = "leasehold";

let cached: string | undefined;

function isProjectRoot(dir: string): boolean {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: unknown };
    return pkg.name === PACKAGE_NAME;
  } catch {
    return false;
  }
}

/** The nearest directory at or above `start` whose package.json is named "leasehold", or null. */
export function findProjectRoot(start: string): string | null {
  for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
    if (isProjectRoot(dir)) return dir;
    if (path.dirname(dir) === dir) return null;
  }
}

function moduleDir(): string | null {
  try {
    return path.dirname(fileURLToPath(import.meta.url));
  } catch {
    return null; // bundled where import.meta.url is not a file URL
  }
}

/** The checkout's root directory (cached; fails with INTERNAL when there is none). */
export function projectRoot(): string {
  if (cached !== undefined) return cached;
  const start = moduleDir() ?? process.cwd();
  const found = findProjectRoot(start);
  if (found === null) {
    throw new LeaseholdError("INTERNAL", `the Leasehold checkout was not found above ${start} (no package.json named "${PACKAGE_NAME}")`);
  }
  cached = found;
  return found;
}

/**
 * A path inside the checkout, e.g. `projectPath("drizzle", "migrations")`.
 * (The comment tells Next.js's file tracer not to copy the whole checkout
 * into its output for this call; nothing here is deployed from .next/.)
 */
export function projectPath(...segments: string[]): string {
  return path.join(/* turbopackIgnore: true */ projectRoot(), ...segments);
}
