import { expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import { createToken } from "../tokens";
import { countLiveSessions, findSession, insertSession, liveSessionDigests, newSessionId, reclaimExpiredSessions, sessionDigest, touchSession } from "./session-store";

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
});
