import fs from "node:fs";
import path from "node:path";
import { LeaseholdError, type EnforcementTier } from "../errors";

/**
 * Creates a secret file (a private key) exactly once: written to a temp name
 * with mode 0600 and hard-linked into place, so a crash never leaves half a
 * key and two first starts race safely (the loser keeps the winner's).
 * `create` is only called when the file does not exist yet.
 */
export function ensureSecretFile(file: string, create: () => string): void {
  if (fs.existsSync(file)) return;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, create(), { mode: 0o600, flag: "wx" });
  try {
    fs.linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** Reads a secret file, refusing one that others can read (`what` names it in the error). */
export function readSecretFile(file: string, what: string, tier: EnforcementTier): string {
  const stat = fs.statSync(file);
  if ((stat.mode & 0o077) !== 0) {
    throw new LeaseholdError("CONFIG_INVALID", `${what} ${file} is readable by others (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it`, { tier });
  }
  return fs.readFileSync(file, "utf8");
}
