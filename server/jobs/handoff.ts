/**
 * A stored completion handed from the intake that committed it to a caller
 * waiting for it in the same process, so the caller does not read back the
 * action row and the output chunks that were written a moment ago (two reads
 * per call). Only what committed is offered, only while someone in
 * this process waits on the action, and only small output; anything else —
 * another replica's caller, a caller that stopped waiting, large output —
 * reads the database as before. Kept on globalThis because the intake route
 * and the MCP route are separate bundles with their own module copies.
 */
import type { StoredCompletion } from "./intake";
import { actionTopic, hasWaiter } from "./wake";

export interface HandedCompletion {
  completion: StoredCompletion;
  /** The output exactly as the intake verified it against the envelope's digests. */
  output: Record<string, Buffer>;
}

/** Larger output is left to the database read (the waiter copies at most 1 MiB per stream anyway). */
export const HANDOFF_MAX_OUTPUT_BYTES = 256 * 1024;
const MAX_ENTRIES = 256;
const MAX_AGE_MS = 30_000;

interface Entry extends HandedCompletion {
  at: number;
}

const KEY = Symbol.for("leasehold.hosts.completion-handoff");

function entries(): Map<string, Entry> {
  const g = globalThis as unknown as Record<symbol, Map<string, Entry> | undefined>;
  return (g[KEY] ??= new Map());
}

/** Offers a committed completion to this process's waiter on `actionId`, if there is one. */
export function offerCompletion(actionId: string, handed: HandedCompletion): void {
  const bytes = Object.values(handed.output).reduce((n, b) => n + b.length, 0);
  if (bytes > HANDOFF_MAX_OUTPUT_BYTES || !hasWaiter(actionTopic(actionId))) return;
  const map = entries();
  const now = Date.now();
  for (const [id, entry] of map) {
    if (map.size < MAX_ENTRIES && now - entry.at < MAX_AGE_MS) break;
    map.delete(id);
  }
  map.set(actionId, { ...handed, at: now });
}

/** The completion handed over for `actionId` (once), or undefined: then read the database. */
export function takeCompletion(actionId: string): HandedCompletion | undefined {
  const map = entries();
  const entry = map.get(actionId);
  if (entry === undefined) return undefined;
  map.delete(actionId);
  if (Date.now() - entry.at >= MAX_AGE_MS) return undefined;
  return { completion: entry.completion, output: entry.output };
}
