/**
 * The guest's state directory (default /var/lib/leasehold-guest, mode 0700):
 *   host.key         Ed25519 host key, PKCS#8 PEM, 0600 — signs requests and evidence
 *   witness.key      cosignature/v1 signer key (C2SP), 0600 — cosigns checkpoints
 *   enrolment.json   hub URL, host id and name, the pinned hub job key and log key
 *   witness.json     the last checkpoint this guest cosigned (origin, size, root)
 *   jobs-seen.json   job ids already accepted, until their deadline (replay refusal)
 * Files are written to a temp file, fsynced and renamed, so a crash never
 * leaves half a key or a witness state older than a released cosignature.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { LeaseholdError } from "../../server/trust";

export const DEFAULT_STATE_DIR = "/var/lib/leasehold-guest";

export interface Enrolment {
  hub: string;
  host_id: string;
  name: string;
  job_key: string;
  log_key: string;
}

export function ensureStateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.statSync(dir);
  if (!st.isDirectory()) throw new LeaseholdError("CONFIG_INVALID", `guest state dir ${dir} is not a directory`, { tier: "guest" });
  if ((st.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}

export function writeFileAtomic(file: string, data: string, mode = 0o600): void {
  const temp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC, mode);
  try {
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.chmodSync(temp, mode);
  fs.renameSync(temp, file);
  const dirFd = fs.openSync(path.dirname(file), "r");
  try {
    fs.fsyncSync(dirFd);
  } finally {
    fs.closeSync(dirFd);
  }
}

function readPrivate(file: string): string {
  const st = fs.statSync(file);
  if ((st.mode & 0o077) !== 0) {
    throw new LeaseholdError("CONFIG_INVALID", `${file} is readable by others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`, { tier: "guest" });
  }
  return fs.readFileSync(file, "utf8");
}

export function hostKeyFile(dir: string): string {
  return path.join(dir, "host.key");
}

/** Generates the host key (never overwrites one). */
export function createHostKey(dir: string): KeyObject {
  const file = hostKeyFile(dir);
  if (fs.existsSync(file)) return loadHostKey(dir);
  const { privateKey } = generateKeyPairSync("ed25519");
  writeFileAtomic(file, privateKey.export({ type: "pkcs8", format: "pem" }).toString());
  return privateKey;
}

export function loadHostKey(dir: string): KeyObject {
  const key = createPrivateKey(readPrivate(hostKeyFile(dir)));
  if (key.asymmetricKeyType !== "ed25519") throw new LeaseholdError("CONFIG_INVALID", "host key is not Ed25519", { tier: "guest" });
  return key;
}

export function saveWitnessKey(dir: string, signer: string): void {
  writeFileAtomic(path.join(dir, "witness.key"), `${signer}\n`);
}

export function loadWitnessKey(dir: string): string {
  return readPrivate(path.join(dir, "witness.key")).trim();
}

export function saveEnrolment(dir: string, enrolment: Enrolment): void {
  writeFileAtomic(path.join(dir, "enrolment.json"), `${JSON.stringify(enrolment, null, 2)}\n`);
}

export function loadEnrolment(dir: string): Enrolment | null {
  const file = path.join(dir, "enrolment.json");
  if (!fs.existsSync(file)) return null;
  return JSON.parse(readPrivate(file)) as Enrolment;
}

export interface StoredWitnessState {
  origin: string;
  size: number;
  /** base64 */
  root: string;
}

export function loadWitnessState(dir: string): StoredWitnessState | null {
  const file = path.join(dir, "witness.json");
  if (!fs.existsSync(file)) return null;
  return JSON.parse(readPrivate(file)) as StoredWitnessState;
}

export function saveWitnessState(dir: string, state: StoredWitnessState): void {
  writeFileAtomic(path.join(dir, "witness.json"), `${JSON.stringify(state)}\n`);
}

/** Job ids accepted for execution, kept until their deadline: a replayed signed job is refused. */
export class SeenJobs {
  private readonly file: string;
  private readonly seen: Map<string, number>;

  constructor(dir: string) {
    this.file = path.join(dir, "jobs-seen.json");
    this.seen = new Map();
    if (fs.existsSync(this.file)) {
      const stored = JSON.parse(fs.readFileSync(this.file, "utf8")) as Record<string, number>;
      for (const [id, deadline] of Object.entries(stored)) this.seen.set(id, deadline);
    }
  }

  /** Records `jobId` durably; false if it was already recorded (a replay). */
  claim(jobId: string, deadlineMs: number, now = Date.now()): boolean {
    for (const [id, deadline] of this.seen) if (deadline < now) this.seen.delete(id);
    if (this.seen.has(jobId)) return false;
    this.seen.set(jobId, deadlineMs);
    writeFileAtomic(this.file, JSON.stringify(Object.fromEntries(this.seen)));
    return true;
  }
}
