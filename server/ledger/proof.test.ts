import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { hashLeaf } from "../trust/ledger/hash";
import { consistencyProof, inclusionProof, verifyConsistency, verifyInclusion } from "../trust/ledger/proof";
import { serializeVectors } from "./testdata/generate-vectors-format";
import { vectorLeaf } from "./testdata/reference";
import { buildConsistencyVectors, buildInclusionVectors, type ConsistencyVector, type InclusionVector, type VectorFile } from "./testdata/vectors";
import { EMPTY_FRONTIER, MemoryNodeStore, extendTree } from "../trust/ledger/tree";

const testdata = (name: string): string => fileURLToPath(new URL(`./testdata/${name}`, import.meta.url));
const load = <T>(name: string): VectorFile<T> => JSON.parse(readFileSync(testdata(name), "utf8")) as VectorFile<T>;
const bytes = (b64: string): Uint8Array => Uint8Array.from(Buffer.from(b64, "base64"));
const b64 = (value: Uint8Array): string => Buffer.from(value).toString("base64");

const inclusion = load<InclusionVector>("inclusion.json");
const consistency = load<ConsistencyVector>("consistency.json");

function storeOf(size: number): MemoryNodeStore {
  const store = new MemoryNodeStore();
  const leaves = Array.from({ length: size }, (_, i) => hashLeaf(vectorLeaf(i)));
  store.put(extendTree(EMPTY_FRONTIER, leaves).newNodes);
  return store;
}

describe("committed proof vectors", () => {
  it("match what the reference implementation generates today", () => {
    expect(readFileSync(testdata("inclusion.json"), "utf8")).toBe(serializeVectors(buildInclusionVectors()));
    expect(readFileSync(testdata("consistency.json"), "utf8")).toBe(serializeVectors(buildConsistencyVectors()));
  });

  it("cover mutated proofs that must be rejected", () => {
    expect(inclusion.vectors.filter((v) => !v.valid).length).toBeGreaterThan(500);
    expect(consistency.vectors.filter((v) => !v.valid).length).toBeGreaterThan(500);
  });
});

describe("inclusion proofs (RFC 9162 §2.1.3)", () => {
  const store = storeOf(1000);

  it(`verify accepts exactly the valid vectors (${inclusion.vectors.length} vectors)`, () => {
    const wrong = inclusion.vectors.filter((v) => {
      const result = verifyInclusion(bytes(v.leaf_hash), v.leaf_index, v.tree_size, v.proof.map(bytes), bytes(v.root));
      return result.ok !== v.valid;
    });
    expect(wrong).toEqual([]);
  });

  it("are generated from the node store exactly as the reference does", async () => {
    for (const v of inclusion.vectors.filter((x) => x.valid)) {
      const proof = await inclusionProof(v.leaf_index, v.tree_size, store);
      expect(proof.map(b64)).toEqual(v.proof);
    }
  });

  it("reject malformed input without throwing", () => {
    const h = hashLeaf(vectorLeaf(0));
    expect(verifyInclusion(h, 0, 1, [], h.subarray(1)).ok).toBe(false);
    expect(verifyInclusion(h, -1, 1, [], h).ok).toBe(false);
    expect(verifyInclusion(h, 0, 2 ** 60, [], h).ok).toBe(false);
    expect(verifyInclusion(h, 0, 2, [new Uint8Array(31)], h).ok).toBe(false);
  });
});

describe("consistency proofs (RFC 9162 §2.1.4)", () => {
  const store = storeOf(1000);

  it(`verify accepts exactly the valid vectors (${consistency.vectors.length} vectors)`, () => {
    const wrong = consistency.vectors.filter((v) => {
      const result = verifyConsistency(v.old_size, v.new_size, v.proof.map(bytes), bytes(v.old_root), bytes(v.new_root));
      return result.ok !== v.valid;
    });
    expect(wrong).toEqual([]);
  });

  it("are generated from the node store exactly as the reference does", async () => {
    for (const v of consistency.vectors.filter((x) => x.valid)) {
      const proof = await consistencyProof(v.old_size, v.new_size, store);
      expect(proof.map(b64)).toEqual(v.proof);
    }
  });
});
