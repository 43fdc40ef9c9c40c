/**
 * Enrolled hosts' public keys as KeyObjects, parsed once per PEM. Every
 * signed guest request and every evidence envelope is verified with its
 * host's key, and parsing the PEM each time cost about a millisecond of hub
 * CPU per call (measured by profiling). Keyed by the PEM text itself, so nothing
 * here can go stale: which PEM applies is still read from the host's row on
 * every request (a removed host is refused there), and a host enrolled
 * again with a new key has a new PEM. Bounded; the least recently used key
 * is dropped first. A PEM that does not parse throws, as before, and is not
 * kept.
 */
import { createPublicKey, type KeyObject } from "node:crypto";

const MAX_KEYS = 1024;
const keys = new Map<string, KeyObject>();

export function hostPublicKey(pem: string): KeyObject {
  const known = keys.get(pem);
  if (known !== undefined) {
    keys.delete(pem);
    keys.set(pem, known);
    return known;
  }
  const parsed = createPublicKey(pem);
  keys.set(pem, parsed);
  if (keys.size > MAX_KEYS) keys.delete(keys.keys().next().value as string);
  return parsed;
}
