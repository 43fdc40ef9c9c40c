import path from "node:path";
import { sql } from "drizzle-orm";
import type { HubConfig } from "../config";
import { executeRows, type Database } from "../db";
import { JOB_KEY_FILE, loadOrCreateJobKey, type JobKey } from "../dispatch/job-key";
import { LeaseholdError } from "../errors";
import { LOG_KEY_FILE, loadOrCreateLogKey, type LogKey } from "../ledger/log-key";
import { loadOrCreateVapidKey, type VapidKey } from "../push/vapid";

/**
 * One hub identity across replicas (docs/deploy.md#identity).
 *
 * The hub has two private keys: the job-signing key (guests pin it at
 * enrolment and refuse jobs signed by any other) and the ledger's log key
 * (witnesses and verifiers pin it). Several hub processes on one database
 * are one hub only if they hold the same two keys.
 *
 * Where the keys live: files in a key directory (`LEASEHOLD_KEY_DIR`,
 * default the data directory; `dispatch/job.key`, `ledger/log.key`), shared
 * by the operator the way any secret is (a mounted secret, a copied
 * directory). Not in PostgreSQL encrypted under a further secret: that
 * secret would itself have to reach every replica the same way, and every
 * database backup and replica would then carry the keys too.
 *
 * What the hub guarantees: the first process to start on a database pins
 * the public halves in `hub_identity` (adopting the log key an earlier
 * version already pinned in `ledger_log`), and a process whose keys differ
 * refuses to start with one line naming both key ids — never serving a
 * third of the traffic with jobs every guest refuses. `/api/ready` repeats
 * the comparison, so a pin changed under a running process takes it out of
 * the balancer.
 */
export interface HubKeys {
  job: JobKey;
  log: LogKey;
  /**
   * The Web Push (VAPID) key, created with the others at the first start.
   * Not pinned: a replica with another one is told apart per subscription
   * (server/push/notifier.ts), and nothing but push depends on it.
   */
  vapid: VapidKey;
  /** Where the key files are (LEASEHOLD_KEY_DIR or the data directory). */
  dir: string;
}

export function keyDirOf(config: Pick<HubConfig, "dataDir"> & { keyDir?: string }): string {
  return config.keyDir ?? config.dataDir;
}

/** Loads the hub's keys from its key directory, creating them on a first start. */
export function loadHubKeys(config: HubConfig): HubKeys {
  const dir = keyDirOf(config);
  return { dir, job: loadOrCreateJobKey(dir), log: loadOrCreateLogKey(dir, config.publicUrl), vapid: loadOrCreateVapidKey(dir) };
}

/** A log verifier key's id: the hex key hash between its name and its key bytes (`name+hash+key`). */
export function logKeyId(verifier: string): string {
  // name+keyid+base64: a name never holds "+", the base64 key may.
  const id = verifier.split("+", 3)[1];
  return id !== undefined && /^[0-9a-f]{8}$/.test(id) ? id : verifier;
}

interface PinnedRow extends Record<string, unknown> {
  job_key_id: string;
  job_public_key: string;
  log_verifier: string;
}

export type IdentityCheck = { ok: true } | { ok: false; reason: string };

/** Compares this process's keys with the pinned ones; the reason is one line an operator can act on. */
export function compareIdentity(keys: HubKeys, pinned: PinnedRow): IdentityCheck {
  const fix = `every hub process on one DATABASE_URL must hold the same keys: copy ${JOB_KEY_FILE} and ${LOG_KEY_FILE} from the first replica into ${keys.dir}, or point LEASEHOLD_KEY_DIR at the shared key directory (docs/deploy.md#identity)`;
  if (pinned.job_public_key.trim() !== keys.job.publicKeyPem.trim()) {
    return { ok: false, reason: `this process's job-signing key ${keys.job.keyId} (${path.join(keys.dir, JOB_KEY_FILE)}) is not the hub's pinned job key ${pinned.job_key_id}; ${fix}` };
  }
  if (pinned.log_verifier !== keys.log.verifier) {
    return { ok: false, reason: `this process's ledger log key ${logKeyId(keys.log.verifier)} (${path.join(keys.dir, LOG_KEY_FILE)}) is not the hub's pinned log key ${logKeyId(pinned.log_verifier)}; ${fix}` };
  }
  return { ok: true };
}

async function readPinned(db: Database): Promise<PinnedRow | undefined> {
  const [row] = await executeRows<PinnedRow>(db, sql`select job_key_id, job_public_key, log_verifier from hub_identity where id = 1`);
  return row;
}

/**
 * Pins this process's keys when the database has none yet (two first
 * starts racing: one insert wins, the other compares against it), then
 * refuses a process whose keys differ from the pinned ones.
 */
export async function pinHubIdentity(db: Database, keys: HubKeys): Promise<void> {
  await db.execute(
    sql`insert into hub_identity (id, job_key_id, job_public_key, log_origin, log_verifier)
        select 1, ${keys.job.keyId}, ${keys.job.publicKeyPem},
               coalesce((select origin from ledger_log where id = 1), ${keys.log.origin}),
               coalesce((select verifier_key from ledger_log where id = 1), ${keys.log.verifier})
        on conflict (id) do nothing`,
  );
  const pinned = await readPinned(db);
  if (pinned === undefined) throw new LeaseholdError("INTERNAL", "hub_identity has no row after pinning", { tier: "hub" });
  const check = compareIdentity(keys, pinned);
  if (!check.ok) throw new LeaseholdError("CONFIG_INVALID", check.reason, { tier: "hub" });
}

/** The comparison again, for readiness: a pin that disappeared or changed is a mismatch. */
export async function checkHubIdentity(db: Database, keys: HubKeys): Promise<IdentityCheck> {
  const pinned = await readPinned(db);
  if (pinned === undefined) return { ok: false, reason: "the database has no pinned hub identity (hub_identity is empty)" };
  return compareIdentity(keys, pinned);
}
