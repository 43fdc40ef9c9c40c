/**
 * Artifacts: files agents hand to capabilities as input (issue 15), kept in
 * PostgreSQL so every hub replica (and PGlite) sees the same bytes.
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
import { createHash } from "node:crypto";
import { and, eq, gt, lt, sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import { artifactBlobs, artifactChunks, artifactUploads } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { hashActor } from "../ledger/entry";

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

/** Bytes per stored row: small enough for one bytea parameter on every driver, large enough to keep row counts low. */
export const ARTIFACT_ROW_BYTES = 1024 * 1024;
/** Bytes one append may carry (artifact_upload's chunk; 2 MiB is ~2.7 MiB of base64, far under the 4 MiB MCP body). */
export const MAX_APPEND_BYTES = 2 * 1024 * 1024;
/** Bytes one range read may return (the guest's fetch, contract item 2). */
export const MAX_READ_BYTES = 4 * 1024 * 1024;

const SHA256_HEX = /^[0-9a-f]{64}$/;

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

export function sha256Hex(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
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

/**
 * Bytes cross the driver as base64 text, decoded and encoded by the server:
 * PGlite's bytea parameter path is about 20× slower per MiB (measured: ~750
 * ms vs ~36 ms to insert 1 MiB, ~110 ms vs ~16 ms to read it), and both
 * servers give the same bytes either way.
 */
async function insertChunk(tx: Database, blobId: string, offset: number, data: Uint8Array): Promise<void> {
  await tx.execute(sql`insert into artifact_chunks (blob_id, "offset", data) values (${blobId}, ${offset}, decode(${Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64")}, 'base64'))`);
}

async function storeRows(tx: Database, blobId: string, offset: number, data: Uint8Array): Promise<void> {
  for (let at = 0; at < data.length; at += ARTIFACT_ROW_BYTES) {
    await insertChunk(tx, blobId, offset + at, data.subarray(at, Math.min(data.length, at + ARTIFACT_ROW_BYTES)));
  }
}

async function chunkRows(tx: Database, where: ReturnType<typeof sql>, limit?: number): Promise<{ offset: number; data: Buffer }[]> {
  const rows = await executeRows<{ offset: string | number; data: string }>(
    tx,
    sql`select "offset", encode(data, 'base64') as data from artifact_chunks where ${where} order by "offset"${limit === undefined ? sql`` : sql` limit ${limit}`}`,
  );
  // PostgreSQL's encode() wraps base64 at 76 characters; Buffer.from skips the line breaks.
  return rows.map((row) => ({ offset: Number(row.offset), data: Buffer.from(row.data, "base64") }));
}

/** Stored bytes of a blob in [offset, offset + length), from its rows. */
async function readBlob(tx: Database, blobId: string, offset: number, length: number): Promise<Buffer> {
  const end = offset + length;
  const rows = await chunkRows(tx, sql`blob_id = ${blobId} and "offset" < ${end} and "offset" >= ${offset - ARTIFACT_ROW_BYTES + 1}`);
  const out = Buffer.alloc(length);
  let filled = 0;
  for (const row of rows) {
    const data = row.data;
    const from = Math.max(offset, row.offset);
    const to = Math.min(end, row.offset + data.length);
    if (to <= from) continue;
    data.copy(out, from - offset, from - row.offset, to - row.offset);
    filled += to - from;
  }
  if (filled !== length) throw new LeaseholdError("INTERNAL", `artifact storage is missing bytes in [${offset}, ${end})`, { tier: "hub" });
  return out;
}

/** SHA-256 of a whole blob, read back from its stored rows (what is verified is what will be served). */
async function hashBlob(tx: Database, blobId: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash("sha256");
  let next = 0;
  let bytes = 0;
  for (;;) {
    const rows = await chunkRows(tx, sql`blob_id = ${blobId} and "offset" >= ${next}`, 8);
    if (rows.length === 0) break;
    for (const row of rows) {
      if (row.offset !== next) throw new LeaseholdError("INTERNAL", `artifact storage has a gap at ${next}`, { tier: "hub" });
      hash.update(row.data);
      next += row.data.length;
      bytes += row.data.length;
    }
  }
  return { sha256: hash.digest("hex"), bytes };
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

/** The complete blob of `sha256`, if the hub holds one. */
export async function completeArtifact(db: Database, sha256: string): Promise<{ id: string; bytes: number } | undefined> {
  if (!SHA256_HEX.test(sha256)) return undefined;
  const [row] = await db.select({ id: artifactBlobs.id, bytes: artifactBlobs.bytes }).from(artifactBlobs).where(and(eq(artifactBlobs.sha256, sha256), eq(artifactBlobs.complete, true)));
  return row;
}

/**
 * Bytes [offset, offset + length) of a complete artifact. The caller has
 * already decided the reader may see it (server/jobs: a claimed job naming
 * it); a range outside the artifact is INVALID_ARGUMENT.
 */
export async function readArtifactRange(db: Database, sha256: string, offset: number, length: number): Promise<{ data: Buffer; bytes: number }> {
  const blob = await completeArtifact(db, sha256);
  if (blob === undefined) throw new LeaseholdError("NOT_FOUND", `the hub holds no complete artifact ${sha256}`, { tier: "hub" });
  if (!Number.isSafeInteger(offset) || offset < 0 || offset >= blob.bytes) throw invalid(`offset must be 0..${blob.bytes - 1} for an artifact of ${blob.bytes} bytes`);
  if (!Number.isSafeInteger(length) || length < 1 || length > MAX_READ_BYTES) throw invalid(`length must be 1..${MAX_READ_BYTES}`);
  const end = Math.min(blob.bytes, offset + length);
  return { data: await readBlob(db, blob.id, offset, end - offset), bytes: blob.bytes };
}

/**
 * Expires what is due: receiving uploads idle past their expiry, complete
 * uploads past their retention, then every blob no upload row points at and
 * no queued or claimed job, and no action still waiting to dispatch, names
 * (`arguments.artifact.sha256`, contract item 1). Idempotent; every hub
 * process may run it.
 */
export async function sweepArtifacts(db: Database, now = new Date()): Promise<{ uploads: number; blobs: number }> {
  return db.transaction(async (txRaw) => {
    const tx = asDb(txRaw);
    const expired = await tx.delete(artifactUploads).where(lt(artifactUploads.expiresAt, now)).returning({ id: artifactUploads.id });
    const blobs = await executeRows<{ id: string }>(
      tx,
      sql`delete from artifact_blobs b
          where not exists (select 1 from artifact_uploads u where u.blob_id = b.id)
            and not (b.complete and exists (select 1 from jobs j where j.state in ('queued', 'claimed')
                                              and j.payload #>> '{action,arguments,artifact,sha256}' = b.sha256))
            and not (b.complete and exists (select 1 from actions a where a.state in ('held', 'allowed', 'approved')
                                              and a.prepared #>> '{arguments,artifact,sha256}' = b.sha256))
          returning b.id`,
    );
    return { uploads: expired.length, blobs: blobs.length };
  });
}
