import { expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import { createToken, revokeToken } from "../tokens";
import { allEntries } from "../../test/pipeline/support";
import { hashActor } from "../ledger/entry";
import { authenticateWithSession, countLiveSessions, deleteSession, findSession, insertSession, liveSessionDigests, newSessionId, reclaimExpiredSessions, sessionDigest, touchSession } from "./session-store";

const AUDIENCE = "http://127.0.0.1:3000/api/mcp";

describeEachDatabase("mcp session store", (db) => {
  it("binds a session to its token, slides idle expiry, and reclaims expired sessions", async () => {
    const { handle } = db();
    const t0 = new Date("2030-01-01T00:00:00Z");
    const a = await createToken(handle.db, { name: "a", readOnly: false, tools: null, hosts: null, expiresAt: null, createdBy: "cli" }, { knownTools: [], now: new Date() });
    const b = await createToken(handle.db, { name: "b", readOnly: false, tools: null, hosts: null, expiresAt: null, createdBy: "cli" }, { knownTools: [], now: new Date() });
    const lifetimes = { idleS: 60, maxS: 300 };
    const id = newSessionId();
    const stored = await insertSession(handle.db, { sessionId: id, tokenId: a.token.id, protocolVersion: "2025-11-25", clientInfo: { name: "c", version: "1" }, clientCapabilities: {} }, lifetimes, t0);
    expect(stored.digest).toBe(sessionDigest(id));
    expect(await countLiveSessions(handle.db, a.token.id, t0)).toBe(1);
    expect(await findSession(handle.db, id, b.token.id, t0)).toEqual({ ok: false, reason: "other_token" });
    expect(await findSession(handle.db, newSessionId(), a.token.id, t0)).toEqual({ ok: false, reason: "unknown" });
    const found = await findSession(handle.db, id, a.token.id, new Date(t0.getTime() + 30_000));
    expect(found.ok).toBe(true);
    if (!found.ok) return;
    await touchSession(handle.db, found.session, lifetimes, new Date(t0.getTime() + 30_000));
    // Slid: alive at 80 s (idle 60 s from 30 s), capped by the 300 s maximum age.
    expect((await findSession(handle.db, id, a.token.id, new Date(t0.getTime() + 80_000))).ok).toBe(true);
    expect(await findSession(handle.db, id, a.token.id, new Date(t0.getTime() + 91_000))).toEqual({ ok: false, reason: "expired" });
    expect((await liveSessionDigests(handle.db, [stored.digest], new Date(t0.getTime() + 1000))).has(stored.digest)).toBe(true);
    expect((await reclaimExpiredSessions(handle.db, new Date(t0.getTime() + 91_000))).length).toBeGreaterThanOrEqual(1);
    expect(await findSession(handle.db, id, a.token.id, t0)).toEqual({ ok: false, reason: "unknown" });
  });

  it("seals each session's start and end: opened, closed once (ending twice seals once), expired", async () => {
    const { handle } = db();
    const t0 = new Date("2031-01-01T00:00:00Z");
    const { token } = await createToken(handle.db, { name: "sealed", readOnly: false, tools: null, hosts: null, expiresAt: null, createdBy: "cli" }, { knownTools: [], now: new Date() });
    const lifetimes = { idleS: 60, maxS: 300 };
    const open = (id: string) => insertSession(handle.db, { sessionId: id, tokenId: token.id, protocolVersion: "2025-11-25", clientInfo: {}, clientCapabilities: {} }, lifetimes, t0);
    const closedOne = await open(newSessionId());
    const expiring = await open(newSessionId());
    await deleteSession(handle.db, closedOne.digest);
    await deleteSession(handle.db, closedOne.digest);
    await reclaimExpiredSessions(handle.db, new Date(t0.getTime() + 61_000));
    const events = (await allEntries(handle.db))
      .filter((e) => e.type === "session/1" && e.actor === hashActor("token", token.id))
      .map((e) => `${(e.data as { event: string }).event}:${(e.data as { session_digest: string }).session_digest === `sha256:${closedOne.digest}` ? "closed-one" : (e.data as { session_digest: string }).session_digest === `sha256:${expiring.digest}` ? "expiring" : "?"}`);
    expect(events).toEqual(["opened:closed-one", "opened:expiring", "closed:closed-one", "expired:expiring"]);
  });

  it("authenticateWithSession reads token and session together: the token is judged as authenticateToken would, the session only for a good token and only its own", async () => {
    const { handle } = db();
    const t0 = new Date("2032-01-01T00:00:00Z");
    const make = (name: string, expiresAt: Date | null = null) =>
      createToken(handle.db, { name, readOnly: false, tools: null, hosts: null, expiresAt, createdBy: "cli" }, { knownTools: [], now: new Date("2031-12-01T00:00:00Z") });
    const owner = await make("joined-owner");
    const other = await make("joined-other");
    const short = await make("joined-short", new Date(t0.getTime() + 10_000));
    const lifetimes = { idleS: 60, maxS: 300 };
    const id = newSessionId();
    const stored = await insertSession(handle.db, { sessionId: id, tokenId: owner.token.id, protocolVersion: "2025-11-25", clientInfo: { name: "c" }, clientCapabilities: { sampling: {} } }, lifetimes, t0);

    const good = await authenticateWithSession(handle.db, owner.secret, id, t0, AUDIENCE);
    expect(good.auth.ok && good.auth.token.id).toBe(owner.token.id);
    expect(good.session).toEqual({ ok: true, session: { ...stored, clientInfo: { name: "c" }, clientCapabilities: { sampling: {} } } });
    expect((await authenticateWithSession(handle.db, owner.secret, newSessionId(), t0, AUDIENCE)).session).toEqual({ ok: false, reason: "unknown" });
    expect((await authenticateWithSession(handle.db, other.secret, id, t0, AUDIENCE)).session).toEqual({ ok: false, reason: "other_token" });
    expect((await authenticateWithSession(handle.db, owner.secret, id, new Date(t0.getTime() + 61_000), AUDIENCE)).session).toEqual({ ok: false, reason: "expired" });

    // A bad token says nothing about the session it names.
    expect(await authenticateWithSession(handle.db, "garbage", id, t0, AUDIENCE)).toEqual({ auth: { ok: false, reason: "malformed" }, session: undefined });
    expect(await authenticateWithSession(handle.db, `lh_${"A".repeat(32)}`, id, t0, AUDIENCE)).toEqual({ auth: { ok: false, reason: "unknown" }, session: undefined });
    expect(await authenticateWithSession(handle.db, short.secret, id, new Date(t0.getTime() + 10_000), AUDIENCE)).toEqual({ auth: { ok: false, reason: "expired" }, session: undefined });
    // Revocation counts on the very next call: nothing of the token is remembered between calls.
    await revokeToken(handle.db, owner.token.id, "cli");
    expect(await authenticateWithSession(handle.db, owner.secret, id, t0, AUDIENCE)).toEqual({ auth: { ok: false, reason: "revoked" }, session: undefined });
  });
});
