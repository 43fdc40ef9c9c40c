/**
 * An in-process cache of fetched Client ID Metadata Documents, so an
 * authorization does not cost an outbound fetch each time and a client
 * cannot make the hub hammer a third party. It holds only what a refetch
 * would give again: nothing in it needs to survive a restart or be shared
 * with another hub process (each fetches for itself).
 */
import { LeaseholdError } from "../../errors";
import { DEFAULT_MAX_AGE_S, MAX_MAX_AGE_S, MIN_MAX_AGE_S } from "./fetch";
import { type MetadataResult } from "./metadata";

export const MAX_CACHE_ENTRIES = 500;
/** A failure is remembered briefly, so a broken or hostile URL is not refetched on every attempt, yet a fixed one recovers soon. */
export const FAILURE_TTL_S = 30;

interface Entry {
  result: MetadataResult;
  expiresAt: number;
}

/** Bounded in-process cache (LRU, ≤ 500 entries; TTL = the document's Cache-Control max-age clamped to [60 s, 24 h], default 300 s; failures cached 30 s). */
export class ClientMetadataCache {
  readonly #maxEntries: number;
  readonly #now: () => number;
  // A Map iterates in insertion order; re-inserting on every hit keeps the
  // least recently used entry first.
  readonly #entries = new Map<string, Entry>();
  // Concurrent requests for one id share one load rather than each fetching.
  readonly #loading = new Map<string, Promise<MetadataResult>>();

  constructor(options?: { maxEntries?: number; now?: () => number }) {
    const maxEntries = options?.maxEntries ?? MAX_CACHE_ENTRIES;
    if (!Number.isInteger(maxEntries) || maxEntries < 1 || maxEntries > MAX_CACHE_ENTRIES) {
      throw new LeaseholdError("INVALID_ARGUMENT", `ClientMetadataCache maxEntries must be an integer from 1 to ${MAX_CACHE_ENTRIES}`, { tier: "hub" });
    }
    this.#maxEntries = maxEntries;
    this.#now = options?.now ?? Date.now;
  }

  /** How many results are held (for tests and the health page). */
  get size(): number {
    return this.#entries.size;
  }

  get(clientId: string, load: () => Promise<MetadataResult>): Promise<MetadataResult> {
    const hit = this.#entries.get(clientId);
    if (hit !== undefined) {
      this.#entries.delete(clientId);
      if (hit.expiresAt > this.#now()) {
        this.#entries.set(clientId, hit);
        return Promise.resolve(hit.result);
      }
    }
    const pending = this.#loading.get(clientId);
    if (pending !== undefined) return pending;
    const loading = this.#load(clientId, load).finally(() => this.#loading.delete(clientId));
    this.#loading.set(clientId, loading);
    return loading;
  }

  async #load(clientId: string, load: () => Promise<MetadataResult>): Promise<MetadataResult> {
    let result: MetadataResult;
    try {
      result = await load();
    } catch (err) {
      // The fetcher never throws; a loader that does is a failure like any other (deny on doubt).
      result = { ok: false, reason: `loading ${clientId} failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    const ttlS = result.ok ? clampMaxAge(result.maxAgeS) : FAILURE_TTL_S;
    this.#entries.delete(clientId);
    this.#entries.set(clientId, { result, expiresAt: this.#now() + ttlS * 1000 });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#entries.delete(oldest.value);
    }
    return result;
  }
}

function clampMaxAge(maxAgeS: number): number {
  if (!Number.isFinite(maxAgeS)) return DEFAULT_MAX_AGE_S;
  return Math.min(MAX_MAX_AGE_S, Math.max(MIN_MAX_AGE_S, maxAgeS));
}
