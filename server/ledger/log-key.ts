import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { LeaseholdError } from "../errors";
import { generateSignerKey, parseSignerKey, type SignerKey } from "./note";

/**
 * The log's Ed25519 signing key, generated on first start and kept in the
 * data directory (mode 0600, directory 0700). The key name is the log's
 * origin line: `<public host>/leasehold/<random id>`, unique per log so two
 * hubs' checkpoints can never be confused.
 */
export interface LogKey {
  origin: string;
  signer: SignerKey;
  /** Note verifier key text: what `leasehold ledger key` prints and verifiers need. */
  verifier: string;
}

export const LOG_KEY_FILE = path.join("ledger", "log.key");

export function logKeyPath(dataDir: string): string {
  return path.join(dataDir, LOG_KEY_FILE);
}

export function loadOrCreateLogKey(dataDir: string, publicUrl: string): LogKey {
  const file = logKeyPath(dataDir);
  if (!fs.existsSync(file)) {
    const host = new URL(publicUrl).host.replace(/[^A-Za-z0-9.:[\]-]/g, "-");
    const origin = `${host}/leasehold/${randomBytes(6).toString("hex")}`;
    const { signer } = generateSignerKey(origin);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    // Written to a temp name then linked: a crash never leaves a half key, and
    // `wx` makes two first starts race safely (the loser reads the winner's).
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, `${signer}\n`, { mode: 0o600, flag: "wx" });
    try {
      fs.linkSync(temp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      fs.rmSync(temp, { force: true });
    }
  }
  return readLogKey(file);
}

export function readLogKey(file: string): LogKey {
  const stat = fs.statSync(file);
  if ((stat.mode & 0o077) !== 0) {
    throw new LeaseholdError("CONFIG_INVALID", `ledger signing key ${file} is readable by others (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it`, {
      tier: "ledger",
    });
  }
  const parsed = parseSignerKey(fs.readFileSync(file, "utf8").trim());
  if (!parsed.ok) throw new LeaseholdError("CONFIG_INVALID", `ledger signing key ${file} is unreadable: ${parsed.reason}`, { tier: "ledger" });
  return { origin: parsed.key.name, signer: parsed.key, verifier: parsed.key.verifierText };
}
