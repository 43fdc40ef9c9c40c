import { describe, expect, it } from "vitest";
import { signCheckpoint } from "../trust/ledger/checkpoint";
import { encodeBase64 } from "../trust/ledger/base64";
import { hashLeaf } from "../trust/ledger/hash";
import { generateSignerKey } from "../trust/ledger/note";
import { inclusionProof } from "../trust/ledger/proof";
import { EMPTY_FRONTIER, MemoryNodeStore, extendTree, type Frontier } from "../trust/ledger/tree";
import { recentBatches } from "./recent-batches";
import { verifyReceipt } from "./receipt";

const ORIGIN = "leasehold.test/recent";
const log = generateSignerKey(ORIGIN);
const entry = (id: number): Uint8Array => new TextEncoder().encode(`entry ${id}`);

/** Integrates `sizes` as consecutive batches into a store (the "database") and the memory under test. */
function integrate(sizes: number[], memory = recentBatches(), store = new MemoryNodeStore()) {
  let frontier: Frontier = EMPTY_FRONTIER;
  let nextId = 1;
  for (const count of sizes) {
    const ids = Array.from({ length: count }, () => BigInt(nextId++));
    const extended = extendTree(frontier, ids.map((id) => hashLeaf(entry(Number(id)))));
    store.put(extended.newNodes);
    const note = signCheckpoint({ origin: ORIGIN, size: extended.size, root: extended.root, extensions: [] }, log.signer);
    memory.remember({ before: frontier, entryIds: ids, newNodes: extended.newNodes, size: extended.size, note });
    frontier = extended.frontier;
  }
  return { memory, store, size: frontier.size };
}

describe("recent integration batches", () => {
  it("answer a receipt for every entry of the newest batch from memory alone, and it verifies", async () => {
    for (const sizes of [[1], [1, 1], [3, 5], [7, 1], [8, 8], [13, 1, 1], [100, 37], [64, 1], [5, 6, 7, 9]]) {
      const { memory, store, size } = integrate(sizes);
      const noReads = { getNodes: async () => { throw new Error("read the database"); } };
      const first = size - sizes.at(-1)!;
      for (let leaf = first; leaf < size; leaf++) {
        const receipt = await memory.receipt(BigInt(leaf + 1), noReads);
        expect(receipt, `sizes ${sizes} leaf ${leaf}`).not.toBeNull();
        expect(receipt!.leaf_index).toBe(leaf);
        expect(receipt!.tree_size).toBe(size);
        // The same proof the stored tree gives, and a receipt a holder can verify offline.
        expect(receipt!.inclusion_proof).toEqual((await inclusionProof(leaf, size, store)).map(encodeBase64));
        expect(verifyReceipt(entry(leaf + 1), receipt!, log.verifier)).toMatchObject({ ok: true, checkpoint: { size } });
      }
    }
  });

  it("prove an older batch's entry against the newest checkpoint, reading only what is not remembered", async () => {
    const store = new MemoryNodeStore();
    const { memory, size } = integrate([9, 4, 3], recentBatches({ maxNodes: 6 }), store);
    const receipt = await memory.receipt(2n, store);
    expect(receipt!.tree_size).toBe(size);
    expect(verifyReceipt(entry(2), receipt!, log.verifier).ok).toBe(true);
    expect(store.batches).toBe(1);
    expect(receipt!.inclusion_proof).toEqual((await inclusionProof(1, size, store)).map(encodeBase64));
  });

  it("know nothing of entries they did not integrate or have forgotten", async () => {
    const { memory, store } = integrate([4, 4], recentBatches({ maxEntries: 5 }));
    expect(await memory.receipt(9n, store)).toBeNull();
    expect(await memory.receipt(3n, store)).toBeNull();
    expect(await memory.receipt(4n, store)).not.toBeNull();
    expect(await recentBatches().receipt(1n, store)).toBeNull();
  });
});
