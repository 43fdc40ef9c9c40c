/**
 * The hub's job-signing key: Ed25519, generated on first use and kept in the
 * data directory at `dispatch/job.key` (PKCS#8 PEM, mode 0600, directory
 * 0700). It is deliberately NOT the ledger's log key: a guest verifies jobs
 * with this key, witnesses verify checkpoints with the other, and rotating
 * one must not disturb the other.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import path from "node:path";
import { ensureSecretFile, readSecretFile } from "../keys/secret-file";
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
  ensureSecretFile(file, () => generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString());
  const pem = readSecretFile(file, "job signing key", "hub");
  try {
    return fromPrivate(createPrivateKey(pem));
  } catch (error) {
    throw new LeaseholdError("CONFIG_INVALID", `job signing key ${file} is unreadable`, { tier: "hub", cause: error });
  }
}
