import { desc, eq, sql } from "drizzle-orm";
import type { Database } from "../db";
import { hosts, ledgerEntries } from "../db/schema";
import { LeaseholdError } from "../errors";
import { decodeEntry, digestOf } from "../ledger/entry";
import { authenticateToken } from "../tokens";
import { ERROR_CODES, toErrorPayload } from "../errors";
import { hostKeyId } from "../trust/evidence";
import { hostPublicKey } from "./public-keys";

/**
 * A host's evidence key as an outside verifier needs it (docs/verify.md):
 * the SPKI PEM, its key id (`sha256:` of the raw 32-byte Ed25519 key — what
 * an envelope's signature names), and the `host/1` ledger entry that sealed
 * it at enrolment or rotation. That entry's `key_digest` is sha256 of this
 * PEM text, so the key is checked against the log, not taken on the hub's
 * word: the entry's bytes are given as they were sealed, with the leaf index
 * for an inclusion proof (`audit_proof`).
 *
 * Served to agent tokens (the MCP tool `host_key` and `GET
 * /api/hosts/<id or name>/key`), within the token's `--hosts` scope: a host
 * outside it is NOT_FOUND, as in `hosts_list`.
 */

export interface HostKeyRecord {
  host: string;
  host_id: string;
  removed: boolean;
  key_id: string;
  public_key_pem: string;
  /** sha256 of `public_key_pem` (its exact text), as the host/1 entry seals it. */
  key_digest: string;
  /** The host/1 entry that sealed this key; null only if the log holds none (a hub whose log was reset). */
  ledger: { entry_id: string; leaf_index: number | null; event: "enrolled" | "key_rotated"; entry: string } | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Found entries with a leaf index never change: kept per key digest (bounded, oldest dropped). */
const MAX_CACHED = 1024;
const sealedEntries = new Map<string, NonNullable<HostKeyRecord["ledger"]>>();

/**
 * The newest host/1 entry sealing `keyDigest` for `hostId`. The log has no
 * index by content, so this scans for the digest's bytes (unique to one key)
 * newest first; an integrated answer is cached, so each key is looked up once
 * per process.
 */
async function sealingEntry(db: Database, hostId: string, keyDigest: string): Promise<HostKeyRecord["ledger"]> {
  const known = sealedEntries.get(keyDigest);
  if (known !== undefined) return known;
  const needle = `"key_digest":"${keyDigest}"`;
  const rows = await db
    .select({ id: ledgerEntries.id, leafIndex: ledgerEntries.leafIndex, body: ledgerEntries.body })
    .from(ledgerEntries)
    .where(sql`position(convert_to(${needle}, 'UTF8') in ${ledgerEntries.body}) > 0`)
    .orderBy(desc(ledgerEntries.id))
    .limit(8);
  for (const row of rows) {
    const decoded = decodeEntry(row.body);
    if (!decoded.ok || decoded.entry.type !== "host/1") continue;
    const data = decoded.entry.data as { event: string; host_id: string; key_digest: string | null };
    if (data.host_id !== hostId || data.key_digest !== keyDigest) continue;
    if (data.event !== "enrolled" && data.event !== "key_rotated") continue;
    const found: NonNullable<HostKeyRecord["ledger"]> = {
      entry_id: row.id.toString(),
      leaf_index: row.leafIndex === null ? null : Number(row.leafIndex),
      event: data.event,
      entry: new TextDecoder().decode(row.body),
    };
    if (found.leaf_index !== null) {
      sealedEntries.set(keyDigest, found);
      if (sealedEntries.size > MAX_CACHED) sealedEntries.delete(sealedEntries.keys().next().value as string);
    }
    return found;
  }
  return null;
}

/** `hostRef`: a host's name, or its id. */
export async function readHostKey(db: Database, hostRef: string, hostsScope: readonly string[] | null): Promise<HostKeyRecord> {
  const notFound = (): never => {
    throw new LeaseholdError("NOT_FOUND", `no host ${JSON.stringify(hostRef.slice(0, 64))} this token may see`, { tier: "hub", hint: "hosts_list shows the hosts this token may use" });
  };
  const [row] = await db
    .select({ id: hosts.id, name: hosts.name, publicKey: hosts.publicKey, removedAt: hosts.removedAt })
    .from(hosts)
    .where(UUID.test(hostRef) ? eq(hosts.id, hostRef) : eq(hosts.name, hostRef))
    .limit(1);
  if (row === undefined || (hostsScope !== null && !hostsScope.includes(row.name))) return notFound();
  const keyDigest = digestOf(row.publicKey);
  return {
    host: row.name,
    host_id: row.id,
    removed: row.removedAt !== null,
    key_id: hostKeyId(hostPublicKey(row.publicKey)),
    public_key_pem: row.publicKey,
    key_digest: keyDigest,
    ledger: await sealingEntry(db, row.id, keyDigest),
  };
}

/**
 * `GET /api/hosts/<id or name>/key` with `Authorization: Bearer <agent
 * token>`: the same record as the `host_key` tool, as JSON. Errors are the
 * hub's error payload with its HTTP status; a missing or bad token is 401.
 */
export async function serveHostKey(db: Database, request: Request, hostRef: string): Promise<Response> {
  try {
    const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(request.headers.get("authorization") ?? "");
    const auth = match?.[1] === undefined ? undefined : await authenticateToken(db, match[1]);
    if (auth === undefined || !auth.ok) {
      throw new LeaseholdError("UNAUTHENTICATED", "an agent token is required (Authorization: Bearer lh_…)", { tier: "hub" });
    }
    if (hostRef.length === 0 || hostRef.length > 128) throw new LeaseholdError("INVALID_ARGUMENT", "the host must be a name or an id", { tier: "hub" });
    return Response.json(await readHostKey(db, hostRef, auth.token.hosts), { headers: { "cache-control": "no-store" } });
  } catch (error) {
    const payload = toErrorPayload(error);
    const headers: Record<string, string> = payload.code === "UNAUTHENTICATED" ? { "www-authenticate": "Bearer" } : {};
    return Response.json(payload, { status: ERROR_CODES[payload.code].http, headers });
  }
}
