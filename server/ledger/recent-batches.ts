import { encodeBase64 } from "../trust/ledger/base64";
import { inclusionProof } from "../trust/ledger/proof";
import { frontierKeys, type Frontier, type NodeKey, type NodeReader, type StoredNode } from "../trust/ledger/tree";

/** What one committed integration batch produced. */
export interface CommittedBatch {
  /** The frontier the batch extended (its tree size is the first new leaf index). */
  before: Frontier;
  /** Entry ids in leaf order: entryIds[i] is leaf `before.size + i`. */
  entryIds: readonly bigint[];
  /** Every perfect subtree the batch completed, leaves included. */
  newNodes: readonly StoredNode[];
  size: number;
  /** The checkpoint note the batch signed at `size`. */
  note: string;
}

export interface RecentReceipt {
  leaf_index: number;
  tree_size: number;
  inclusion_proof: string[];
  checkpoint: string;
}

export interface RecentBatches {
  remember(batch: CommittedBatch): void;
  /**
   * The receipt of an entry a remembered batch integrated, against the
   * newest remembered checkpoint, or null when this process did not
   * integrate it (or has forgotten it): the caller reads the database then.
   * Nodes not remembered are read through `fallback`.
   */
  receipt(entryId: bigint, fallback: NodeReader): Promise<RecentReceipt | null>;
}

const nodeId = (k: NodeKey): string => `${k.level}/${k.index}`;

/**
 * What the in-process integrator remembers of the batches it committed, so a
 * caller waiting for its receipt gets its leaf index, inclusion proof and
 * signed checkpoint without reading them back (the receipt cost
 * five reads after the batch — leaf index, newest checkpoint, its
 * cosignatures, the leaf, the path).
 *
 * Safe because stored tree nodes never change: a perfect subtree's hash is
 * fixed once its batch commits, so a remembered node equals the stored one,
 * and only batches whose transaction committed are remembered. A proof for a
 * leaf of the newest batch needs only the frontier that batch extended and
 * the nodes it completed (the left siblings of a new leaf are subtrees of
 * that frontier or of the batch; the right ones lie inside the batch), so a
 * fresh receipt is answered from memory; anything older falls back to reads.
 *
 * The checkpoint is the note exactly as the batch signed and stored it,
 * without witness cosignatures: witnesses cosign a checkpoint after it is
 * published, so a checkpoint moments old has none yet (the ledger tools and
 * exports serve cosignatures as they arrive).
 *
 * Bounded: at most `maxNodes` node hashes and `maxEntries` leaf indices,
 * the oldest forgotten first (Map keeps insertion order).
 */
export function recentBatches(options: { maxNodes?: number; maxEntries?: number } = {}): RecentBatches {
  const maxNodes = options.maxNodes ?? 65_536;
  const maxEntries = options.maxEntries ?? 16_384;
  const nodes = new Map<string, Uint8Array>();
  const leaves = new Map<bigint, number>();
  let latest: { size: number; note: string } | null = null;

  const put = (id: string, hash: Uint8Array): void => {
    nodes.delete(id);
    nodes.set(id, hash);
    if (nodes.size > maxNodes) nodes.delete(nodes.keys().next().value as string);
  };

  return {
    remember(batch) {
      if (batch.before.size > 0) frontierKeys(batch.before.size).forEach((k, i) => put(nodeId(k), batch.before.hashes[i]!));
      for (const n of batch.newNodes) put(nodeId(n), n.hash);
      batch.entryIds.forEach((id, i) => {
        leaves.set(id, batch.before.size + i);
        if (leaves.size > maxEntries) leaves.delete(leaves.keys().next().value as bigint);
      });
      if (latest === null || batch.size > latest.size) latest = { size: batch.size, note: batch.note };
    },
    async receipt(entryId, fallback) {
      const index = leaves.get(entryId);
      const at = latest;
      if (index === undefined || at === null || index >= at.size) return null;
      const reader: NodeReader = {
        async getNodes(keys) {
          const missing = keys.filter((k) => !nodes.has(nodeId(k)));
          const read = missing.length === 0 ? [] : await fallback.getNodes(missing);
          const fetched = new Map(missing.map((k, i) => [nodeId(k), read[i]!]));
          return keys.map((k) => nodes.get(nodeId(k)) ?? fetched.get(nodeId(k))!);
        },
      };
      const proof = await inclusionProof(index, at.size, reader);
      return { leaf_index: index, tree_size: at.size, inclusion_proof: proof.map(encodeBase64), checkpoint: at.note };
    },
  };
}
