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
 * Counts live in the database (server/limits/windows.ts: one atomic upsert
 * per failure), so every hub process on one database counts into the same
 * rows: three replicas allow the guesses one allows. The client address is
 * the one the hub's server resolved (bin/next-web.ts: the TCP peer, or the
 * forwarded address when the peer is a trusted proxy). Rows expire with
 * their window and the limit sweep deletes them, so flooding made-up names
 * or addresses costs the flooder requests and evicts nobody's count.
 */
import { randomUUID } from "node:crypto";
import type { Database } from "../db";
import { LeaseholdError } from "../errors";
import { isMarked, markNow, windowClear, windowFail, windowWaitSeconds } from "../limits/windows";

export const PAIR_FAILURES_ALLOWED = 5;
export const USER_FAILURES_ALLOWED = 20;
export const ADDRESS_UNKNOWN_NAMES_ALLOWED = 30;
export const SESSION_FAILURES_ALLOWED = 5;
export const WINDOW_MS = 15 * 60_000;
export const GOOD_ADDRESS_MS = 30 * 24 * 3600_000;

function rateLimited(what: string, seconds: number): LeaseholdError {
  return new LeaseholdError("RATE_LIMITED", `too many failed sign-ins; try again in ${seconds} s (${what})`, {
    tier: "hub",
    hint: "wait, sign in with a passkey, or ask an owner to set a new password with `leasehold admin password`",
  });
}

/**
 * `scope` prefixes every row key: the hub's one throttle uses "signin" in
 * every process, so replicas share it; another instance (a test's) counts
 * apart. `clock` dates the windows.
 */
export class SignInThrottle {
  constructor(
    private readonly clock: () => number = Date.now,
    private readonly scope: string = `signin-${randomUUID().slice(0, 8)}`,
  ) {}

  private key(kind: "pair" | "user" | "spray" | "session" | "good", ...parts: string[]): string {
    return [this.scope, kind, ...parts].join("\n");
  }

  private now(): Date {
    return new Date(this.clock());
  }

  /** Before anything is looked up: this (address, name) pair has used up its failures. */
  async pairRefusal(db: Database, name: string, client: string): Promise<LeaseholdError | undefined> {
    const seconds = await windowWaitSeconds(db, this.key("pair", client, name), PAIR_FAILURES_ALLOWED, this.now());
    return seconds === undefined ? undefined : rateLimited("for this name from this address", seconds);
  }

  /** The address has sprayed made-up names past its ceiling: the refusal its failures get. */
  async sprayRefusal(db: Database, client: string): Promise<LeaseholdError | undefined> {
    const seconds = await windowWaitSeconds(db, this.key("spray", client), ADDRESS_UNKNOWN_NAMES_ALLOWED, this.now());
    return seconds === undefined ? undefined : rateLimited("from this address", seconds);
  }

  /** Before an existing admin's password is checked: the admin's budget is spent and `client` is not an address the admin signed in from. */
  async userRefusal(db: Database, adminId: string, client: string): Promise<LeaseholdError | undefined> {
    const seconds = await windowWaitSeconds(db, this.key("user", adminId), USER_FAILURES_ALLOWED, this.now());
    if (seconds === undefined || (await isMarked(db, this.key("good", client, adminId), this.now()))) return undefined;
    return rateLimited("for this account", seconds);
  }

  /** A failed sign-in with a name that is not an admin. */
  async failUnknown(db: Database, name: string, client: string): Promise<void> {
    await windowFail(db, this.key("pair", client, name), WINDOW_MS, this.now());
    await windowFail(db, this.key("spray", client), WINDOW_MS, this.now());
  }

  /** A wrong password for an existing (possibly disabled) admin. */
  async failKnown(db: Database, name: string, client: string, adminId: string): Promise<void> {
    await windowFail(db, this.key("pair", client, name), WINDOW_MS, this.now());
    await windowFail(db, this.key("user", adminId), WINDOW_MS, this.now());
  }

  async succeed(db: Database, name: string, client: string, adminId: string): Promise<void> {
    await windowClear(db, this.key("pair", client, name));
    await markNow(db, this.key("good", client, adminId), GOOD_ADDRESS_MS, this.now());
  }

  /** Before a password check inside a session (re-authentication, password change). */
  async sessionRefusal(db: Database, sessionId: string): Promise<LeaseholdError | undefined> {
    const seconds = await windowWaitSeconds(db, this.key("session", sessionId), SESSION_FAILURES_ALLOWED, this.now());
    return seconds === undefined ? undefined : rateLimited("in this session", seconds);
  }

  /** A wrong password inside a session; true when the session has used up its failures (the caller ends it). */
  async failInSession(db: Database, adminId: string, sessionId: string): Promise<boolean> {
    await windowFail(db, this.key("user", adminId), WINDOW_MS, this.now());
    return (await windowFail(db, this.key("session", sessionId), WINDOW_MS, this.now())) >= SESSION_FAILURES_ALLOWED;
  }
}

/** The hub's throttle: the same rows in every process on one database. */
export const signInThrottle = new SignInThrottle(Date.now, "signin");
