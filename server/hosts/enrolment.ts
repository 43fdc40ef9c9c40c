/**
 * Host enrolment: an admin mints a one-time, short-lived code for a host
 * name; the guest presents it with its freshly generated Ed25519 host key
 * (and a proof it holds that key) and its cosignature/v1 witness key. The
 * hub records the host, seals `host/1 enrolled` (or `key_rotated` when an
 * admin re-enrols an existing name), registers the witness key, and marks
 * the code used — all in one transaction, so a code enrols at most once.
 *
 * Only sha256(code) is stored. Codes are 20 random bytes (base32), default
 * lifetime 15 minutes.
 */
import { createPublicKey, randomBytes, verify, type KeyObject } from "node:crypto";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Database } from "../db";
import { hostEnrolmentCodes, hosts } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { registerWitness } from "../ledger/cosignatures";
import { digestOf, hashActor } from "../ledger/entry";
import { enrolmentProofString, HOST_NAME_PATTERN, isLoopbackHost, sha256Hex } from "../trust";

export const ENROL_CODE_PREFIX = "lhe_";
export const DEFAULT_ENROL_CODE_TTL_MS = 15 * 60_000;
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function codeDigest(code: string): string {
  return sha256Hex(code);
}

export async function createEnrolCode(db: Database, input: { name: string; ttlMs?: number; actor: string; now?: Date }): Promise<{ code: string; expiresAt: Date; name: string }> {
  if (!HOST_NAME_PATTERN.test(input.name)) {
    throw new LeaseholdError("INVALID_ARGUMENT", `host name ${JSON.stringify(input.name)} must match ${HOST_NAME_PATTERN.source}`, { tier: "hub" });
  }
  const ttl = input.ttlMs ?? DEFAULT_ENROL_CODE_TTL_MS;
  if (!Number.isSafeInteger(ttl) || ttl < 1000 || ttl > 24 * 3600_000) throw new LeaseholdError("INVALID_ARGUMENT", "code lifetime must be between 1 s and 24 h", { tier: "hub" });
  const code = `${ENROL_CODE_PREFIX}${base32(randomBytes(20))}`;
  const expiresAt = new Date((input.now ?? new Date()).getTime() + ttl);
  await db.transaction(async (tx) => {
    await appendEntry(tx as unknown as Database, {
      type: "admin/1",
      time: new Date(),
      action_id: null,
      actor: input.actor,
      data: { operation: "host.enrol_code", target_digest: digestOf(`host:${input.name}`), settings_digest: null },
    });
    await tx.insert(hostEnrolmentCodes).values({ name: input.name, codeHash: codeDigest(code), expiresAt });
  });
  return { code, expiresAt, name: input.name };
}

/**
 * The shell line a person runs on the host, as root. The code goes in on
 * stdin (printf is a shell builtin: no process's argv holds it), never as an
 * argument; `leasehold-guest enrol` also reads LEASEHOLD_ENROL_CODE. Shared
 * by `leasehold host enrol-code` and the browser's "enrol a host".
 */
export function enrolCommand(publicUrl: string, code: string): string {
  if (!code.startsWith(ENROL_CODE_PREFIX) || !/^[a-z0-9_]+$/.test(code)) throw new LeaseholdError("INTERNAL", "not an enrolment code", { tier: "hub" });
  return `printf '%s\\n' '${code}' | leasehold-guest enrol --hub ${publicUrl}`;
}

/**
 * What the printed command needs from the hub's public URL on another machine:
 * a loopback URL points a remote host at itself, and leasehold-guest refuses
 * plain HTTP to a hub that is not on its own machine (agent-guest/daemon/transport.ts).
 */
export function publicUrlNote(publicUrl: string): string | null {
  const url = new URL(publicUrl);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isLoopbackHost(host)) {
    return `note: ${publicUrl} reaches this hub only from this machine; for another host set LEASEHOLD_PUBLIC_URL to the https:// address it reaches the hub at (a TLS proxy in front of the hub)`;
  }
  if (url.protocol === "http:") return `note: ${publicUrl} is plain HTTP; a guest on another machine refuses it unless run with --insecure-http (put a TLS proxy in front of the hub and set LEASEHOLD_PUBLIC_URL to its https:// address)`;
  return null;
}

export interface EnrolRequest {
  code: string;
  /** SPKI PEM of the host's Ed25519 key. */
  public_key: string;
  /** C2SP cosignature/v1 verifier key string of the guest's witness key. */
  witness_key: string;
  /** base64 Ed25519 signature by the host key over enrolmentProofString(sha256(code), witness_key). */
  proof: string;
}

export interface EnrolResult {
  host_id: string;
  name: string;
  event: "enrolled" | "key_rotated";
}

function refuse(message: string): never {
  throw new LeaseholdError("UNAUTHENTICATED", `enrolment refused: ${message}`, { tier: "hub" });
}

export function parseHostPublicKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw new LeaseholdError("INVALID_ARGUMENT", "public_key is not an SPKI PEM public key", { tier: "hub" });
  }
  if (key.asymmetricKeyType !== "ed25519") throw new LeaseholdError("INVALID_ARGUMENT", "public_key must be Ed25519", { tier: "hub" });
  return key;
}

export async function enrolHost(db: Database, request: EnrolRequest, now = new Date()): Promise<EnrolResult> {
  if (typeof request.code !== "string" || !request.code.startsWith(ENROL_CODE_PREFIX) || request.code.length > 64) refuse("unknown, used or expired code");
  if (typeof request.public_key !== "string" || typeof request.witness_key !== "string" || typeof request.proof !== "string") {
    throw new LeaseholdError("INVALID_ARGUMENT", "enrol body must be {code, public_key, witness_key, proof}", { tier: "hub" });
  }
  const key = parseHostPublicKey(request.public_key);
  const hash = codeDigest(request.code);
  if (!verify(null, Buffer.from(enrolmentProofString(hash, request.witness_key)), key, Buffer.from(request.proof, "base64"))) {
    refuse("the proof of key possession does not verify");
  }
  const pem = key.export({ type: "spki", format: "pem" }).toString();
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    const [code] = await tx
      .update(hostEnrolmentCodes)
      .set({ usedAt: now })
      .where(and(eq(hostEnrolmentCodes.codeHash, hash), isNull(hostEnrolmentCodes.usedAt), sql`${hostEnrolmentCodes.expiresAt} > ${now.toISOString()}::timestamptz`))
      .returning();
    if (code === undefined) refuse("unknown, used or expired code");
    const [existing] = await tx.select().from(hosts).where(eq(hosts.name, code.name));
    let hostId: string;
    let event: EnrolResult["event"];
    if (existing === undefined) {
      const [row] = await tx.insert(hosts).values({ name: code.name, publicKey: pem, witnessKey: request.witness_key }).returning({ id: hosts.id });
      if (row === undefined) throw new LeaseholdError("INTERNAL", "host insert returned no row", { tier: "database" });
      hostId = row.id;
      event = "enrolled";
    } else {
      // An admin minted a code for an existing name: the new key replaces the old one.
      await tx.update(hosts).set({ publicKey: pem, witnessKey: request.witness_key, removedAt: null, health: {} }).where(eq(hosts.id, existing.id));
      hostId = existing.id;
      event = existing.removedAt === null ? "key_rotated" : "enrolled";
    }
    await tx.update(hostEnrolmentCodes).set({ hostId }).where(eq(hostEnrolmentCodes.id, code.id));
    await appendEntry(tx, {
      type: "host/1",
      time: now,
      action_id: null,
      actor: hashActor("host", hostId),
      data: { event, host_id: hostId, key_digest: digestOf(pem), tier: null, ceiling_digest: null },
    });
    await registerWitness(tx, request.witness_key, hashActor("host", hostId));
    return { host_id: hostId, name: code.name, event };
  });
}
