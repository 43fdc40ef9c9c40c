import { sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import { LeaseholdError } from "../errors";
import { encodeBase64 } from "../trust/ledger/base64";
import { databaseNodeReader, toBytes } from "./node-store";
import { consistencyProof, inclusionProof } from "../trust/ledger/proof";
import { addCosignature } from "../trust/ledger/witness";

/** The newest signed checkpoint, or null before the first integration. */
export interface LatestCheckpoint {
  size: number;
  root: string;
  note: string;
  created_at: string;
}

export async function latestCheckpoint(db: Database): Promise<LatestCheckpoint | null> {
  const [row] = await executeRows<{ tree_size: string | number; root_hash: Uint8Array; note: string; created_at: Date | string }>(
    db,
    sql`select tree_size, root_hash, note, created_at from ledger_checkpoints order by tree_size desc limit 1`,
  );
  if (!row) return null;
  return { size: Number(row.tree_size), root: encodeBase64(toBytes(row.root_hash)), note: row.note, created_at: new Date(row.created_at).toISOString() };
}

/** The checkpoint of `size` as the log signed it: one signature, the log's. */
export async function checkpointAt(db: Database, size: number): Promise<string | null> {
  const [row] = await executeRows<{ note: string }>(db, sql`select note from ledger_checkpoints where tree_size = ${BigInt(size)}`);
  return row?.note ?? null;
}

/** The witness cosignatures stored for the checkpoint of `size`, oldest first. */
export async function cosignaturesAt(db: Database, size: number): Promise<Array<{ witness_key: string; line: string }>> {
  return executeRows<{ witness_key: string; line: string }>(
    db,
    sql`select w.verifier_key as witness_key, c.signature_line as line from ledger_cosignatures c
        join ledger_witnesses w on w.key_id = c.witness_key_id where c.tree_size = ${BigInt(size)} order by c.id`,
  );
}

/**
 * A signed checkpoint note with every stored cosignature of it appended as
 * extra signature lines (C2SP tlog-cosignature: a cosigned checkpoint is the
 * log's note plus the witnesses' lines). A verifier that knows only the log
 * key ignores the witness lines; one that knows a witness key checks them.
 */
export async function withCosignatures(db: Database, size: number, note: string): Promise<string> {
  let cosigned = note;
  for (const c of await cosignaturesAt(db, size)) cosigned = addCosignature(cosigned, c.line);
  return cosigned;
}

/** checkpointAt, with its cosignatures. */
export async function cosignedCheckpointAt(db: Database, size: number): Promise<string | null> {
  const note = await checkpointAt(db, size);
  return note === null ? null : withCosignatures(db, size, note);
}

export interface InclusionProofAnswer {
  leaf_index: number;
  tree_size: number;
  leaf_hash: string;
  proof: string[];
  /** The signed checkpoint at `tree_size` the proof leads to, with the witness cosignatures it has so far. */
  checkpoint: string;
}

function assertIndex(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new LeaseholdError("INVALID_ARGUMENT", `${what} must be a non-negative integer`, { tier: "ledger" });
}

/**
 * An inclusion proof for leaf `leafIndex` against the signed checkpoint of
 * `treeSize` (default: the newest). Only sizes that were checkpointed can be
 * proven against, so every answer comes with a signature to check.
 */
export async function proveInclusion(db: Database, leafIndex: number, treeSize?: number): Promise<InclusionProofAnswer> {
  assertIndex(leafIndex, "leaf_index");
  // Without a size, the newest checkpoint's own note is the one to prove against (one read, not two).
  const latest = treeSize === undefined ? await latestCheckpoint(db) : null;
  const size = treeSize ?? latest?.size ?? 0;
  assertIndex(size, "tree_size");
  const note = latest !== null ? await withCosignatures(db, size, latest.note) : await cosignedCheckpointAt(db, size);
  if (!note) throw new LeaseholdError("NOT_FOUND", `no checkpoint at tree size ${size}`, { tier: "ledger" });
  if (leafIndex >= size) throw new LeaseholdError("NOT_FOUND", `leaf ${leafIndex} is not in the tree of size ${size} (not integrated yet?)`, { tier: "ledger" });
  const reader = databaseNodeReader(db);
  const [leaf] = await reader.getNodes([{ level: 0, index: leafIndex }]);
  const proof = await inclusionProof(leafIndex, size, reader);
  return { leaf_index: leafIndex, tree_size: size, leaf_hash: encodeBase64(leaf!), proof: proof.map(encodeBase64), checkpoint: note };
}

export interface ConsistencyProofAnswer {
  from_size: number;
  to_size: number;
  proof: string[];
  checkpoint: string;
}

export async function proveConsistency(db: Database, fromSize: number, toSize?: number): Promise<ConsistencyProofAnswer> {
  assertIndex(fromSize, "from_size");
  const size = toSize ?? (await latestCheckpoint(db))?.size ?? 0;
  assertIndex(size, "to_size");
  if (fromSize > size) throw new LeaseholdError("INVALID_ARGUMENT", `from_size ${fromSize} is larger than to_size ${size}`, { tier: "ledger" });
  const note = await cosignedCheckpointAt(db, size);
  if (!note) throw new LeaseholdError("NOT_FOUND", `no checkpoint at tree size ${size}`, { tier: "ledger" });
  const proof = await consistencyProof(fromSize, size, databaseNodeReader(db));
  return { from_size: fromSize, to_size: size, proof: proof.map(encodeBase64), checkpoint: note };
}

/** The leaf index an entry id was integrated at, or null while it waits. */
export async function leafIndexOf(db: Database, entryId: bigint): Promise<number | null> {
  const [row] = await executeRows<{ leaf_index: string | number | null }>(db, sql`select leaf_index from ledger_entries where id = ${entryId}`);
  if (!row) throw new LeaseholdError("NOT_FOUND", `no ledger entry ${entryId}`, { tier: "ledger" });
  return row.leaf_index === null ? null : Number(row.leaf_index);
}

/** The log identity pinned by the first integration (origin + verifier key), or null for an empty log. */
export async function pinnedLogIdentity(db: Database): Promise<{ origin: string; verifier: string } | null> {
  const [row] = await executeRows<{ origin: string; verifier_key: string }>(db, sql`select origin, verifier_key from ledger_log where id = 1`);
  return row ? { origin: row.origin, verifier: row.verifier_key } : null;
}
