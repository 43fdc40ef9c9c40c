/**
 * Sign-in throttling: after FAILURES_ALLOWED failed sign-ins for one user
 * name, or CLIENT_FAILURES_ALLOWED from one client address (higher: several
 * people may share an address behind NAT), within WINDOW_MS, further attempts are
 * refused with RATE_LIMITED (naming when to retry) until the window has
 * passed — the password is not even checked, so guessing stays slow however
 * fast requests arrive. A success clears the name's count.
 *
 * In memory, per hub process: a restart forgets counts, which only helps an
 * attacker who can also restart the hub. Bounded: at most MAX_KEYS keys, the
 * oldest dropped first.
 */
import { LeaseholdError } from "../errors";

export const FAILURES_ALLOWED = 5;
export const CLIENT_FAILURES_ALLOWED = 30;
export const WINDOW_MS = 15 * 60_000;
const MAX_KEYS = 10_000;

interface Count {
  failures: number;
  windowStart: number;
}

export class SignInThrottle {
  private readonly counts = new Map<string, Count>();

  constructor(private readonly clock: () => number = Date.now) {}

  private keys(username: string, client: string): string[] {
    return [`user:${username.toLowerCase()}`, `client:${client}`];
  }

  private live(key: string, now: number): Count | undefined {
    const count = this.counts.get(key);
    if (count !== undefined && now - count.windowStart >= WINDOW_MS) {
      this.counts.delete(key);
      return undefined;
    }
    return count;
  }

  /** Throws RATE_LIMITED when either the name or the client has used up its failures. */
  check(username: string, client: string): void {
    const now = this.clock();
    for (const key of this.keys(username, client)) {
      const count = this.live(key, now);
      const allowed = key.startsWith("user:") ? FAILURES_ALLOWED : CLIENT_FAILURES_ALLOWED;
      if (count !== undefined && count.failures >= allowed) {
        const seconds = Math.ceil((count.windowStart + WINDOW_MS - now) / 1000);
        throw new LeaseholdError("RATE_LIMITED", `too many failed sign-ins; try again in ${seconds} s`, {
          tier: "hub",
          hint: "wait, or ask an owner to set a new password with `leasehold admin password`",
        });
      }
    }
  }

  fail(username: string, client: string): void {
    const now = this.clock();
    for (const key of this.keys(username, client)) {
      const count = this.live(key, now) ?? { failures: 0, windowStart: now };
      count.failures += 1;
      this.counts.delete(key);
      this.counts.set(key, count);
    }
    while (this.counts.size > MAX_KEYS) {
      const oldest = this.counts.keys().next().value;
      if (oldest === undefined) break;
      this.counts.delete(oldest);
    }
  }

  succeed(username: string): void {
    this.counts.delete(`user:${username.toLowerCase()}`);
  }
}

/** The hub process's throttle (one per process, like the rest of its in-memory state). */
export const signInThrottle = new SignInThrottle();
