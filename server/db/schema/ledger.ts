// Ledger (Merkle log)
import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  check,
  index,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { bytea, createdAt } from "./columns";

/**
 * Sequencing: an append is one INSERT here (no shared row is touched, so
 * concurrent appends never queue on a lock). The integrator later assigns
 * `leaf_index` in batches; rows with a null index are waiting.
 */
export const ledgerEntries = pgTable(
  "ledger_entries",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    /** JCS bytes of {type, time, action_id, actor, data}. */
    body: bytea("body").notNull(),
    /** Assigned by the integrator; the leaf hash itself is the level-0 row of ledger_nodes. */
    leafIndex: bigint("leaf_index", { mode: "bigint" }).unique(),
    createdAt: createdAt(),
  },
  (t) => [index("ledger_entries_pending_idx").on(t.id).where(sql`${t.leafIndex} is null`)],
);

/**
 * The log's identity, pinned by the first integrator: every later checkpoint
 * must be signed by this key, so a hub process holding a different key
 * stands by instead of forking the log.
 */
export const ledgerLog = pgTable(
  "ledger_log",
  {
    id: smallint("id").primaryKey().default(1),
    origin: text("origin").notNull(),
    verifierKey: text("verifier_key").notNull(),
    createdAt: createdAt(),
  },
  (t) => [check("ledger_log_singleton", sql`${t.id} = 1`)],
);

/** Witnesses whose cosignatures the hub accepts (guest agents, external witnesses). */
export const ledgerWitnesses = pgTable("ledger_witnesses", {
  keyId: text("key_id").primaryKey(),
  name: text("name").notNull(),
  /** cosignature/v1 note verifier key. */
  verifierKey: text("verifier_key").notNull().unique(),
  createdAt: createdAt(),
  removedAt: timestamp("removed_at", { withTimezone: true }),
});

/** Perfect subtrees (level, index) of the Merkle tree, enough for O(log n) proofs. */
export const ledgerNodes = pgTable(
  "ledger_nodes",
  {
    level: smallint("level").notNull(),
    index: bigint("idx", { mode: "bigint" }).notNull(),
    hash: bytea("hash").notNull(),
  },
  (t) => [primaryKey({ columns: [t.level, t.index] })],
);

export const ledgerCheckpoints = pgTable("ledger_checkpoints", {
  treeSize: bigint("tree_size", { mode: "bigint" }).primaryKey(),
  rootHash: bytea("root_hash").notNull(),
  /** The C2SP signed note, verbatim. */
  note: text("note").notNull(),
  createdAt: createdAt(),
});

export const ledgerCosignatures = pgTable(
  "ledger_cosignatures",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    treeSize: bigint("tree_size", { mode: "bigint" })
      .notNull()
      .references(() => ledgerCheckpoints.treeSize),
    witnessName: text("witness_name").notNull(),
    witnessKeyId: text("witness_key_id").notNull(),
    /** The C2SP cosignature line, verbatim. */
    signatureLine: text("signature_line").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("ledger_cosignatures_once_idx").on(t.treeSize, t.witnessKeyId)],
);
