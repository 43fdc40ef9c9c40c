/**
 * Artifact uploads: files agents hand to capabilities as input, per owner,
 * over the blob store (blob-store.ts keeps the bytes).
 *
 * Model (server/db/schema/artifacts.ts):
 * - an upload row per (owner, sha256): declared size, bytes received, state
 *   (`receiving` → `complete`), expiry. It is the owner's only handle on the
 *   artifact.
 * - a blob per upload while it is receiving (its private chunks, ≤ 1 MiB a
 *   row); at completion the whole is hashed from the stored rows and the
 *   blob either becomes THE complete blob of that SHA-256 or is dropped for
 *   the one that already exists: content is stored once, visibility is per
 *   owner. An owner never gets an artifact by naming its hash — it must have
 *   sent every byte itself (no "prove you know the hash" leak).
 *
 * Bounds: one artifact ≤ `maxBytes`; an owner's uploads (declared sizes of
 * receiving and complete ones that have not expired) ≤ `quotaBytes`; a
 * receiving upload idle for `idleMs` expires; a complete upload expires
 * `retentionMs` after it completed or was last named by an action, and a
 * blob no unexpired upload and no pending job or action names is reclaimed
 * by `sweepArtifacts` (run by the hub's housekeeping).
 *
 * Completion is sealed as `artifact/1` (sha256, bytes, source; the actor is
 * the owner's hash) in the transaction that marks the upload complete.
 */
import { and, eq, gt, sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import { artifactBlobs, artifactChunks, artifactUploads } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { hashActor } from "../ledger/entry";
import { hashBlob, readBlob, SHA256_HEX, sha256Hex, storeRows } from "./blob-store";

export interface ArtifactLimits {
  /** Largest single artifact (LEASEHOLD_ARTIFACT_MAX_BYTES). */
  maxBytes: number;
  /** Bytes one owner may hold in unexpired uploads (LEASEHOLD_ARTIFACT_QUOTA_BYTES). */
  quotaBytes: number;
  /** A receiving upload untouched this long expires. */
  idleMs: number;
  /** A complete upload not named by an action for this long expires. */
  retentionMs: number;
}

export const DEFAULT_ARTIFACT_LIMITS: ArtifactLimits = {
  maxBytes: 128 * 1024 * 1024,
  quotaBytes: 512 * 1024 * 1024,
  idleMs: 24 * 3600_000,
  retentionMs: 7 * 24 * 3600_000,
};

/** The hub's configured limits (LEASEHOLD_ARTIFACT_MAX_BYTES, LEASEHOLD_ARTIFACT_QUOTA_BYTES) over the fixed expiry windows. */
export function artifactLimitsOf(config: { artifacts?: { maxBytes: number; quotaBytes: number } }): ArtifactLimits {
  return { ...DEFAULT_ARTIFACT_LIMITS, ...config.artifacts };
}

/** Bytes one append may carry (artifact_upload's chunk; 2 MiB is ~2.7 MiB of base64, far under the 4 MiB MCP body). */
export const MAX_APPEND_BYTES = 2 * 1024 * 1024;


/** Whose artifact: the same identity the pipeline's caller key and ledger actor use. */
export interface ArtifactOwner {
  kind: "token" | "admin";
  id: string;
}

export function ownerKeyOf(owner: ArtifactOwner): string {
  return `${owner.kind}:${owner.id}`;
}

export interface ArtifactStatus {
  sha256: string;
  bytes: number;
  received: number;
  next_offset: number;
  complete: boolean;
  /** null when there is no upload of this hash by this owner. */
  expires_at: string | null;
}

export interface ArtifactRef {
  sha256: string;
  bytes: number;
}

type UploadRow = typeof artifactUploads.$inferSelect;

function asDb(tx: unknown): Database {
  return tx as Database;
}

function invalid(message: string, extra: { hint?: string; details?: Record<string, unknown> } = {}): LeaseholdError {
  return new LeaseholdError("INVALID_ARGUMENT", message, { tier: "hub", ...extra });
}

function checkSha256(value: string, what: string): void {
  if (!SHA256_HEX.test(value)) throw invalid(`${what} must be 64 lower-case hex characters (SHA-256)`);
}


function statusOf(row: UploadRow): ArtifactStatus {
  return {
    sha256: row.sha256,
    bytes: row.bytes,
    received: row.received,
    next_offset: row.received,
    complete: row.state === "complete",
    expires_at: row.expiresAt.toISOString(),
  };
}

function checkSize(bytes: number, limits: ArtifactLimits): void {
  if (!Number.isSafeInteger(bytes) || bytes < 1) throw invalid("bytes must be the whole artifact's size, a positive integer");
  if (bytes > limits.maxBytes) {
    throw new LeaseholdError("POLICY_REFUSED", `an artifact of ${bytes} bytes is over this hub's limit of ${limits.maxBytes} bytes (LEASEHOLD_ARTIFACT_MAX_BYTES); nothing was stored (refused by a hub check)`, {
      tier: "hub",
      details: { bytes, limit: limits.maxBytes },
    });
  }
}

async function lockOwner(tx: Database, ownerKey: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`leasehold-artifact-owner:${ownerKey}`}))`);
}

async function uploadOf(tx: Database, ownerKey: string, sha256: string, forUpdate: boolean): Promise<UploadRow | undefined> {
  const query = tx.select().from(artifactUploads).where(and(eq(artifactUploads.ownerKey, ownerKey), eq(artifactUploads.sha256, sha256)));
  const [row] = forUpdate ? await query.for("update") : await query;
  return row;
}

/** Removes one upload row and its blob when no other upload shares that blob (a receiving blob never is shared). */
async function dropUpload(tx: Database, row: UploadRow): Promise<void> {
  await tx.delete(artifactUploads).where(eq(artifactUploads.id, row.id));
  if (row.state === "receiving") await tx.delete(artifactBlobs).where(eq(artifactBlobs.id, row.blobId));
}

/**
 * Starts (or finds) this owner's upload of `sha256`, within the size cap and
 * the owner's quota. An expired receiving upload is discarded and begun
 * again from offset 0.
 */
async function beginUpload(tx: Database, owner: ArtifactOwner, sha256: string, bytes: number, limits: ArtifactLimits, now: Date): Promise<UploadRow> {
  const ownerKey = ownerKeyOf(owner);
  await lockOwner(tx, ownerKey);
  let row = await uploadOf(tx, ownerKey, sha256, true);
  if (row !== undefined && row.state === "receiving" && row.expiresAt.getTime() <= now.getTime()) {
    await dropUpload(tx, row);
    row = undefined;
  }
  if (row !== undefined) {
    if (row.bytes !== bytes) {
      throw invalid(`this upload of ${sha256} was begun with bytes=${row.bytes}, not ${bytes}`, { hint: "send the same bytes value with every chunk", details: { bytes: row.bytes } });
    }
    return row;
  }
  checkSize(bytes, limits);
  const [usage] = await executeRows<{ n: string | number }>(
    tx,
    sql`select coalesce(sum(bytes), 0)::bigint as n from artifact_uploads where owner_key = ${ownerKey} and expires_at > ${now.toISOString()}::timestamptz`,
  );
  const used = Number(usage?.n ?? 0);
  if (used + bytes > limits.quotaBytes) {
    throw new LeaseholdError("RATE_LIMITED", `artifact quota reached: this token already holds ${used} bytes of uploads and ${bytes} more would pass LEASEHOLD_ARTIFACT_QUOTA_BYTES=${limits.quotaBytes}; nothing was stored (refused by a hub check)`, {
      tier: "hub",
      retryable: false,
      hint: "finish or abandon earlier uploads: incomplete ones expire after 24 h idle, complete ones after their retention unless an action names them",
      details: { used_bytes: used, quota_bytes: limits.quotaBytes },
    });
  }
  const [blob] = await tx.insert(artifactBlobs).values({ sha256, bytes }).returning({ id: artifactBlobs.id });
  const [created] = await tx
    .insert(artifactUploads)
    .values({ ownerKey, sha256, bytes, received: 0, state: "receiving", blobId: blob!.id, createdAt: now, updatedAt: now, expiresAt: new Date(now.getTime() + limits.idleMs) })
    .returning();
  return created!;
}


type Completion = { ok: true; row: UploadRow } | { ok: false; actual: string };

/**
 * Verifies the whole upload and makes it complete: deduplicated against an
 * existing complete blob of the same hash, sealed as artifact/1. A whole
 * that does not hash to the declared SHA-256 is discarded (the caller
 * commits the discard, then refuses).
 */
async function completeUpload(tx: Database, owner: ArtifactOwner, row: UploadRow, source: "upload" | "inline", limits: ArtifactLimits, now: Date): Promise<Completion> {
  const whole = await hashBlob(tx, row.blobId);
  if (whole.sha256 !== row.sha256 || whole.bytes !== row.bytes) {
    await dropUpload(tx, row);
    return { ok: false, actual: whole.sha256 };
  }
  // One completion per hash at a time, so two owners finishing the same content agree on one blob.
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`leasehold-artifact-sha256:${row.sha256}`}))`);
  const [existing] = await tx
    .select({ id: artifactBlobs.id })
    .from(artifactBlobs)
    .where(and(eq(artifactBlobs.sha256, row.sha256), eq(artifactBlobs.complete, true)));
  let blobId = row.blobId;
  if (existing !== undefined) {
    blobId = existing.id;
    await tx.update(artifactUploads).set({ blobId }).where(eq(artifactUploads.id, row.id));
    await tx.delete(artifactBlobs).where(eq(artifactBlobs.id, row.blobId));
  } else {
    await tx.update(artifactBlobs).set({ complete: true }).where(eq(artifactBlobs.id, row.blobId));
  }
  const [done] = await tx
    .update(artifactUploads)
    .set({ state: "complete", blobId, received: row.bytes, updatedAt: now, expiresAt: new Date(now.getTime() + limits.retentionMs) })
    .where(eq(artifactUploads.id, row.id))
    .returning();
  await appendEntry(tx, { type: "artifact/1", time: now, action_id: null, actor: hashActor(owner.kind, owner.id), data: { sha256: row.sha256, bytes: row.bytes, source } });
  return { ok: true, row: done! };
}

function wholeMismatch(sha256: string, actual: string): LeaseholdError {
  return invalid(`the uploaded bytes hash to ${actual}, not the declared ${sha256}; the upload was discarded`, {
    hint: "check the file and its SHA-256, then upload again from offset 0",
    details: { next_offset: 0 },
  });
}

export interface AppendRequest {
  sha256: string;
  /** The whole artifact's size. */
  bytes: number;
  offset: number;
  data: Uint8Array;
  /** SHA-256 (hex) the sender computed over `data`. */
  chunkSha256: string;
}

/**
 * Stores one chunk of an upload, resumably: it must start at the upload's
 * next offset (a chunk that repeats bytes already stored, identically, is
 * accepted as a no-op). The chunk is checked against its SHA-256 before
 * anything is stored; the chunk that completes the upload triggers the whole
 * check. Returns the upload's status after the chunk.
 */
export async function appendArtifactChunk(db: Database, owner: ArtifactOwner, request: AppendRequest, limits: ArtifactLimits = DEFAULT_ARTIFACT_LIMITS, now = new Date()): Promise<ArtifactStatus> {
  const { sha256, bytes, offset, data } = request;
  checkSha256(sha256, "sha256");
  checkSha256(request.chunkSha256, "chunk_sha256");
  if (data.length === 0 || data.length > MAX_APPEND_BYTES) throw invalid(`a chunk must be 1..${MAX_APPEND_BYTES} bytes (it is ${data.length})`);
  if (!Number.isSafeInteger(offset) || offset < 0) throw invalid("offset must be a non-negative integer");
  const actual = sha256Hex(data);
  if (actual !== request.chunkSha256) {
    throw invalid(`the chunk at offset ${offset} hashes to ${actual}, not chunk_sha256 ${request.chunkSha256}; it was not stored`, { hint: "re-send the chunk (it was damaged on the way, or encoded wrongly)" });
  }
  checkSize(bytes, limits);
  if (offset + data.length > bytes) throw invalid(`the chunk at offset ${offset} (${data.length} bytes) runs past the declared size of ${bytes} bytes`);
  const outcome = await db.transaction(async (txRaw) => {
    const tx = asDb(txRaw);
    const row = await beginUpload(tx, owner, sha256, bytes, limits, now);
    if (row.state === "complete") return { ok: true as const, row };
    if (offset < row.received) {
      const end = offset + data.length;
      const same = end <= row.received && (await readBlob(tx, row.blobId, offset, data.length)).equals(Buffer.from(data));
      if (same) return { ok: true as const, row };
      throw invalid(`offset ${offset} is not where this upload continues: ${row.received} bytes are stored, next_offset is ${row.received}`, { details: { next_offset: row.received } });
    }
    if (offset > row.received) {
      throw invalid(`offset ${offset} leaves a gap: ${row.received} bytes are stored, next_offset is ${row.received}`, { details: { next_offset: row.received } });
    }
    await storeRows(tx, row.blobId, offset, data);
    const received = offset + data.length;
    const [updated] = await tx
      .update(artifactUploads)
      .set({ received, updatedAt: now, expiresAt: new Date(now.getTime() + limits.idleMs) })
      .where(eq(artifactUploads.id, row.id))
      .returning();
    if (received < bytes) return { ok: true as const, row: updated! };
    return completeUpload(tx, owner, updated!, "upload", limits, now);
  });
  if (!outcome.ok) throw wholeMismatch(sha256, outcome.actual);
  return statusOf(outcome.row);
}

/** The owner's upload of `sha256` (received bytes, next offset, completeness); `received: 0` when there is none. */
export async function artifactUploadStatus(db: Database, owner: ArtifactOwner, sha256: string, now = new Date()): Promise<ArtifactStatus> {
  checkSha256(sha256, "sha256");
  const row = await uploadOf(db, ownerKeyOf(owner), sha256, false);
  if (row === undefined || (row.state === "receiving" && row.expiresAt.getTime() <= now.getTime())) {
    return { sha256, bytes: row?.bytes ?? 0, received: 0, next_offset: 0, complete: false, expires_at: null };
  }
  return statusOf(row);
}

/**
 * Stores a whole artifact given inline (an action's `{base64}` argument),
 * as one upload of this owner: same caps, quota, dedup and artifact/1.
 */
export async function storeArtifact(db: Database, owner: ArtifactOwner, data: Uint8Array, limits: ArtifactLimits = DEFAULT_ARTIFACT_LIMITS, now = new Date()): Promise<ArtifactRef> {
  if (data.length === 0) throw invalid("an artifact must not be empty");
  const sha256 = sha256Hex(data);
  checkSize(data.length, limits);
  const outcome = await db.transaction(async (txRaw) => {
    const tx = asDb(txRaw);
    const row = await beginUpload(tx, owner, sha256, data.length, limits, now);
    if (row.state === "complete") {
      await tx.update(artifactUploads).set({ expiresAt: new Date(now.getTime() + limits.retentionMs), updatedAt: now }).where(eq(artifactUploads.id, row.id));
      return { ok: true as const, row };
    }
    // A partial chunked upload of the same bytes: the inline copy replaces what it had.
    await tx.delete(artifactChunks).where(eq(artifactChunks.blobId, row.blobId));
    await storeRows(tx, row.blobId, 0, data);
    return completeUpload(tx, owner, { ...row, received: data.length }, "inline", limits, now);
  });
  if (!outcome.ok) throw wholeMismatch(sha256, outcome.actual);
  return { sha256, bytes: data.length };
}

/**
 * The artifact an action names by `sha256`: only a COMPLETE upload of this
 * owner counts (NOT_FOUND otherwise — also for another owner's upload of the
 * same content, with the same message, so a hash reveals nothing). Naming it
 * extends its retention.
 */
export async function claimArtifact(db: Database, owner: ArtifactOwner, sha256: string, limits: ArtifactLimits = DEFAULT_ARTIFACT_LIMITS, now = new Date()): Promise<ArtifactRef> {
  checkSha256(sha256, "sha256");
  const [row] = await db
    .update(artifactUploads)
    .set({ expiresAt: new Date(now.getTime() + limits.retentionMs) })
    .where(and(eq(artifactUploads.ownerKey, ownerKeyOf(owner)), eq(artifactUploads.sha256, sha256), eq(artifactUploads.state, "complete"), gt(artifactUploads.expiresAt, now)))
    .returning({ bytes: artifactUploads.bytes });
  if (row === undefined) {
    throw new LeaseholdError("NOT_FOUND", `no complete artifact ${sha256} uploaded by this caller`, {
      tier: "hub",
      hint: "upload it first with artifact_upload (until its status says complete), or pass it inline as {base64}",
    });
  }
  return { sha256, bytes: row.bytes };
}
