/**
 * An action's ledger side: every entry whose body names the action id, in
 * append order, and a receipt for one of them (leaf index, inclusion proof,
 * signed checkpoint) checked with server/ledger/receipt.ts against the log
 * key this hub pinned.
 */
import { sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import { LeaseholdError } from "../errors";
import { decodeEntry } from "../ledger/entry";
import { toBytes } from "../ledger/node-store";
import { pinnedLogIdentity, proveInclusion } from "../ledger/prove";
import { verifyReceipt, type Receipt } from "../ledger/receipt";

export interface TimelineEntry {
  /** Leaf index in the Merkle log; null while the entry waits for integration. */
  leaf_index: number | null;
  entry_id: string;
  type: string;
  time: string | null;
  actor: string | null;
  data: Record<string, unknown> | null;
  /** Set when the stored bytes do not decode as a valid entry (the audit explorer names the index). */
  invalid: string | null;
}

export interface ReceiptView {
  receipt: Receipt;
  tree_size: number;
  verified: boolean;
  detail: string;
  /** Which entry the receipt proves (the evidence entry when there is one). */
  entry_type: string;
}

/** Every ledger entry naming `actionId`, in append order. The body is JCS JSON, so its action_id is read in SQL. */
export async function timelineOf(db: Database, actionId: string): Promise<Array<TimelineEntry & { body: Uint8Array }>> {
  const rows = await executeRows<{ id: string | number; leaf_index: string | number | null; body: unknown }>(
    db,
    sql`select id, leaf_index, body from ledger_entries where convert_from(body, 'UTF8')::jsonb->>'action_id' = ${actionId} order by id`,
  );
  return rows.map((row) => {
    const body = toBytes(row.body);
    const decoded = decodeEntry(body);
    const base = { leaf_index: row.leaf_index === null ? null : Number(row.leaf_index), entry_id: String(row.id), body };
    if (!decoded.ok) return { ...base, type: "invalid", time: null, actor: null, data: null, invalid: decoded.reason };
    const e = decoded.entry;
    return { ...base, type: e.type, time: e.time, actor: e.actor, data: e.data as Record<string, unknown>, invalid: null };
  });
}

export async function receiptFor(db: Database, entry: (TimelineEntry & { body: Uint8Array }) | undefined): Promise<ReceiptView | null> {
  if (entry === undefined || entry.leaf_index === null) return null;
  const identity = await pinnedLogIdentity(db);
  if (identity === null) return null;
  let proof;
  try {
    proof = await proveInclusion(db, entry.leaf_index);
  } catch (error) {
    if (error instanceof LeaseholdError && error.code === "NOT_FOUND") return null; // integrated, checkpoint not signed yet
    throw error;
  }
  const receipt: Receipt = { leaf_index: proof.leaf_index, inclusion_proof: proof.proof, checkpoint: proof.checkpoint };
  const verified = verifyReceipt(entry.body, receipt, identity.verifier);
  return {
    receipt,
    tree_size: proof.tree_size,
    verified: verified.ok,
    detail: verified.ok
      ? `${entry.type} entry is leaf ${proof.leaf_index} of the tree of size ${proof.tree_size}: checkpoint signature verified with the log key this hub pinned (${identity.origin}), inclusion proof (${proof.proof.length} hashes) leads to its root`
      : verified.reason,
    entry_type: entry.type,
  };
}
