/**
 * Password throttling that slows guessing without letting anyone lock a real
 * admin out. Counts of failed password checks within WINDOW_MS:
 *
 * 1. per (client address, name as typed) — PAIR_FAILURES_ALLOWED. Past it,
 *    that pair is refused before the password is checked. Applies alike to
 *    names that exist and names that do not, so it tells nobody which exist.
 * 2. per existing admin, from every address — USER_FAILURES_ALLOWED (higher:
 *    it exists to stop guessing spread over many addresses). Only a name that
 *    is an admin counts here: made-up names, other spellings (`Owner` is not
 *    `owner`) never touch a real admin's budget. Past it, the admin's
 *    password is refused before the check — except from an address the admin
 *    signed in from within GOOD_ADDRESS_MS with the right password, so
 *    someone who knows the name cannot lock the owner out of the places the
 *    owner signs in from. Only the pair budget applies there.
 * 3. per client address, failures with names that are not admins —
 *    ADDRESS_UNKNOWN_NAMES_ALLOWED (spraying). Past it, that address's
 *    made-up names are refused without hashing anything, after the time a
 *    password check takes (`signIn` waits, so the refusal's timing does not
 *    say the name is unknown), while an admin's name from that address is
 *    still checked: the owner's correct password signs in; a wrong one gets
 *    the same RATE_LIMITED answer the made-up names get.
 *
 * Re-authentication and password changes inside a session: their failures
 * count on the admin's budget (2) too, so they are no way around it, and per
 * session SESSION_FAILURES_ALLOWED; a session that uses those up is ended by
 * the caller (a stolen cookie buys a few guesses, then nothing). They are not
 * refused for the admin's spent budget: the session already proves a sign-in,
 * and the owner must be able to re-authenticate while someone guesses.
 *
 * A passkey sign-in never consults this throttle: a passkey cannot be
 * guessed, so it is the way in that is always open.
 *
 * In memory, per hub process: a restart forgets counts, which only helps an
 * attacker who can also restart the hub. Bounded: every table keeps at most
 * MAX_KEYS keys, the least recently touched dropped first; the per-admin
 * table only ever holds existing admins, so flooding made-up names or
 * addresses cannot evict a real admin's count.
 */
import { LeaseholdError } from "../errors";

export const PAIR_FAILURES_ALLOWED = 5;
export const USER_FAILURES_ALLOWED = 20;
export const ADDRESS_UNKNOWN_NAMES_ALLOWED = 30;
export const SESSION_FAILURES_ALLOWED = 5;
export const WINDOW_MS = 15 * 60_000;
export const GOOD_ADDRESS_MS = 30 * 24 * 3600_000;
const MAX_KEYS = 10_000;

interface Count {
  failures: number;
  windowStart: number;
}

/** Failure counts per key within WINDOW_MS, least recently touched evicted beyond MAX_KEYS. */
class WindowCounts {
  private readonly counts = new Map<string, Count>();

  constructor(
    private readonly allowed: number,
    private readonly clock: () => number,
  ) {}

  private live(key: string, now: number): Count | undefined {
    const count = this.counts.get(key);
    if (count !== undefined && now - count.windowStart >= WINDOW_MS) {
      this.counts.delete(key);
      return undefined;
    }
    return count;
  }

  /** Seconds until `key` may try again, or undefined when it has failures left. */
  waitSeconds(key: string): number | undefined {
    const now = this.clock();
    const count = this.live(key, now);
    if (count === undefined || count.failures < this.allowed) return undefined;
    return Math.max(1, Math.ceil((count.windowStart + WINDOW_MS - now) / 1000));
  }

  /** Counts one failure; true when that used up the key's allowance. */
  fail(key: string): boolean {
    const now = this.clock();
    const count = this.live(key, now) ?? { failures: 0, windowStart: now };
    count.failures += 1;
    touch(this.counts, key, count);
    return count.failures >= this.allowed;
  }

  clear(key: string): void {
    this.counts.delete(key);
  }
}

function touch<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > MAX_KEYS) {
    const oldest = map.keys().next();
    if (oldest.done === true) break;
    map.delete(oldest.value);
  }
}

function rateLimited(what: string, seconds: number): LeaseholdError {
  return new LeaseholdError("RATE_LIMITED", `too many failed sign-ins; try again in ${seconds} s (${what})`, {
    tier: "hub",
    hint: "wait, sign in with a passkey, or ask an owner to set a new password with `leasehold admin password`",
  });
}

const pairKey = (client: string, name: string) => `${client}\n${name}`;
const goodKey = (client: string, adminId: string) => `${client}\n${adminId}`;

export class SignInThrottle {
  private readonly pairs: WindowCounts;
  private readonly users: WindowCounts;
  private readonly sprayers: WindowCounts;
  private readonly sessions: WindowCounts;
  /** (address, admin id) → when the admin last signed in from there. */
  private readonly goodAddresses = new Map<string, number>();

  constructor(private readonly clock: () => number = Date.now) {
    this.pairs = new WindowCounts(PAIR_FAILURES_ALLOWED, clock);
    this.users = new WindowCounts(USER_FAILURES_ALLOWED, clock);
    this.sprayers = new WindowCounts(ADDRESS_UNKNOWN_NAMES_ALLOWED, clock);
    this.sessions = new WindowCounts(SESSION_FAILURES_ALLOWED, clock);
  }

  /** Before anything is looked up: this (address, name) pair has used up its failures. */
  pairRefusal(name: string, client: string): LeaseholdError | undefined {
    const seconds = this.pairs.waitSeconds(pairKey(client, name));
    return seconds === undefined ? undefined : rateLimited("for this name from this address", seconds);
  }

  /** The address has sprayed made-up names past its ceiling: the refusal its failures get. */
  sprayRefusal(client: string): LeaseholdError | undefined {
    const seconds = this.sprayers.waitSeconds(client);
    return seconds === undefined ? undefined : rateLimited("from this address", seconds);
  }

  /** Before an existing admin's password is checked: the admin's budget is spent and `client` is not an address the admin signed in from. */
  userRefusal(adminId: string, client: string): LeaseholdError | undefined {
    const seconds = this.users.waitSeconds(adminId);
    if (seconds === undefined || this.isGoodAddress(adminId, client)) return undefined;
    return rateLimited("for this account", seconds);
  }

  /** A failed sign-in with a name that is not an admin. */
  failUnknown(name: string, client: string): void {
    this.pairs.fail(pairKey(client, name));
    this.sprayers.fail(client);
  }

  /** A wrong password for an existing (possibly disabled) admin. */
  failKnown(name: string, client: string, adminId: string): void {
    this.pairs.fail(pairKey(client, name));
    this.users.fail(adminId);
  }

  succeed(name: string, client: string, adminId: string): void {
    this.pairs.clear(pairKey(client, name));
    touch(this.goodAddresses, goodKey(client, adminId), this.clock());
  }

  private isGoodAddress(adminId: string, client: string): boolean {
    const at = this.goodAddresses.get(goodKey(client, adminId));
    return at !== undefined && this.clock() - at < GOOD_ADDRESS_MS;
  }

  /** Before a password check inside a session (re-authentication, password change). */
  sessionRefusal(sessionId: string): LeaseholdError | undefined {
    const seconds = this.sessions.waitSeconds(sessionId);
    return seconds === undefined ? undefined : rateLimited("in this session", seconds);
  }

  /** A wrong password inside a session; true when the session has used up its failures (the caller ends it). */
  failInSession(adminId: string, sessionId: string): boolean {
    this.users.fail(adminId);
    return this.sessions.fail(sessionId);
  }
}

/** The hub process's throttle (one per process, like the rest of its in-memory state). */
export const signInThrottle = new SignInThrottle();
