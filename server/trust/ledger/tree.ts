import { EMPTY_ROOT, HASH_SIZE, hashChildren } from "./hash";

/**
 * Tree maths for a node store of perfect subtrees.
 *
 * The store holds only COMPLETE subtrees, addressed by (level, index): the
 * node at level L, index i covers leaves [i·2^L, (i+1)·2^L). A complete
 * subtree never changes once written, so the integrator can persist nodes
 * with plain inserts and never update a row; the root of any tree size, and
 * every proof, is composed from O(log n) of them. Sizes are JavaScript
 * numbers and stay exact up to Number.MAX_SAFE_INTEGER (2^53 − 1), so
 * arithmetic here avoids 32-bit bitwise operators.
 */

export interface NodeKey {
  level: number;
  index: number;
}

export interface StoredNode extends NodeKey {
  hash: Uint8Array;
}

/**
 * The compact range [0, size): roots of the perfect subtrees on the tree's
 * right edge, largest first — one per set bit of `size`. This is all the
 * integrator needs in memory to extend the tree.
 */
export interface Frontier {
  size: number;
  hashes: readonly Uint8Array[];
}

export interface ExtendResult {
  frontier: Frontier;
  /** Every perfect subtree completed by this batch, leaves (level 0) included, in creation order. */
  newNodes: StoredNode[];
  size: number;
  root: Uint8Array;
}

/** Batched, read-only access to stored perfect-subtree hashes. */
export interface NodeReader {
  /**
   * Returns the hashes for `keys`, in the same order. Must reject (not return
   * a placeholder) if any node is missing: a proof built on a guessed hash is
   * a wrong proof.
   */
  getNodes(keys: readonly NodeKey[]): Promise<readonly Uint8Array[]>;
}

export const EMPTY_FRONTIER: Frontier = Object.freeze({ size: 0, hashes: Object.freeze([]) as readonly Uint8Array[] });

const pow2 = (level: number): number => 2 ** level;

function bitSet(value: number, level: number): boolean {
  return Math.floor(value / pow2(level)) % 2 === 1;
}

/** Levels of the set bits of `size`, highest first — the shape of its compact range. */
export function frontierLevels(size: number): number[] {
  assertSize(size, "size");
  const levels: number[] = [];
  for (let level = 0; pow2(level) <= size; level++) if (bitSet(size, level)) levels.push(level);
  return levels.reverse();
}

export function assertSize(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a non-negative safe integer, got ${value}`);
}

function assertFrontier(frontier: Frontier): number[] {
  const levels = frontierLevels(frontier.size);
  if (levels.length !== frontier.hashes.length) {
    throw new RangeError(`frontier for size ${frontier.size} needs ${levels.length} hashes, got ${frontier.hashes.length}`);
  }
  for (const hash of frontier.hashes) assertHash(hash);
  return levels;
}

function assertHash(hash: Uint8Array): void {
  if (!(hash instanceof Uint8Array) || hash.length !== HASH_SIZE) throw new RangeError("hash must be 32 bytes");
}

/**
 * A mutable compact range [0, size) for streaming use (the integrator's batch
 * loop, the offline verifier): O(1) amortised hashing per leaf, O(log n)
 * memory. `onNode` sees every perfect subtree as it completes.
 */
export class CompactRange {
  private readonly levels: number[];
  private readonly hashes: Uint8Array[];
  private count: number;

  constructor(frontier: Frontier = EMPTY_FRONTIER) {
    this.levels = assertFrontier(frontier);
    this.hashes = [...frontier.hashes];
    this.count = frontier.size;
  }

  get size(): number {
    return this.count;
  }

  append(leafHash: Uint8Array, onNode?: (node: StoredNode) => void): void {
    assertHash(leafHash);
    if (this.count >= Number.MAX_SAFE_INTEGER) throw new RangeError("tree size would exceed Number.MAX_SAFE_INTEGER");
    let hash = leafHash;
    let level = 0;
    let index = this.count;
    onNode?.({ level, index, hash });
    // Adding a leaf is binary increment: every trailing perfect subtree of the
    // same level merges with the new one, like a carry.
    while (this.levels.length > 0 && this.levels[this.levels.length - 1] === level) {
      this.levels.pop();
      const left = this.hashes.pop() as Uint8Array;
      hash = hashChildren(left, hash);
      level += 1;
      index = Math.floor(index / 2);
      onNode?.({ level, index, hash });
    }
    this.levels.push(level);
    this.hashes.push(hash);
    this.count += 1;
  }

  frontier(): Frontier {
    return { size: this.count, hashes: [...this.hashes] };
  }

  root(): Uint8Array {
    return foldRight(this.hashes) ?? EMPTY_ROOT;
  }
}

/**
 * Appends a batch of leaf hashes in O(batch + log n) hashing. The caller
 * persists `newNodes` and `frontier` atomically with the leaf indices, so a
 * crash leaves either the old tree or the new one, never a mix.
 */
export function extendTree(frontier: Frontier, leafHashes: Iterable<Uint8Array>): ExtendResult {
  const range = new CompactRange(frontier);
  const newNodes: StoredNode[] = [];
  const collect = (node: StoredNode): void => {
    newNodes.push(node);
  };
  for (const leaf of leafHashes) range.append(leaf, collect);
  return { frontier: range.frontier(), newNodes, size: range.size, root: range.root() };
}

/** MTH of the tree the frontier describes: fold the right-edge subtrees from the smallest up. */
export function rootFromFrontier(frontier: Frontier): Uint8Array {
  assertFrontier(frontier);
  return foldRight(frontier.hashes) ?? EMPTY_ROOT;
}

function foldRight(hashes: readonly Uint8Array[]): Uint8Array | undefined {
  let root: Uint8Array | undefined;
  for (let i = hashes.length - 1; i >= 0; i--) {
    const hash = hashes[i] as Uint8Array;
    root = root === undefined ? hash : hashChildren(hash, root);
  }
  return root;
}

/** The (level, index) keys of the frontier for `size` — what to read to resume integrating. */
export function frontierKeys(size: number): NodeKey[] {
  return rangeKeys(0, size);
}

/**
 * Perfect subtrees whose fold is MTH(D[lo:hi]) in RFC 6962's shape. Proof
 * ranges always start on a boundary aligned to the largest power of two not
 * above their width; an unaligned range here is a planning bug, not input.
 */
export function rangeKeys(lo: number, hi: number): NodeKey[] {
  assertSize(lo, "range start");
  assertSize(hi, "range end");
  if (hi <= lo) throw new RangeError(`empty or inverted range [${lo}, ${hi})`);
  const keys: NodeKey[] = [];
  let start = lo;
  for (const level of frontierLevels(hi - lo)) {
    const width = pow2(level);
    if (start % width !== 0) throw new RangeError(`range [${lo}, ${hi}) is not aligned to stored subtrees`);
    keys.push({ level, index: start / width });
    start += width;
  }
  return keys;
}

/** Folds the hashes read for rangeKeys(lo, hi) into MTH(D[lo:hi]). */
export function foldRange(hashes: readonly Uint8Array[]): Uint8Array {
  const root = foldRight(hashes);
  if (root === undefined) throw new RangeError("cannot fold an empty range");
  return root;
}

/** Reads the frontier for `size` from the store (e.g. when an integrator starts). */
export async function frontierFromStore(size: number, reader: NodeReader): Promise<Frontier> {
  if (size === 0) return EMPTY_FRONTIER;
  const keys = frontierKeys(size);
  const hashes = await readChecked(reader, keys);
  return { size, hashes };
}

/** MTH of the tree at `size`, from at most log2(size)+1 stored nodes. */
export async function rootAt(size: number, reader: NodeReader): Promise<Uint8Array> {
  assertSize(size, "size");
  if (size === 0) return EMPTY_ROOT;
  return foldRange(await readChecked(reader, frontierKeys(size)));
}

export async function readChecked(reader: NodeReader, keys: readonly NodeKey[]): Promise<Uint8Array[]> {
  if (keys.length === 0) return [];
  const hashes = await reader.getNodes(keys);
  if (hashes.length !== keys.length) throw new Error(`node reader returned ${hashes.length} hashes for ${keys.length} keys`);
  return hashes.map((hash, i) => {
    if (!(hash instanceof Uint8Array) || hash.length !== HASH_SIZE) {
      const key = keys[i] as NodeKey;
      throw new Error(`node reader returned an invalid hash for level ${key.level} index ${key.index}`);
    }
    return hash;
  });
}

/**
 * An in-memory node store, for tests, benchmarks and the offline verifier.
 * Counts reads so tests can hold proof generation to O(log n) node reads.
 */
export class MemoryNodeStore implements NodeReader {
  private readonly levels: Uint8Array[][] = [];
  nodesRead = 0;
  batches = 0;

  put(nodes: Iterable<StoredNode>): void {
    for (const { level, index, hash } of nodes) {
      let row = this.levels[level];
      if (row === undefined) {
        row = [];
        this.levels[level] = row;
      }
      const existing = row[index];
      // Perfect subtrees are immutable; a different hash for the same key means a forked tree.
      if (existing !== undefined && !sameBytes(existing, hash)) {
        throw new Error(`node level ${level} index ${index} already stored with a different hash`);
      }
      row[index] = hash;
    }
  }

  async getNodes(keys: readonly NodeKey[]): Promise<readonly Uint8Array[]> {
    this.batches += 1;
    this.nodesRead += keys.length;
    return keys.map(({ level, index }) => {
      const hash = this.levels[level]?.[index];
      if (hash === undefined) throw new Error(`node level ${level} index ${index} is not stored`);
      return hash;
    });
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
