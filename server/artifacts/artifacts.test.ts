import { randomBytes, randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import { executeRows } from "../db";
import { artifactBlobs, artifactChunks, artifactUploads, ledgerEntries } from "../db/schema";
import { decodeEntry } from "../ledger/entry";
import {
  ARTIFACT_ROW_BYTES,
  appendArtifactChunk,
  artifactUploadStatus,
  claimArtifact,
  readArtifactRange,
  sha256Hex,
  storeArtifact,
  sweepArtifacts,
  DEFAULT_ARTIFACT_LIMITS,
  type ArtifactOwner,
} from "./index";

const limits = { ...DEFAULT_ARTIFACT_LIMITS, maxBytes: 8 * 1024 * 1024, quotaBytes: 10 * 1024 * 1024 };
const owner = (): ArtifactOwner => ({ kind: "token", id: randomUUID() });

function chunkOf(data: Buffer, offset: number, length: number) {
  const piece = data.subarray(offset, offset + length);
  return { offset, data: piece, chunkSha256: sha256Hex(piece) };
}

async function codeOf(promise: Promise<unknown>): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code: string; message: string; details?: Record<string, unknown> };
    return { code: e.code, message: e.message, details: e.details };
  }
  throw new Error("expected a refusal");
}

describeEachDatabase("artifact store", (db) => {
  const dbh = () => db().handle.db;

  it("stores an artifact in chunks across rows, completes on the last chunk, and reads any range back exactly", async () => {
    const me = owner();
    const data = randomBytes(ARTIFACT_ROW_BYTES * 2 + 12_345);
    const sha256 = sha256Hex(data);
    const first = await appendArtifactChunk(dbh(), me, { sha256, bytes: data.length, ...chunkOf(data, 0, 1_500_000) }, limits);
    expect(first).toMatchObject({ received: 1_500_000, next_offset: 1_500_000, complete: false });
    const last = await appendArtifactChunk(dbh(), me, { sha256, bytes: data.length, ...chunkOf(data, 1_500_000, data.length - 1_500_000) }, limits);
    expect(last).toMatchObject({ received: data.length, complete: true });
    const rows = await dbh().select({ offset: artifactChunks.offset }).from(artifactChunks).innerJoin(artifactBlobs, eq(artifactBlobs.id, artifactChunks.blobId)).where(eq(artifactBlobs.sha256, sha256));
    expect(rows.length).toBe(3);
    for (const [offset, length] of [[0, data.length], [ARTIFACT_ROW_BYTES - 5, 10], [1_499_999, 2], [data.length - 1, 1]] as const) {
      const read = await readArtifactRange(dbh(), sha256, offset, length);
      expect(read.bytes).toBe(data.length);
      expect(read.data.equals(data.subarray(offset, offset + length))).toBe(true);
    }
    // A read past the end is cut at the end.
    expect((await readArtifactRange(dbh(), sha256, data.length - 3, 100)).data.length).toBe(3);
    // Sealed once, as artifact/1 with the owner's hash.
    const entries = (await dbh().select({ body: ledgerEntries.body }).from(ledgerEntries)).map((r) => decodeEntry(r.body)).filter((d) => d.ok && d.entry.type === "artifact/1" && (d.entry.data as { sha256: string }).sha256 === sha256);
    expect(entries).toHaveLength(1);
  });

  it("resumes: status says where to continue, an identical re-sent chunk is a no-op, a wrong offset names next_offset", async () => {
    const me = owner();
    const data = randomBytes(300_000);
    const sha256 = sha256Hex(data);
    expect(await artifactUploadStatus(dbh(), me, sha256)).toMatchObject({ received: 0, next_offset: 0, complete: false, expires_at: null });
    await appendArtifactChunk(dbh(), me, { sha256, bytes: data.length, ...chunkOf(data, 0, 100_000) }, limits);
    expect(await artifactUploadStatus(dbh(), me, sha256)).toMatchObject({ received: 100_000, next_offset: 100_000 });
    expect(await appendArtifactChunk(dbh(), me, { sha256, bytes: data.length, ...chunkOf(data, 0, 100_000) }, limits)).toMatchObject({ received: 100_000 });
    const ahead = await codeOf(appendArtifactChunk(dbh(), me, { sha256, bytes: data.length, ...chunkOf(data, 200_000, 100_000) }, limits));
    expect(ahead).toMatchObject({ code: "INVALID_ARGUMENT", details: { next_offset: 100_000 } });
    expect(ahead.message).toContain("next_offset is 100000");
    // Overlapping the stored end with new bytes is not a re-send.
    const overlap = await codeOf(appendArtifactChunk(dbh(), me, { sha256, bytes: data.length, ...chunkOf(data, 50_000, 100_000) }, limits));
    expect(overlap).toMatchObject({ code: "INVALID_ARGUMENT", details: { next_offset: 100_000 } });
    // A re-send whose bytes differ from what is stored is refused too.
    const changed = Buffer.from(data.subarray(0, 1000));
    changed[0] = changed[0]! ^ 1;
    expect(await codeOf(appendArtifactChunk(dbh(), me, { sha256, bytes: data.length, offset: 0, data: changed, chunkSha256: sha256Hex(changed) }, limits))).toMatchObject({ code: "INVALID_ARGUMENT" });
    const bytesChanged = await codeOf(appendArtifactChunk(dbh(), me, { sha256, bytes: data.length + 1, ...chunkOf(data, 100_000, 1000) }, limits));
    expect(bytesChanged.message).toContain(`begun with bytes=${data.length}`);
    expect(await appendArtifactChunk(dbh(), me, { sha256, bytes: data.length, ...chunkOf(data, 100_000, 200_000) }, limits)).toMatchObject({ complete: true });
    // After completion any chunk of it is answered with the complete status.
    expect(await appendArtifactChunk(dbh(), me, { sha256, bytes: data.length, ...chunkOf(data, 0, 10) }, limits)).toMatchObject({ complete: true, received: data.length });
  });

  it("refuses a chunk whose bytes do not match chunk_sha256, storing nothing", async () => {
    const me = owner();
    const data = randomBytes(5000);
    const sha256 = sha256Hex(data);
    const refused = await codeOf(appendArtifactChunk(dbh(), me, { sha256, bytes: data.length, offset: 0, data, chunkSha256: sha256Hex(Buffer.from("other")) }, limits));
    expect(refused.code).toBe("INVALID_ARGUMENT");
    expect(refused.message).toContain("chunk_sha256");
    expect(await artifactUploadStatus(dbh(), me, sha256)).toMatchObject({ received: 0, expires_at: null });
  });

  it("discards an upload whose whole does not hash to the declared sha256, and says so", async () => {
    const me = owner();
    const data = randomBytes(4000);
    const claimed = sha256Hex(Buffer.from("not these bytes"));
    await appendArtifactChunk(dbh(), me, { sha256: claimed, bytes: data.length, ...chunkOf(data, 0, 2000) }, limits);
    const refused = await codeOf(appendArtifactChunk(dbh(), me, { sha256: claimed, bytes: data.length, ...chunkOf(data, 2000, 2000) }, limits));
    expect(refused.code).toBe("INVALID_ARGUMENT");
    expect(refused.message).toContain(`hash to ${sha256Hex(data)}, not the declared ${claimed}; the upload was discarded`);
    expect(await artifactUploadStatus(dbh(), me, claimed)).toMatchObject({ received: 0, expires_at: null });
    const blobs = await dbh().select().from(artifactBlobs).where(eq(artifactBlobs.sha256, claimed));
    expect(blobs).toEqual([]);
  });

  it("refuses an artifact over the size cap (POLICY_REFUSED) and uploads past the owner's quota (RATE_LIMITED)", async () => {
    const me = owner();
    const big = await codeOf(appendArtifactChunk(dbh(), me, { sha256: "a".repeat(64), bytes: limits.maxBytes + 1, ...chunkOf(randomBytes(10), 0, 10) }, limits));
    expect(big.code).toBe("POLICY_REFUSED");
    expect(big.message).toContain("LEASEHOLD_ARTIFACT_MAX_BYTES");
    // Declared sizes count from the first chunk: two 5 MiB uploads begun = 10 MiB = the quota.
    const five = 5 * 1024 * 1024;
    for (const fill of ["b", "c"]) await appendArtifactChunk(dbh(), me, { sha256: fill.repeat(64), bytes: five, ...chunkOf(randomBytes(10), 0, 10) }, limits);
    const over = await codeOf(appendArtifactChunk(dbh(), me, { sha256: "d".repeat(64), bytes: 1, ...chunkOf(randomBytes(1), 0, 1) }, limits));
    expect(over.code).toBe("RATE_LIMITED");
    expect(over.message).toContain(`already holds ${2 * five} bytes`);
    expect(over.message).toContain("LEASEHOLD_ARTIFACT_QUOTA_BYTES");
    // Another owner's quota is its own.
    const data = randomBytes(100);
    expect(await storeArtifact(dbh(), owner(), data, limits)).toEqual({ sha256: sha256Hex(data), bytes: 100 });
  });

  it("an idle incomplete upload expires: it stops counting, starts again at 0, and the sweep reclaims its bytes", async () => {
    const me = owner();
    const data = randomBytes(3000);
    const sha256 = sha256Hex(data);
    const t0 = new Date();
    await appendArtifactChunk(dbh(), me, { sha256, bytes: data.length, ...chunkOf(data, 0, 1000) }, limits, t0);
    const later = new Date(t0.getTime() + limits.idleMs + 1000);
    expect(await artifactUploadStatus(dbh(), me, sha256, later)).toMatchObject({ received: 0, next_offset: 0, expires_at: null });
    const swept = await sweepArtifacts(dbh(), later);
    expect(swept.uploads).toBeGreaterThanOrEqual(1);
    expect(await dbh().select().from(artifactBlobs).where(eq(artifactBlobs.sha256, sha256))).toEqual([]);
    expect(await appendArtifactChunk(dbh(), me, { sha256, bytes: data.length, ...chunkOf(data, 0, 3000) }, limits, later)).toMatchObject({ complete: true });
  });

  it("dedups content across owners but shows each owner only its own uploads; retention ends visibility, the sweep reclaims the blob", async () => {
    const alice = owner();
    const bob = owner();
    const data = randomBytes(2500);
    const sha256 = sha256Hex(data);
    const t0 = new Date();
    await storeArtifact(dbh(), alice, data, limits, t0);
    // Bob knows the hash but never sent the bytes: nothing.
    expect(await codeOf(claimArtifact(dbh(), bob, sha256, limits, t0))).toMatchObject({ code: "NOT_FOUND" });
    expect(await artifactUploadStatus(dbh(), bob, sha256)).toMatchObject({ complete: false, received: 0 });
    // Bob uploads the same bytes: now it is his too, and stored once.
    expect(await appendArtifactChunk(dbh(), bob, { sha256, bytes: data.length, ...chunkOf(data, 0, data.length) }, limits, t0)).toMatchObject({ complete: true });
    expect(await claimArtifact(dbh(), bob, sha256, limits, t0)).toEqual({ sha256, bytes: 2500 });
    const blobs = await dbh().select().from(artifactBlobs).where(eq(artifactBlobs.sha256, sha256));
    expect(blobs).toHaveLength(1);
    const uploads = await dbh().select({ blobId: artifactUploads.blobId }).from(artifactUploads).where(eq(artifactUploads.sha256, sha256));
    expect(uploads.map((u) => u.blobId)).toEqual([blobs[0]!.id, blobs[0]!.id]);
    // Past retention nobody may name it and the sweep reclaims it.
    const later = new Date(t0.getTime() + limits.retentionMs + 1000);
    expect(await codeOf(claimArtifact(dbh(), alice, sha256, limits, later))).toMatchObject({ code: "NOT_FOUND" });
    await sweepArtifacts(dbh(), later);
    expect(await dbh().select().from(artifactBlobs).where(eq(artifactBlobs.sha256, sha256))).toEqual([]);
    const [chunks] = await executeRows<{ n: number }>(dbh(), sql`select count(*)::int as n from artifact_chunks where blob_id = ${blobs[0]!.id}`);
    expect(chunks?.n).toBe(0);
  });

  it("claiming an artifact extends its retention; a complete blob named by a queued job survives the sweep", async () => {
    const me = owner();
    const data = randomBytes(700);
    const sha256 = sha256Hex(data);
    const t0 = new Date();
    await storeArtifact(dbh(), me, data, limits, t0);
    const t1 = new Date(t0.getTime() + limits.retentionMs - 1000);
    await claimArtifact(dbh(), me, sha256, limits, t1);
    const t2 = new Date(t0.getTime() + limits.retentionMs + 1000);
    expect(await claimArtifact(dbh(), me, sha256, limits, t2)).toEqual({ sha256, bytes: 700 });
    // Reclaim only when nothing pending names it: simulate a queued job naming it.
    const far = new Date(t2.getTime() + 2 * limits.retentionMs);
    await executeRows(dbh(), sql`update artifact_uploads set expires_at = ${t2.toISOString()}::timestamptz where sha256 = ${sha256}`);
    const pending = await pendingJobNaming(sha256);
    await sweepArtifacts(dbh(), far);
    expect(await dbh().select().from(artifactBlobs).where(eq(artifactBlobs.sha256, sha256))).toHaveLength(1);
    await pending.finish();
    await sweepArtifacts(dbh(), far);
    expect(await dbh().select().from(artifactBlobs).where(eq(artifactBlobs.sha256, sha256))).toHaveLength(0);
  });

  it("readArtifactRange refuses out-of-range offsets and lengths, and unknown artifacts", async () => {
    const data = randomBytes(100);
    const { sha256 } = await storeArtifact(dbh(), owner(), data, limits);
    expect(await codeOf(readArtifactRange(dbh(), sha256, 100, 1))).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(await codeOf(readArtifactRange(dbh(), sha256, -1, 1))).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(await codeOf(readArtifactRange(dbh(), sha256, 0, 0))).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(await codeOf(readArtifactRange(dbh(), sha256, 0, 4 * 1024 * 1024 + 1))).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(await codeOf(readArtifactRange(dbh(), "e".repeat(64), 0, 1))).toMatchObject({ code: "NOT_FOUND" });
  });

  /** A queued job whose prepared arguments name `sha256` (rows inserted directly: the sweep reads only these columns). */
  async function pendingJobNaming(sha256: string): Promise<{ finish(): Promise<void> }> {
    const hostId = randomUUID();
    const actionId = randomUUID();
    const jobId = randomUUID();
    await executeRows(dbh(), sql`insert into hosts (id, name, public_key) values (${hostId}, ${`h-${hostId.slice(0, 8)}`}, 'pem')`);
    await executeRows(
      dbh(),
      sql`insert into actions (id, channel, caller_key, operation, capability_id, action_hash, prepared, risk_level, state)
          values (${actionId}, 'mcp', 'token:x', 'apk_inspect', 'apk-static', 'sha256:x', ${JSON.stringify({ arguments: { artifact: { sha256, bytes: 1 } } })}::jsonb, 'read_only', 'dispatched')`,
    );
    await executeRows(
      dbh(),
      sql`insert into jobs (id, action_id, host_id, payload, signature, state, deadline)
          values (${jobId}, ${actionId}, ${hostId}, ${JSON.stringify({ action: { arguments: { artifact: { sha256, bytes: 1 } } } })}::jsonb, 'sig', 'queued', now())`,
    );
    return {
      async finish() {
        await executeRows(dbh(), sql`update jobs set state = 'completed' where id = ${jobId}`);
      },
    };
  }
});
