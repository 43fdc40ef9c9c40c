import { decodeBase64Strict, encodeBase64 } from "../trust/ledger/base64";
import { verifyCheckpointNote, type Checkpoint } from "../trust/ledger/checkpoint";
import { hashLeaf } from "../trust/ledger/hash";
import type { Result, VerifierKey } from "../trust/ledger/note";
import { inclusionProof, verifyInclusion } from "../trust/ledger/proof";
import type { NodeReader } from "../trust/ledger/tree";

/**
 * A ledger receipt: what an action result carries so its holder can prove,
 * later and offline, that the entry is in the log — the leaf index, an
 * inclusion proof and the signed checkpoint the proof is against.
 */
export interface Receipt {
  leaf_index: number;
  /** Base64 hashes, RFC 9162 inclusion path order. */
  inclusion_proof: string[];
  /** The signed checkpoint note the proof leads to. */
  checkpoint: string;
}

/** Builds a receipt for leaf `index` against a checkpoint the caller has already signed at `size`. */
export async function buildReceipt(index: number, size: number, signedCheckpoint: string, reader: NodeReader): Promise<Receipt> {
  const proof = await inclusionProof(index, size, reader);
  return { leaf_index: index, inclusion_proof: proof.map(encodeBase64), checkpoint: signedCheckpoint };
}

/** Checks the checkpoint's signature, then that `entry` is at `leaf_index` in the tree it signs. */
export function verifyReceipt(entry: Uint8Array, receipt: Receipt, logKey: VerifierKey | string): Result<{ checkpoint: Checkpoint }> {
  const verified = verifyCheckpointNote(receipt.checkpoint, logKey);
  if (!verified.ok) return { ok: false, reason: `checkpoint: ${verified.reason}` };
  const proof: Uint8Array[] = [];
  for (const element of receipt.inclusion_proof) {
    const hash = decodeBase64Strict(element);
    if (hash === undefined) return { ok: false, reason: "inclusion proof element is not canonical base64" };
    proof.push(hash);
  }
  const { size, root } = verified.checkpoint;
  const included = verifyInclusion(hashLeaf(entry), receipt.leaf_index, size, proof, root);
  if (!included.ok) return { ok: false, reason: `inclusion: ${included.reason}` };
  return { ok: true, checkpoint: verified.checkpoint };
}
