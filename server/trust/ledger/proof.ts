import { EMPTY_ROOT, HASH_SIZE, equalHashes, hashChildren } from "./hash";
import { assertSize, foldRange, rangeKeys, readChecked, type NodeKey, type NodeReader } from "./tree";

/**
 * Inclusion and consistency proofs, RFC 9162 §2.1.3 and §2.1.4.
 *
 * Generation plans the proof as a list of leaf ranges (each one an MTH in
 * the RFC's recursive definition), turns each range into the perfect
 * subtrees the store holds, reads them all in one batch and folds them. Only
 * a range on the right edge of the tree can be non-perfect, so a proof costs
 * O(log n) node reads. Verification is the RFC's iterative algorithm,
 * followed to the letter.
 */

export type ProofCheck = { ok: true } | { ok: false; reason: string };

interface LeafRange {
  lo: number;
  hi: number;
}

/** Largest power of two strictly below n (n ≥ 2): the RFC's split point k. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** RFC 9162 PATH(m, D[0:n]) as ranges, in proof order (leaf's sibling first). */
export function inclusionRanges(index: number, size: number): LeafRange[] {
  assertSize(index, "leaf index");
  assertSize(size, "tree size");
  if (index >= size) throw new RangeError(`leaf index ${index} is outside a tree of size ${size}`);
  const topDown: LeafRange[] = [];
  let lo = 0;
  let hi = size;
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (index < lo + k) {
      topDown.push({ lo: lo + k, hi });
      hi = lo + k;
    } else {
      topDown.push({ lo, hi: lo + k });
      lo += k;
    }
  }
  return topDown.reverse();
}

/** RFC 9162 PROOF(m, D[n]) = SUBPROOF(m, D[0:n], true) as ranges, in proof order. */
export function consistencyRanges(oldSize: number, newSize: number): LeafRange[] {
  assertSize(oldSize, "old size");
  assertSize(newSize, "new size");
  if (oldSize > newSize) throw new RangeError(`old size ${oldSize} is larger than new size ${newSize}`);
  if (oldSize === 0 || oldSize === newSize) return [];
  const topDown: LeafRange[] = [];
  let lo = 0;
  let hi = newSize;
  let m = oldSize;
  let includeOldRoot = false;
  while (m !== hi - lo) {
    const k = splitPoint(hi - lo);
    if (m <= k) {
      topDown.push({ lo: lo + k, hi });
      hi = lo + k;
    } else {
      topDown.push({ lo, hi: lo + k });
      lo += k;
      m -= k;
      includeOldRoot = true;
    }
  }
  // SUBPROOF(m, D[m], false) = [MTH(D[m])]: the old tree's subtree is only
  // omitted when it is the whole old tree, which the verifier already has.
  if (includeOldRoot) topDown.push({ lo, hi });
  return topDown.reverse();
}

async function hashRanges(ranges: readonly LeafRange[], reader: NodeReader): Promise<Uint8Array[]> {
  const keys: NodeKey[] = [];
  const counts: number[] = [];
  for (const { lo, hi } of ranges) {
    const rangeNodes = rangeKeys(lo, hi);
    counts.push(rangeNodes.length);
    keys.push(...rangeNodes);
  }
  const hashes = await readChecked(reader, keys);
  const proof: Uint8Array[] = [];
  let offset = 0;
  for (const count of counts) {
    proof.push(foldRange(hashes.slice(offset, offset + count)));
    offset += count;
  }
  return proof;
}

/** Inclusion proof for leaf `index` in the tree of `size` leaves. */
export async function inclusionProof(index: number, size: number, reader: NodeReader): Promise<Uint8Array[]> {
  return hashRanges(inclusionRanges(index, size), reader);
}

/** Consistency proof from tree size `oldSize` to `newSize` (empty when oldSize is 0 or equal). */
export async function consistencyProof(oldSize: number, newSize: number, reader: NodeReader): Promise<Uint8Array[]> {
  return hashRanges(consistencyRanges(oldSize, newSize), reader);
}

function badSizes(...values: number[]): boolean {
  return values.some((v) => !Number.isSafeInteger(v) || v < 0);
}

function badHashes(hashes: readonly Uint8Array[]): boolean {
  return hashes.some((h) => !(h instanceof Uint8Array) || h.length !== HASH_SIZE);
}

/** RFC 9162 §2.1.3.2. */
export function verifyInclusion(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): ProofCheck {
  if (badSizes(index, size)) return { ok: false, reason: "leaf index and tree size must be non-negative safe integers" };
  if (badHashes([leafHash, root])) return { ok: false, reason: "leaf hash and root must be 32 bytes" };
  if (badHashes(proof)) return { ok: false, reason: "every proof element must be 32 bytes" };
  if (index >= size) return { ok: false, reason: `leaf index ${index} is not below tree size ${size}` };
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return { ok: false, reason: "proof has more elements than the tree has levels" };
    if (fn % 2 === 1 || fn === sn) {
      r = hashChildren(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = hashChildren(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return { ok: false, reason: "proof has too few elements for this tree size" };
  if (!equalHashes(r, root)) return { ok: false, reason: "proof does not lead to the root hash" };
  return { ok: true };
}

/**
 * RFC 9162 §2.1.4.2, with the edge cases the RFC leaves to the caller made
 * explicit: m = n needs an empty proof and equal roots; m = 0 needs an empty
 * proof and the old root must be the empty-tree hash (every tree extends the
 * empty one, but a non-empty "root" for size 0 is a lie worth catching).
 */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  proof: readonly Uint8Array[],
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
): ProofCheck {
  if (badSizes(oldSize, newSize)) return { ok: false, reason: "tree sizes must be non-negative safe integers" };
  if (badHashes([oldRoot, newRoot])) return { ok: false, reason: "roots must be 32 bytes" };
  if (badHashes(proof)) return { ok: false, reason: "every proof element must be 32 bytes" };
  if (oldSize > newSize) return { ok: false, reason: `old size ${oldSize} is larger than new size ${newSize}` };
  if (oldSize === newSize) {
    if (proof.length !== 0) return { ok: false, reason: "a proof between equal sizes must be empty" };
    return equalHashes(oldRoot, newRoot) ? { ok: true } : { ok: false, reason: "roots differ at the same tree size" };
  }
  if (oldSize === 0) {
    if (proof.length !== 0) return { ok: false, reason: "a proof from the empty tree must be empty" };
    return equalHashes(oldRoot, EMPTY_ROOT) ? { ok: true } : { ok: false, reason: "old root is not the empty-tree hash" };
  }
  if (proof.length === 0) return { ok: false, reason: "proof is empty" };
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : [...proof];
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0] as Uint8Array;
  let sr = fr;
  for (let i = 1; i < path.length; i++) {
    const c = path[i] as Uint8Array;
    if (sn === 0) return { ok: false, reason: "proof has more elements than needed" };
    if (fn % 2 === 1 || fn === sn) {
      fr = hashChildren(c, fr);
      sr = hashChildren(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = hashChildren(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return { ok: false, reason: "proof has too few elements" };
  if (!equalHashes(fr, oldRoot)) return { ok: false, reason: "proof does not reproduce the old root" };
  if (!equalHashes(sr, newRoot)) return { ok: false, reason: "proof does not reproduce the new root" };
  return { ok: true };
}

function isPowerOfTwo(n: number): boolean {
  let v = n;
  while (v > 1 && v % 2 === 0) v /= 2;
  return v === 1;
}
