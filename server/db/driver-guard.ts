import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { LeaseholdError } from "../errors";

/** Written into the driver by tools/lib/postgres-driver-guard.mjs; kept equal to its GUARD_MARKER. */
export const DRIVER_GUARD_MARKER = "/* leasehold: closed-socket write guard */";

/**
 * Refuses to run on a `postgres` driver without the closed-socket write
 * guard (tools/lib/postgres-driver-guard.mjs, applied at install and build):
 * unguarded, a database restart under load throws an uncaught TypeError in
 * the driver and leaves pooled connections that never answer again. Fail
 * closed: one line at start-up instead of a hub that wedges at the first
 * restart.
 */
export function checkPostgresDriverGuard(): void {
  const entry = createRequire(import.meta.url).resolve("postgres");
  // …/postgres/cjs/src/index.js: the package directory is three levels up.
  const dir = path.resolve(path.dirname(entry), "..", "..");
  const unguarded = [path.join(dir, "src", "connection.js"), path.join(dir, "cjs", "src", "connection.js")].filter(
    (file) => !fs.existsSync(file) || !fs.readFileSync(file, "utf8").includes(DRIVER_GUARD_MARKER),
  );
  if (unguarded.length > 0) {
    throw new LeaseholdError("CONFIG_INVALID", `the installed postgres driver lacks the closed-socket write guard (${unguarded.join(", ")})`, {
      tier: "database",
      hint: "run `npm install` or `npm run build`, which apply tools/lib/postgres-driver-guard.mjs",
    });
  }
}
