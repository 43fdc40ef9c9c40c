import { describe, expect, it } from "vitest";
import { EMPTY_ROOT, hashLeaf } from "../trust/ledger/hash";
import { consistencyProof, inclusionProof, verifyConsistency, verifyInclusion } from "../trust/ledger/proof";
import { randomInt, seededRandom } from "../../test/support/random";
import { referenceConsistency, referenceInclusion, referenceRoot, vectorLeaf } from "./testdata/reference";
import { EMPTY_FRONTIER, MemoryNodeStore, extendTree, frontierFromStore, frontierLevels, rangeKeys, rootAt, rootFromFrontier, type Frontier } from "../trust/ledger/tree";

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const SEED = Number(process.env.LEDGER_FUZZ_SEED ?? 20240601);
const MAX = 10_000;

describe("extendTree", () => {
  it("starts from the empty-tree root", () => {
    expect(hex(rootFromFrontier(EMPTY_FRONTIER))).toBe(hex(EMPTY_ROOT));
    expect(hex(EMPTY_ROOT)).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("emits every completed perfect subtree exactly once", () => {
    const result = extendTree(EMPTY_FRONTIER, Array.from({ length: 8 }, (_, i) => hashLeaf(vectorLeaf(i))));
    const keys = result.newNodes.map(({ level, index }) => `${level}/${index}`).sort();
    expect(keys).toEqual(["0/0", "0/1", "0/2", "0/3", "0/4", "0/5", "0/6", "0/7", "1/0", "1/1", "1/2", "1/3", "2/0", "2/1", "3/0"].sort());
    expect(result.frontier.hashes).toHaveLength(1);
  });

  it("refuses a frontier whose shape does not match its size", () => {
    const bad: Frontier = { size: 3, hashes: [new Uint8Array(32)] };
    expect(() => extendTree(bad, [])).toThrow(/needs 2 hashes/);
    expect(() => extendTree(EMPTY_FRONTIER, [new Uint8Array(31)])).toThrow(/32 bytes/);
  });

  it("knows the compact-range shape of large sizes exactly", () => {
    expect(frontierLevels(2 ** 53 - 1)).toHaveLength(53);
    expect(frontierLevels(2 ** 40 + 5)).toEqual([40, 2, 0]);
    expect(rangeKeys(2 ** 40, 2 ** 40 + 5)).toEqual([
      { level: 2, index: 2 ** 38 },
      { level: 0, index: 2 ** 40 + 4 },
    ]);
    expect(() => rangeKeys(1, 3)).toThrow(/aligned/);
  });
});

describe(`fast tree and proofs agree with the recursive reference (seed ${SEED}, up to ${MAX} leaves)`, () => {
  const random = seededRandom(SEED);
  const total = MAX + randomInt(random, 0, 500);
  const leaves = Array.from({ length: total }, (_, i) => vectorLeaf(i));
  const leafHashes = leaves.map(hashLeaf);
  const store = new MemoryNodeStore();
  const checkpoints: Array<{ size: number; root: Uint8Array; frontier: Frontier }> = [];

  // Batches of random size, as the integrator would see them.
  let frontier = EMPTY_FRONTIER;
  while (frontier.size < total) {
    const batch = Math.min(total - frontier.size, randomInt(random, 1, random() < 0.3 ? 3 : 700));
    const result = extendTree(frontier, leafHashes.slice(frontier.size, frontier.size + batch));
    store.put(result.newNodes);
    frontier = result.frontier;
    checkpoints.push({ size: result.size, root: result.root, frontier });
  }

  it("roots after every batch", () => {
    for (const { size, root } of checkpoints) expect(hex(root), `size ${size}`).toBe(hex(referenceRoot(leaves.slice(0, size))));
  });

  it("rootAt and frontierFromStore rebuild any earlier tree from stored nodes", async () => {
    const sizes = [1, 2, 3, 1023, 1024, 1025, total, ...Array.from({ length: 20 }, () => randomInt(random, 1, total))];
    for (const size of sizes) {
      expect(hex(await rootAt(size, store)), `size ${size}`).toBe(hex(referenceRoot(leaves.slice(0, size))));
    }
    for (const cp of checkpoints.slice(-5)) {
      const rebuilt = await frontierFromStore(cp.size, store);
      expect(rebuilt.hashes.map(hex)).toEqual(cp.frontier.hashes.map(hex));
    }
  });

  it("inclusion proofs, reading O(log n) nodes in one batch", async () => {
    for (let i = 0; i < 25; i++) {
      const size = i < 4 ? [1, 2, total, 4096][i]! : randomInt(random, 1, total);
      const index = randomInt(random, 0, size - 1);
      const prefix = leaves.slice(0, size);
      const before = { reads: store.nodesRead, batches: store.batches };
      const proof = await inclusionProof(index, size, store);
      expect(store.batches - before.batches).toBe(size === 1 ? 0 : 1);
      expect(store.nodesRead - before.reads).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(size)) + 1);
      expect(proof.map(hex), `index ${index} size ${size}`).toEqual(referenceInclusion(index, prefix).map(hex));
      expect(verifyInclusion(leafHashes[index]!, index, size, proof, referenceRoot(prefix))).toEqual({ ok: true });
    }
  });

  it("consistency proofs", async () => {
    for (let i = 0; i < 25; i++) {
      const n = randomInt(random, 1, total);
      const m = i % 10 === 0 ? n : randomInt(random, 0, n);
      const proof = await consistencyProof(m, n, store);
      const newLeaves = leaves.slice(0, n);
      expect(proof.map(hex), `m ${m} n ${n}`).toEqual(referenceConsistency(m, newLeaves).map(hex));
      expect(verifyConsistency(m, n, proof, referenceRoot(leaves.slice(0, m)), referenceRoot(newLeaves))).toEqual({ ok: true });
    }
  });

  it("every batch boundary is consistent with the final tree", async () => {
    const last = checkpoints.at(-1)!;
    for (const cp of checkpoints) {
      const proof = await consistencyProof(cp.size, last.size, store);
      expect(verifyConsistency(cp.size, last.size, proof, cp.root, last.root), `from ${cp.size}`).toEqual({ ok: true });
    }
  });
});
