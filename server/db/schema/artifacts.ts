// Artifacts: input files agents hand to capabilities (server/artifacts)
import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { bytea, createdAt } from "./columns";

/**
 * Content, stored once per blob. A blob is first the private receiving area
 * of one upload (`complete = false`); at completion it either becomes THE
 * complete blob of its SHA-256 (at most one, by the partial unique index) or
 * is dropped in favour of the one that already exists — so identical content
 * uploaded by several owners is stored once, and a half-written upload can
 * never be read as anyone's artifact.
 */
export const artifactBlobs = pgTable(
  "artifact_blobs",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** 64 lower-case hex: what the uploader declared; verified before `complete` is set. */
    sha256: text("sha256").notNull(),
    bytes: bigint("bytes", { mode: "number" }).notNull(),
    complete: boolean("complete").notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("artifact_blobs_complete_sha256_idx").on(t.sha256).where(sql`${t.complete}`),
    check("artifact_blobs_bytes_positive", sql`${t.bytes} > 0`),
  ],
);

/** The bytes of a blob as rows of at most 1 MiB, keyed by their offset (every hub replica reads the same rows). */
export const artifactChunks = pgTable(
  "artifact_chunks",
  {
    blobId: uuid("blob_id")
      .notNull()
      .references(() => artifactBlobs.id, { onDelete: "cascade" }),
    offset: bigint("offset", { mode: "number" }).notNull(),
    data: bytea("data").notNull(),
  },
  (t) => [primaryKey({ columns: [t.blobId, t.offset] })],
);

/**
 * One owner's upload of one SHA-256: who may name the artifact. An owner
 * sees a complete artifact only through its own upload row, so knowing a
 * hash grants nothing (content is deduplicated, visibility is not).
 */
export const artifactUploads = pgTable(
  "artifact_uploads",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    /** "token:<id>" or "admin:<id>" (server/actions callerKey). */
    ownerKey: text("owner_key").notNull(),
    sha256: text("sha256").notNull(),
    /** Declared whole size; counted against the owner's quota from the first chunk on. */
    bytes: bigint("bytes", { mode: "number" }).notNull(),
    received: bigint("received", { mode: "number" }).notNull().default(0),
    /** receiving | complete */
    state: text("state").notNull(),
    blobId: uuid("blob_id")
      .notNull()
      .references(() => artifactBlobs.id),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    /** Receiving: idle expiry; complete: end of retention (extended each time an action names it). */
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex("artifact_uploads_owner_sha256_idx").on(t.ownerKey, t.sha256),
    index("artifact_uploads_expires_idx").on(t.expiresAt),
    index("artifact_uploads_blob_idx").on(t.blobId),
    check("artifact_uploads_received_bounded", sql`${t.received} >= 0 and ${t.received} <= ${t.bytes}`),
    check("artifact_uploads_state", sql`${t.state} in ('receiving', 'complete')`),
  ],
);
