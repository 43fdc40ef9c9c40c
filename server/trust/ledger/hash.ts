import { sha256 } from "../portable/crypto";

/**
 * RFC 6962 / RFC 9162 §2.1.1 hashing. The 0x00 / 0x01 domain-separation
 * prefixes stop a leaf from being passed off as an interior node (second
 * preimage attack on the tree). Portable (no node: imports): the browser's
 * audit explorer verifies with this same code.
 */

export const HASH_SIZE = 32;

const LEAF_PREFIX = 0x00;
const NODE_PREFIX = 0x01;

/** MTH({}) — the root of the empty tree is the hash of the empty string. */
export const EMPTY_ROOT: Uint8Array = sha256(new Uint8Array(0));

// Inputs are assembled in reusable scratch buffers: the verifier hashes two
// million times per million entries, and a fresh ArrayBuffer per hash (an
// off-heap allocation each) costs more than the hashing of a small entry.
// sha256 is synchronous and keeps nothing, so reuse is safe.
let scratch = new Uint8Array(8192);
const pair = new Uint8Array(1 + 2 * HASH_SIZE);

export function hashLeaf(entry: Uint8Array): Uint8Array {
  if (scratch.length < entry.length + 1) scratch = new Uint8Array(Math.max(entry.length + 1, scratch.length * 2));
  scratch[0] = LEAF_PREFIX;
  scratch.set(entry, 1);
  return sha256(scratch.subarray(0, entry.length + 1));
}

export function hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
  const input = left.length === HASH_SIZE && right.length === HASH_SIZE ? pair : new Uint8Array(1 + left.length + right.length);
  input[0] = NODE_PREFIX;
  input.set(left, 1);
  input.set(right, 1 + left.length);
  return sha256(input);
}

export function equalHashes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function isHash(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.length === HASH_SIZE;
}
