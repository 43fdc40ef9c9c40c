/**
 * Authenticating a guest request (the hub side of server/trust/protocol.ts). A small
 * check that returns a tagged result and denies on any doubt: a missing or
 * malformed header, an unknown or removed host, a timestamp outside the
 * skew window, a body digest that does not match, a bad signature, or a
 * nonce already seen (replay). The nonce is recorded only after the
 * signature verifies, so nobody can burn a host's nonces. A handler whose
 * only effect is one transaction may take the nonce unrecorded
 * (`deferNonce`) and record it as that transaction's first write
 * (`recordNonce`): a replay then changes nothing and is refused, and the
 * request costs one commit instead of two (the result POST).
 */
import { verify } from "node:crypto";
import { and, eq, isNull, lt } from "drizzle-orm";
import type { Database } from "../db";
import { hostRequestNonces, hosts } from "../db/schema";
import { touchHostLastSeen } from "./last-seen";
import { hostPublicKey } from "./public-keys";
import {
  HEADER_HOST,
  HEADER_NONCE,
  HEADER_SIGNATURE,
  HEADER_TIMESTAMP,
  MAX_CLOCK_SKEW_MS,
  NONCE_PATTERN,
  TIMESTAMP_PATTERN,
  requestSigningString,
  sha256Hex,
} from "../trust";

export interface AuthenticatedHost {
  id: string;
  name: string;
  publicKeyPem: string;
}

/** A verified request's nonce, not yet recorded (`deferNonce`): the handler records it in its own transaction. */
export interface PendingNonce {
  hostId: string;
  nonce: string;
  expiresAt: Date;
}

export type HostAuthResult = { ok: true; host: AuthenticatedHost; pendingNonce?: PendingNonce } | { ok: false; reason: string };

export const REPLAYED_REASON = "replayed request (nonce already used)";

/**
 * Records a request's nonce; false when it was already recorded (a replay).
 * In a transaction, the row is only there once the transaction commits, and a
 * concurrent copy of the request waits on it and then finds it.
 */
export async function recordNonce(db: Database, pending: PendingNonce): Promise<boolean> {
  const inserted = await db.insert(hostRequestNonces).values(pending).onConflictDoNothing().returning({ nonce: hostRequestNonces.nonce });
  return inserted.length > 0;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let lastPrune = 0;

export async function authenticateHostRequest(
  db: Database,
  request: { method: string; pathAndQuery: string; headers: Headers; body: Uint8Array },
  now = Date.now(),
  options: { deferNonce?: boolean } = {},
): Promise<HostAuthResult> {
  const hostId = request.headers.get(HEADER_HOST);
  const timestamp = request.headers.get(HEADER_TIMESTAMP);
  const nonce = request.headers.get(HEADER_NONCE);
  const signature = request.headers.get(HEADER_SIGNATURE);
  if (hostId === null || timestamp === null || nonce === null || signature === null) return { ok: false, reason: "missing host signature headers" };
  if (!UUID.test(hostId) || !TIMESTAMP_PATTERN.test(timestamp) || !NONCE_PATTERN.test(nonce) || !/^[A-Za-z0-9+/]{86}==$/.test(signature)) {
    return { ok: false, reason: "malformed host signature headers" };
  }
  const skew = Math.abs(Number(timestamp) - now);
  if (skew > MAX_CLOCK_SKEW_MS) return { ok: false, reason: `request time is ${Math.round(skew / 1000)} s away from the hub's clock (limit ${MAX_CLOCK_SKEW_MS / 1000} s)` };
  const [host] = await db
    .select({ id: hosts.id, name: hosts.name, publicKey: hosts.publicKey })
    .from(hosts)
    .where(and(eq(hosts.id, hostId), isNull(hosts.removedAt)));
  if (host === undefined) return { ok: false, reason: "unknown or removed host" };
  let valid: boolean;
  try {
    const message = requestSigningString({ method: request.method, pathAndQuery: request.pathAndQuery, timestamp, nonce, bodySha256: sha256Hex(request.body) });
    valid = verify(null, Buffer.from(message), hostPublicKey(host.publicKey), Buffer.from(signature, "base64"));
  } catch {
    valid = false;
  }
  if (!valid) return { ok: false, reason: "request signature does not verify with the enrolled host key" };
  const pending: PendingNonce = { hostId, nonce, expiresAt: new Date(Number(timestamp) + MAX_CLOCK_SKEW_MS) };
  if (!options.deferNonce && !(await recordNonce(db, pending))) return { ok: false, reason: REPLAYED_REASON };
  if (now - lastPrune > 10_000) {
    lastPrune = now;
    await db.delete(hostRequestNonces).where(lt(hostRequestNonces.expiresAt, new Date(now - MAX_CLOCK_SKEW_MS)));
  }
  await touchHostLastSeen(db, hostId);
  const authenticated: AuthenticatedHost = { id: host.id, name: host.name, publicKeyPem: host.publicKey };
  return options.deferNonce ? { ok: true, host: authenticated, pendingNonce: pending } : { ok: true, host: authenticated };
}
