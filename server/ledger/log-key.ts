import { randomBytes } from "node:crypto";
import path from "node:path";
import { LeaseholdError } from "../errors";
import { ensureSecretFile, readSecretFile } from "../keys/secret-file";
import { generateSignerKey, parseSignerKey, type SignerKey } from "../trust/ledger/note";

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
  ensureSecretFile(file, () => {
    const host = new URL(publicUrl).host.replace(/[^A-Za-z0-9.:[\]-]/g, "-");
    const origin = `${host}/leasehold/${randomBytes(6).toString("hex")}`;
    return `${generateSignerKey(origin).signer}\n`;
  });
  return readLogKey(file);
}

export function readLogKey(file: string): LogKey {
  const parsed = parseSignerKey(readSecretFile(file, "ledger signing key", "ledger").trim());
  if (!parsed.ok) throw new LeaseholdError("CONFIG_INVALID", `ledger signing key ${file} is unreadable: ${parsed.reason}`, { tier: "ledger" });
  return { origin: parsed.key.name, signer: parsed.key, verifier: parsed.key.verifierText };
}
