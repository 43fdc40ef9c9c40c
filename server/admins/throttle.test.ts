/**
 * The password throttle protects without locking out: a sprayer and a
 * guesser are slowed, the owner still signs in (password from where they sign
 * in, passkey from anywhere), and guesses inside a session end the session.
 */
import { expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import { SoftAuthenticator } from "../passkeys/test-authenticator";
import type { HubRuntime } from "../hub/runtime";
import { appRouter } from "../trpc/root";
import { refusal, sessionHeaders, testRuntime } from "../trpc/routers/test-callers";
import type { Database } from "../db";
import { adminUsers } from "../db/schema";
import { createAdmin, signIn } from "./admins";
import { hashPassword } from "./passwords";
import { createAdminSession, validateSessionToken } from "./sessions";
import {
  ADDRESS_UNKNOWN_NAMES_ALLOWED,
  PAIR_FAILURES_ALLOWED,
  SESSION_FAILURES_ALLOWED,
  SignInThrottle,
  USER_FAILURES_ALLOWED,
  WINDOW_MS,
} from "./throttle";

const unique = (prefix: string) => `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

/** An owner past the first sign-in (no one-time password to replace), with a known password. */
async function settledOwner(d: Database): Promise<{ admin: { id: string; username: string }; password: string }> {
  const password = "the owner's own passphrase";
  const [row] = await d.insert(adminUsers).values({ username: unique("owner"), passwordHash: await hashPassword(password), role: "owner", mustChangePassword: false }).returning();
  if (row === undefined) throw new Error("no admin row");
  return { admin: { id: row.id, username: row.username }, password };
}

describeEachDatabase("password throttle", (db) => {
  it(`a sprayer of made-up names is slowed after ${ADDRESS_UNKNOWN_NAMES_ALLOWED} failures, and the owner's correct password from the same address still signs in`, async () => {
    const d = db().handle.db;
    const owner = await createAdmin(d, unique("owner"));
    const other = await createAdmin(d, unique("other"));
    let now = 1_000_000;
    const throttle = new SignInThrottle(() => now);
    const address = "203.0.113.9";
    for (let i = 0; i < ADDRESS_UNKNOWN_NAMES_ALLOWED; i++) {
      await expect(signIn(d, { username: `made-up-${i}`, password: "Winter2026!", client: address }, throttle)).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    }
    // The owner, behind the same address, signs in.
    await expect(signIn(d, { username: owner.admin.username, password: owner.password, client: address }, throttle)).resolves.toMatchObject({ admin: { id: owner.admin.id } });
    // The sprayer is slowed: further made-up names are refused, and a real admin's wrong password gets the very same answer.
    const madeUp = await refusal(signIn(d, { username: "made-up-next", password: "Winter2026!", client: address }, throttle));
    const realWrong = await refusal(signIn(d, { username: other.admin.username, password: "Winter2026!", client: address }, throttle));
    expect(madeUp).toMatchObject({ code: "RATE_LIMITED", message: expect.stringMatching(/too many failed sign-ins; try again in \d+ s \(from this address\)/) });
    expect(realWrong).toEqual(madeUp);
    // Another address is not slowed by the sprayer.
    await expect(signIn(d, { username: "made-up-elsewhere", password: "x", client: "198.51.100.1" }, throttle)).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    now += WINDOW_MS;
    await expect(signIn(d, { username: "made-up-later", password: "x", client: address }, throttle)).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
  });

  it("made-up names and other spellings of a real name never spend the real admin's budget", async () => {
    const d = db().handle.db;
    const owner = await createAdmin(d, unique("owner"));
    const throttle = new SignInThrottle(() => 5);
    const spellings = [owner.admin.username.toUpperCase(), ` ${owner.admin.username}`, `${owner.admin.username}.`, `${owner.admin.username}x`];
    for (let i = 0; i < USER_FAILURES_ALLOWED + 2; i++) {
      const client = `198.51.100.${i}`;
      await expect(signIn(d, { username: spellings[i % spellings.length]!, password: "guess", client }, throttle)).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    }
    await expect(signIn(d, { username: owner.admin.username, password: owner.password, client: "192.0.2.77" }, throttle)).resolves.toMatchObject({ admin: { id: owner.admin.id } });
  });

  it(`a guesser of a real name gets ${PAIR_FAILURES_ALLOWED} tries per address and ${USER_FAILURES_ALLOWED} over all addresses; the owner still signs in from where they signed in before`, async () => {
    const d = db().handle.db;
    const owner = await createAdmin(d, unique("owner"));
    const name = owner.admin.username;
    let now = 1_000_000;
    const throttle = new SignInThrottle(() => now);
    const home = "192.0.2.10";
    await signIn(d, { username: name, password: owner.password, client: home }, throttle);

    for (let i = 0; i < PAIR_FAILURES_ALLOWED; i++) {
      await expect(signIn(d, { username: name, password: `guess${i}`, client: "203.0.113.66" }, throttle)).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    }
    // That pair is refused before the password is looked at — even the right one.
    await expect(signIn(d, { username: name, password: owner.password, client: "203.0.113.66" }, throttle)).rejects.toMatchObject({
      code: "RATE_LIMITED",
      message: expect.stringMatching(/too many failed sign-ins; try again in \d+ s \(for this name from this address\)/),
    });

    for (let i = PAIR_FAILURES_ALLOWED; i < USER_FAILURES_ALLOWED; i++) {
      await expect(signIn(d, { username: name, password: `guess${i}`, client: `203.0.113.${100 + i}` }, throttle)).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    }
    // Spread over addresses: a fresh address is refused for this account…
    await expect(signIn(d, { username: name, password: owner.password, client: "203.0.113.250" }, throttle)).rejects.toMatchObject({
      code: "RATE_LIMITED",
      message: expect.stringMatching(/too many failed sign-ins; try again in \d+ s \(for this account\)/),
    });
    // …but not the address the owner signed in from.
    await expect(signIn(d, { username: name, password: owner.password, client: home }, throttle)).resolves.toMatchObject({ admin: { id: owner.admin.id } });
    now += WINDOW_MS;
    await expect(signIn(d, { username: name, password: owner.password, client: "203.0.113.250" }, throttle)).resolves.toBeDefined();
  });

  it("a passkey sign-in is not refused by the password throttle, however many wrong passwords came first", async () => {
    const handle = db().handle;
    const owner = await settledOwner(handle.db);
    const client = "203.0.113.5";
    for (let i = 0; i < USER_FAILURES_ALLOWED; i++) {
      await signIn(handle.db, { username: owner.admin.username, password: `guess${i}`, client: i < PAIR_FAILURES_ALLOWED ? client : `203.0.113.${20 + i}` }).catch(() => undefined);
    }
    await expect(signIn(handle.db, { username: owner.admin.username, password: owner.password, client })).rejects.toMatchObject({ code: "RATE_LIMITED" });

    const runtime = { database: { handle }, config: { publicUrl: "http://127.0.0.1:8700", host: "127.0.0.1", port: 8700, dataDir: "/nonexistent" } } as unknown as HubRuntime;
    const origin = "http://localhost:8700";
    const session = await createAdminSession(handle.db, owner.admin.id);
    const signedIn = appRouter.createCaller({ runtime, headers: sessionHeaders(session, runtime.config, { origin }) });
    const authenticator = new SoftAuthenticator();
    const ceremony = (await signedIn.passkeys.registrationOptions()) as unknown as { options?: unknown };
    const creation = (ceremony.options ?? ceremony) as Parameters<SoftAuthenticator["register"]>[0];
    const registration = await authenticator.register(creation, origin);
    await signedIn.passkeys.register({ name: "laptop", response: { ...registration, clientExtensionResults: {} } });

    const anonymous = appRouter.createCaller({ runtime, headers: new Headers({ origin }) });
    const options = await anonymous.passkeys.signInOptions();
    const assertion = await authenticator.assert(options as Parameters<SoftAuthenticator["assert"]>[0], origin);
    await expect(anonymous.passkeys.signIn({ response: { ...assertion, clientExtensionResults: {} } })).resolves.toMatchObject({ username: owner.admin.username });
  });

  it(`${SESSION_FAILURES_ALLOWED} wrong passwords in re-authentication end the session, and say so`, async () => {
    const handle = db().handle;
    const owner = await settledOwner(handle.db);
    const session = await createAdminSession(handle.db, owner.admin.id);
    const caller = appRouter.createCaller({ runtime: testRuntime(handle), headers: sessionHeaders(session) });
    for (let i = 1; i < SESSION_FAILURES_ALLOWED; i++) expect(await refusal(caller.auth.reauthenticate({ password: `guess${i}` }))).toMatchObject({ code: "FORBIDDEN" });
    expect(await refusal(caller.auth.reauthenticate({ password: "guess-last" }))).toMatchObject({ code: "UNAUTHENTICATED", message: expect.stringContaining("this session has ended") });
    expect(await validateSessionToken(handle.db, session.token, session.binding)).toBeUndefined();
    // Not even the right password brings it back.
    expect(await refusal(caller.auth.reauthenticate({ password: owner.password }))).toMatchObject({ code: "UNAUTHENTICATED" });
  });

  it(`${SESSION_FAILURES_ALLOWED} wrong current passwords in a password change end the session; the right one still works in a fresh session`, async () => {
    const handle = db().handle;
    const owner = await settledOwner(handle.db);
    const session = await createAdminSession(handle.db, owner.admin.id);
    const caller = appRouter.createCaller({ runtime: testRuntime(handle), headers: sessionHeaders(session) });
    for (let i = 1; i < SESSION_FAILURES_ALLOWED; i++) {
      expect(await refusal(caller.auth.changePassword({ current: `guess${i}`, next: "a brand new passphrase" }))).toMatchObject({ code: "FORBIDDEN" });
    }
    expect(await refusal(caller.auth.changePassword({ current: "guess-last", next: "a brand new passphrase" }))).toMatchObject({ code: "UNAUTHENTICATED", message: expect.stringContaining("this session has ended") });
    expect(await validateSessionToken(handle.db, session.token, session.binding)).toBeUndefined();
    const fresh = await createAdminSession(handle.db, owner.admin.id);
    const again = appRouter.createCaller({ runtime: testRuntime(handle), headers: sessionHeaders(fresh) });
    await expect(again.auth.changePassword({ current: owner.password, next: "a brand new passphrase" })).resolves.toEqual({ changed: true });
  });

  it("wrong passwords inside sessions count with the admin's failed sign-ins (no way around the sign-in throttle)", async () => {
    const handle = db().handle;
    const owner = await settledOwner(handle.db);
    let spent = 0;
    while (spent < USER_FAILURES_ALLOWED) {
      const session = await createAdminSession(handle.db, owner.admin.id);
      const caller = appRouter.createCaller({ runtime: testRuntime(handle), headers: sessionHeaders(session) });
      for (let i = 1; i < SESSION_FAILURES_ALLOWED && spent < USER_FAILURES_ALLOWED; i++, spent++) await refusal(caller.auth.reauthenticate({ password: `guess${spent}` }));
    }
    await expect(signIn(handle.db, { username: owner.admin.username, password: owner.password, client: "203.0.113.201" })).rejects.toMatchObject({ code: "RATE_LIMITED" });
  });
});

describeEachDatabase("throttle counts live in the database", (db) => {
  it("a flood of made-up names and addresses does not evict an admin's spent budget", async () => {
    const d = db().handle.db;
    const throttle = new SignInThrottle(() => 5);
    for (let i = 0; i < USER_FAILURES_ALLOWED; i++) await throttle.failKnown(d, "owner", `10.0.0.${i}`, "owner-id");
    expect(await throttle.userRefusal(d, "owner-id", "10.9.9.9")).toMatchObject({ code: "RATE_LIMITED" });
    await Promise.all(Array.from({ length: 300 }, (_, i) => throttle.failUnknown(d, `n${i}`, `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`)));
    expect(await throttle.userRefusal(d, "owner-id", "10.9.9.9")).toMatchObject({ code: "RATE_LIMITED" });
  });

  it("two throttles with one scope (two hub processes) share one count: concurrent failures are all counted", async () => {
    const d = db().handle.db;
    const scope = unique("shared");
    const first = new SignInThrottle(Date.now, scope);
    const second = new SignInThrottle(Date.now, scope);
    // PAIR_FAILURES_ALLOWED failures split over both, concurrently: the pair is spent for either.
    await Promise.all(Array.from({ length: PAIR_FAILURES_ALLOWED }, (_, i) => (i % 2 === 0 ? first : second).failUnknown(d, "someone", "198.51.100.7")));
    expect(await first.pairRefusal(d, "someone", "198.51.100.7")).toMatchObject({ code: "RATE_LIMITED" });
    expect(await second.pairRefusal(d, "someone", "198.51.100.7")).toMatchObject({ code: "RATE_LIMITED" });
    // A throttle of another scope counts apart.
    expect(await new SignInThrottle(Date.now).pairRefusal(d, "someone", "198.51.100.7")).toBeUndefined();
  });
});
