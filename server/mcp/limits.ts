/**
 * Per-token rate and concurrency limits, held in this process's memory.
 * They protect one hub process; with N replicas a token may get up to N
 * times the rate (documented in README.md). The refusal is what matters:
 * a clear 429 with Retry-After, never a queue that grows without bound.
 */

export interface RateLimiterOptions {
  ratePerMinute: number;
  /** Bucket size; default a quarter of a minute's allowance, at least 10. */
  burst?: number;
}

export type RateDecision = { ok: true } | { ok: false; retryAfterS: number };

export class TokenRateLimiter {
  readonly #perMs: number;
  readonly #burst: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(options: RateLimiterOptions) {
    this.#perMs = options.ratePerMinute / 60_000;
    this.#burst = options.burst ?? Math.max(10, Math.ceil(options.ratePerMinute / 4));
  }

  take(key: string, now: number): RateDecision {
    const bucket = this.#buckets.get(key) ?? { tokens: this.#burst, at: now };
    bucket.tokens = Math.min(this.#burst, bucket.tokens + (now - bucket.at) * this.#perMs);
    bucket.at = now;
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterS: Math.max(1, Math.ceil((1 - bucket.tokens) / this.#perMs / 1000)) };
  }

  /** Drops buckets that have refilled completely (they hold no information). */
  prune(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (bucket.tokens + (now - bucket.at) * this.#perMs >= this.#burst) this.#buckets.delete(key);
    }
  }

  get size(): number {
    return this.#buckets.size;
  }
}

/** Counts in-flight things (requests, streams) per token against a ceiling. */
export class ConcurrencyLimiter {
  readonly #max: number;
  readonly #counts = new Map<string, number>();

  constructor(max: number) {
    this.#max = max;
  }

  /** A release function, or null when the token is at its ceiling. The release is idempotent. */
  acquire(key: string): (() => void) | null {
    const current = this.#counts.get(key) ?? 0;
    if (current >= this.#max) return null;
    this.#counts.set(key, current + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.#counts.get(key) ?? 1) - 1;
      if (n <= 0) this.#counts.delete(key);
      else this.#counts.set(key, n);
    };
  }

  inFlight(key: string): number {
    return this.#counts.get(key) ?? 0;
  }
}
