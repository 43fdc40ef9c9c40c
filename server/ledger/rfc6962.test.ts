/**
 * Known answers from outside this project anchor the tree, proof and
 * reference code: every other tree test compares our fast code with our own
 * recursive reference, which could share a misreading of the RFC. These
 * vectors (testdata/rfc6962-known-answers.json, copied as data from
 * transparency-dev/merkle, which took them from certificate-transparency)
 * were computed by other implementations.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EMPTY_ROOT, hashLeaf } from "../trust/ledger/hash";
import { consistencyProof, inclusionProof, verifyConsistency, verifyInclusion } from "../trust/ledger/proof";
import { referenceConsistency, referenceInclusion, referenceRoot } from "./testdata/reference";
import { EMPTY_FRONTIER, MemoryNodeStore, extendTree, rootAt } from "../trust/ledger/tree";

interface KnownAnswers {
  leaf_inputs: string[];
  node_hashes: string[][];
  roots: string[];
  inclusion: Array<{ leaf_index: number; tree_size: number; proof: string[] }>;
  consistency: Array<{ old_size: number; new_size: number; proof: string[] }>;
}

const vectors = JSON.parse(readFileSync(join(import.meta.dirname, "testdata", "rfc6962-known-answers.json"), "utf8")) as KnownAnswers;
const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const unhex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, "hex"));
const leaves = vectors.leaf_inputs.map(unhex);
const leafHashes = leaves.map(hashLeaf);

const store = new MemoryNodeStore();
const batchRoots: string[] = [hex(extendTree(EMPTY_FRONTIER, []).root)];
let frontier = EMPTY_FRONTIER;
for (const leafHash of leafHashes) {
  const result = extendTree(frontier, [leafHash]);
  store.put(result.newNodes);
  frontier = result.frontier;
  batchRoots.push(hex(result.root));
}

describe("RFC 6962 known answers (transparency-dev/merkle test data)", () => {
  it("has the 8 leaves, 15 subtree hashes and 9 roots it should (a sanity check of the data file)", () => {
    expect(leaves).toHaveLength(8);
    expect(vectors.node_hashes.flat()).toHaveLength(15);
    expect(vectors.roots).toHaveLength(9);
  });

  it("leaf hashes: SHA-256(0x00 ‖ data) of each input", () => {
    expect(leafHashes.map(hex)).toEqual(vectors.node_hashes[0]);
  });

  it("every perfect subtree the integrator stores equals the known node hash", async () => {
    for (const [level, row] of vectors.node_hashes.entries()) {
      const stored = await store.getNodes(row.map((_, index) => ({ level, index })));
      expect(stored.map(hex), `level ${level}`).toEqual(row);
    }
  });

  it("the root at every size 0..8: after each append, from the node store, and from the recursive reference", async () => {
    expect(hex(EMPTY_ROOT)).toBe(vectors.roots[0]);
    expect(batchRoots).toEqual(vectors.roots);
    for (let size = 0; size <= 8; size++) {
      expect(hex(await rootAt(size, store)), `rootAt(${size})`).toBe(vectors.roots[size]);
      expect(hex(referenceRoot(leaves.slice(0, size))), `reference root ${size}`).toBe(vectors.roots[size]);
    }
  });

  it("inclusion proofs: ours equal the known proofs, and verify against the known roots", async () => {
    for (const v of vectors.inclusion) {
      const proof = await inclusionProof(v.leaf_index, v.tree_size, store);
      expect(proof.map(hex), `inclusion ${v.leaf_index} in ${v.tree_size}`).toEqual(v.proof);
      expect(referenceInclusion(v.leaf_index, leaves.slice(0, v.tree_size)).map(hex)).toEqual(v.proof);
      expect(verifyInclusion(leafHashes[v.leaf_index]!, v.leaf_index, v.tree_size, v.proof.map(unhex), unhex(vectors.roots[v.tree_size]!))).toEqual({ ok: true });
    }
  });

  it("every leaf of every tree up to 8: our inclusion proof leads to the known root, and fails for a neighbour leaf", async () => {
    for (let size = 1; size <= 8; size++) {
      for (let index = 0; index < size; index++) {
        const proof = await inclusionProof(index, size, store);
        const root = unhex(vectors.roots[size]!);
        expect(verifyInclusion(leafHashes[index]!, index, size, proof, root), `${index} in ${size}`).toEqual({ ok: true });
        if (size > 1) expect(verifyInclusion(leafHashes[(index + 1) % size]!, index, size, proof, root).ok).toBe(false);
      }
    }
  });

  it("consistency proofs: ours equal the known proofs, and verify between the known roots", async () => {
    for (const v of vectors.consistency) {
      const proof = await consistencyProof(v.old_size, v.new_size, store);
      expect(proof.map(hex), `consistency ${v.old_size} → ${v.new_size}`).toEqual(v.proof);
      expect(referenceConsistency(v.old_size, leaves.slice(0, v.new_size)).map(hex)).toEqual(v.proof);
      const check = verifyConsistency(v.old_size, v.new_size, v.proof.map(unhex), unhex(vectors.roots[v.old_size]!), unhex(vectors.roots[v.new_size]!));
      expect(check).toEqual({ ok: true });
    }
  });

  it("every pair of sizes up to 8: our consistency proof links the known roots, and a swapped pair of roots fails", async () => {
    for (let newSize = 0; newSize <= 8; newSize++) {
      for (let oldSize = 0; oldSize <= newSize; oldSize++) {
        const proof = await consistencyProof(oldSize, newSize, store);
        const oldRoot = unhex(vectors.roots[oldSize]!);
        const newRoot = unhex(vectors.roots[newSize]!);
        expect(verifyConsistency(oldSize, newSize, proof, oldRoot, newRoot), `${oldSize} → ${newSize}`).toEqual({ ok: true });
        if (oldSize > 0 && oldSize < newSize) expect(verifyConsistency(oldSize, newSize, proof, newRoot, oldRoot).ok).toBe(false);
      }
    }
  });
});
