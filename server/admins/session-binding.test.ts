import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import { adminSessions, adminUsers } from "../db/schema";
import {
  SESSION_BINDING_HEADER,
  checkAdminSession,
  checkSessionToken,
  createAdminSession,
  pageShellSession,
  sessionCookieName,
  sessionCookieSecure,
  sessionIdOf,
} from "./sessions";

async function newSession(db: Parameters<typeof createAdminSession>[0]) {
  const [admin] = await db.insert(adminUsers).values({ username: `bind-${Math.random().toString(36).slice(2, 10)}`, passwordHash: "unused", role: "owner" }).returning();
  return createAdminSession(db, admin!.id);
}

describeEachDatabase("session binding: a cookie alone opens nothing", (database) => {
  it("a session stores only the hashes of its cookie and its binding secret, and the two differ", async () => {
    const { db } = database().handle;
    const session = await newSession(db);
    const [row] = await db.select().from(adminSessions).where(eq(adminSessions.id, session.sessionId));
    expect(row?.id).toBe(sessionIdOf(session.token));
    expect(row?.bindingHash).toBe(sessionIdOf(session.binding));
    expect(session.binding).not.toBe(session.token);
    expect(JSON.stringify(row)).not.toContain(session.binding);
  });

  it("cookie and binding together are the session; the cookie alone is binding-missing, with another session's secret binding-mismatch", async () => {
    const { db } = database().handle;
    const a = await newSession(db);
    const b = await newSession(db);
    const ok = await checkSessionToken(db, a.token, a.binding);
    expect(ok.ok && ok.session.sessionId).toBe(a.sessionId);
    expect(await checkSessionToken(db, a.token, undefined)).toEqual({ ok: false, reason: "binding-missing" });
    expect(await checkSessionToken(db, a.token, "")).toEqual({ ok: false, reason: "binding-missing" });
    expect(await checkSessionToken(db, a.token, b.binding)).toEqual({ ok: false, reason: "binding-mismatch" });
    expect(await checkSessionToken(db, a.token, a.token)).toEqual({ ok: false, reason: "binding-mismatch" });
    expect(await checkSessionToken(db, a.token, "not base32 at all!")).toEqual({ ok: false, reason: "binding-mismatch" });
    // The binding secret is no cookie: presented as one, it names no session.
    expect(await checkSessionToken(db, a.binding, a.binding)).toEqual({ ok: false, reason: "no-session" });
  });

  it("a session from before binding (no stored hash) never validates through the API", async () => {
    const { db } = database().handle;
    const s = await newSession(db);
    await db.update(adminSessions).set({ bindingHash: null }).where(eq(adminSessions.id, s.sessionId));
    expect(await checkSessionToken(db, s.token, s.binding)).toEqual({ ok: false, reason: "binding-mismatch" });
  });

  it("request headers: the binding travels in its own header, never read from a cookie; the page shell reads the cookie alone", async () => {
    const { db } = database().handle;
    const s = await newSession(db);
    const cookie = `${sessionCookieName(true)}=${s.token}`;
    const both = await checkAdminSession(db, new Headers({ cookie, [SESSION_BINDING_HEADER]: s.binding }), { secure: true });
    expect(both.ok).toBe(true);
    expect(await checkAdminSession(db, new Headers({ cookie }), { secure: true })).toEqual({ ok: false, reason: "binding-missing" });
    expect(await checkAdminSession(db, new Headers({ cookie: `${cookie}; ${SESSION_BINDING_HEADER}=${s.binding}` }), { secure: true })).toEqual({ ok: false, reason: "binding-missing" });
    expect((await pageShellSession(db, new Headers({ cookie }), { secure: true }))?.sessionId).toBe(s.sessionId);
    // Over a secure context only the __Host- cookie counts.
    expect(await checkAdminSession(db, new Headers({ cookie: `leasehold_session=${s.token}`, [SESSION_BINDING_HEADER]: s.binding }), { secure: true })).toEqual({ ok: false, reason: "no-session" });
  });
});

it("session cookies are Secure/__Host- over HTTPS and on http://localhost (also the default loopback admin URL), plain elsewhere over HTTP", () => {
  expect(sessionCookieSecure({ publicUrl: "https://hub.example.org" })).toBe(true);
  expect(sessionCookieSecure({ publicUrl: "http://localhost:8700" })).toBe(true);
  expect(sessionCookieSecure({ publicUrl: "http://127.0.0.1:8700", host: "127.0.0.1" })).toBe(true);
  expect(sessionCookieSecure({ publicUrl: "http://127.0.0.1:8700", host: "127.0.0.1", publicUrlSet: true })).toBe(false);
  expect(sessionCookieSecure({ publicUrl: "http://10.0.0.5:8700", host: "0.0.0.0" })).toBe(false);
  expect(sessionCookieSecure({ publicUrl: "not a url" })).toBe(false);
});
