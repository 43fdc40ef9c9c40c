/**
 * The hub's job-signing key: Ed25519, generated on first use and kept in the
 * data directory at `dispatch/job.key` (PKCS#8 PEM, mode 0600, directory
 * 0700). It is deliberately NOT the ledger's log key: a guest verifies jobs
 * with this key, witnesses verify checkpoints with the other, and rotating
 * one must not disturb the other.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { LeaseholdError } from "../errors";

export interface JobKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** SPKI PEM of the public key: what guests pin. */
  publicKeyPem: string;
  /** First 16 hex of sha256(SPKI DER): names the key in signed jobs. */
  keyId: string;
}

export const JOB_KEY_FILE = path.join("dispatch", "job.key");

function fromPrivate(privateKey: KeyObject): JobKey {
  const publicKey = createPublicKey(privateKey);
  const der = publicKey.export({ type: "spki", format: "der" });
  return {
    privateKey,
    publicKey,
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
    keyId: createHash("sha256").update(der).digest("hex").slice(0, 16),
  };
}

/** A key that lives only in memory (tests, ephemeral tools). */
export function generateJobKey(): JobKey {
  return fromPrivate(generateKeyPairSync("ed25519").privateKey);
}

export function loadOrCreateJobKey(dataDir: string): JobKey {
  const file = path.join(dataDir, JOB_KEY_FILE);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const pem = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    // Temp file + link: a crash never leaves half a key, and two first starts race safely.
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, pem, { mode: 0o600, flag: "wx" });
    try {
      fs.linkSync(temp, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      fs.rmSync(temp, { force: true });
    }
  }
  const stat = fs.statSync(file);
  if ((stat.mode & 0o077) !== 0) {
    throw new LeaseholdError("CONFIG_INVALID", `job signing key ${file} is readable by others (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it`, {
      tier: "hub",
    });
  }
  try {
    return fromPrivate(createPrivateKey(fs.readFileSync(file, "utf8")));
  } catch (error) {
    throw new LeaseholdError("CONFIG_INVALID", `job signing key ${file} is unreadable`, { tier: "hub", cause: error });
  }
}
