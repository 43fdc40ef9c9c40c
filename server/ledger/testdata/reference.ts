import { createHash } from "node:crypto";

/**
 * A deliberately slow, literal transcription of RFC 9162 §2.1.1, §2.1.3.1
 * and §2.1.4.1 — recursive, recomputing every subtree from the leaves. It is
 * the oracle the fast node-store code is tested against, so it shares no code
 * with it (not even the hash helpers).
 */

function sha256(...parts: Uint8Array[]): Uint8Array {
  const h = createHash("sha256");
  for (const part of parts) h.update(part);
  return h.digest();
}

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

export function referenceLeafHash(data: Uint8Array): Uint8Array {
  return sha256(Uint8Array.of(0), data);
}

/** MTH(D[n]) over raw leaf data. */
export function referenceRoot(leaves: readonly Uint8Array[]): Uint8Array {
  const n = leaves.length;
  if (n === 0) return sha256();
  if (n === 1) return referenceLeafHash(leaves[0] as Uint8Array);
  const k = largestPowerOfTwoBelow(n);
  return sha256(Uint8Array.of(1), referenceRoot(leaves.slice(0, k)), referenceRoot(leaves.slice(k)));
}

/** PATH(m, D[n]). */
export function referenceInclusion(m: number, leaves: readonly Uint8Array[]): Uint8Array[] {
  const n = leaves.length;
  if (n <= 1) return [];
  const k = largestPowerOfTwoBelow(n);
  if (m < k) return [...referenceInclusion(m, leaves.slice(0, k)), referenceRoot(leaves.slice(k))];
  return [...referenceInclusion(m - k, leaves.slice(k)), referenceRoot(leaves.slice(0, k))];
}

function subproof(m: number, leaves: readonly Uint8Array[], complete: boolean): Uint8Array[] {
  const n = leaves.length;
  if (m === n) return complete ? [] : [referenceRoot(leaves)];
  const k = largestPowerOfTwoBelow(n);
  if (m <= k) return [...subproof(m, leaves.slice(0, k), complete), referenceRoot(leaves.slice(k))];
  return [...subproof(m - k, leaves.slice(k), false), referenceRoot(leaves.slice(0, k))];
}

/** PROOF(m, D[n]); the RFC defines it for 0 < m < n, and we use [] for m = 0 and m = n. */
export function referenceConsistency(m: number, leaves: readonly Uint8Array[]): Uint8Array[] {
  if (m === 0 || m === leaves.length) return [];
  return subproof(m, leaves, true);
}

/** The leaf data used by the committed vectors: leaf i is the UTF-8 text "leasehold test leaf <i>". */
export function vectorLeaf(i: number): Uint8Array {
  return new TextEncoder().encode(`leasehold test leaf ${i}`);
}
