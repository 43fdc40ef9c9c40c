/**
 * Approval liveness (docs/design.md#approval-liveness): the pure judgement,
 * the bounded mark in PostgreSQL (one write per interval per approval even
 * with several waiters), a waiter keeping its action live, and the listing
 * reporting an action nobody waits on as orphaned with its session's state.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { submitAction } from "../actions";
import { approvals, mcpSessions } from "../db/schema";
import { describeEachDatabase } from "../../test/support/databases";
import { rejectionOf } from "../../test/support/refusals";
import { insertHost, insertToken, testDeps } from "../../test/pipeline/support";
import { livenessOf, livenessText, markClientWaiting, ORPHANED_AFTER_MS, orphanedAfterMs, WAITING_MARK_EVERY_MS } from "./liveness";
import { showApproval, waitForDecision } from "./approvals";
import { renderApproval, approvalViewOf } from "./view";

const NOW = new Date("2026-12-06T12:05:00.000Z");

describe("livenessOf", () => {
  it("waiting while the mark is younger than ORPHANED_AFTER_MS, orphaned from then on, and orphaned when no client ever waited", () => {
    const base = { heldAt: new Date(NOW.getTime() - 60_000), sessionId: "s", sessionExpiresAt: new Date(NOW.getTime() + 1000) };
    const fresh = livenessOf({ ...base, clientWaitingAt: new Date(NOW.getTime() - 3_400) }, NOW);
    expect(fresh).toEqual({ state: "waiting", since: new Date(NOW.getTime() - 3_400).toISOString(), seen_s_ago: 3, session: "open" });
    expect(livenessText(fresh, (iso) => iso)).toBe("agent waiting (session open, last seen 3 s ago)");
    const edge = livenessOf({ ...base, clientWaitingAt: new Date(NOW.getTime() - ORPHANED_AFTER_MS) }, NOW);
    expect(edge.state).toBe("orphaned");
    const never = livenessOf({ ...base, clientWaitingAt: null }, NOW);
    expect(never).toMatchObject({ state: "orphaned", since: base.heldAt.toISOString() });
    expect(livenessText(never, (iso) => iso.slice(11, 16))).toBe("orphaned: no client waiting since 12:04 (session open)");
  });

  it("the window is LEASEHOLD_APPROVAL_ORPHANED_S: 30 s when unset, the given seconds otherwise, and no shorter than 10 s", () => {
    expect(ORPHANED_AFTER_MS).toBe(30_000);
    expect(orphanedAfterMs({})).toBe(30_000);
    expect(orphanedAfterMs({ LEASEHOLD_APPROVAL_ORPHANED_S: "12" })).toBe(12_000);
    expect(() => orphanedAfterMs({ LEASEHOLD_APPROVAL_ORPHANED_S: "5" })).toThrow("LEASEHOLD_APPROVAL_ORPHANED_S must be a whole number between 10 and 86400");
    expect(() => orphanedAfterMs({ LEASEHOLD_APPROVAL_ORPHANED_S: "30s" })).toThrow("LEASEHOLD_APPROVAL_ORPHANED_S must be a whole number between 10 and 86400");
    // An 11 s old mark: waiting under the default window, orphaned under a 10 s one.
    const mark = { clientWaitingAt: new Date(NOW.getTime() - 11_000), heldAt: new Date(NOW.getTime() - 60_000), sessionId: "s", sessionExpiresAt: new Date(NOW.getTime() + 1000) };
    expect(livenessOf(mark, NOW).state).toBe("waiting");
    expect(livenessOf(mark, NOW, orphanedAfterMs({ LEASEHOLD_APPROVAL_ORPHANED_S: "10" })).state).toBe("orphaned");
  });

  it("the session is open only while unexpired; closed when its row is gone or expired; none for a caller without an MCP session", () => {
    const mark = { clientWaitingAt: NOW, heldAt: NOW };
    expect(livenessOf({ ...mark, sessionId: "s", sessionExpiresAt: null }, NOW).session).toBe("closed");
    expect(livenessOf({ ...mark, sessionId: "s", sessionExpiresAt: NOW }, NOW).session).toBe("closed");
    expect(livenessOf({ ...mark, sessionId: null, sessionExpiresAt: null }, NOW).session).toBe("none");
  });
});

describeEachDatabase("approval liveness", (db) => {
  async function held() {
    const { handle } = db();
    const host = await insertHost(handle.db);
    const caller = await insertToken(handle.db);
    const refusal = await rejectionOf(submitAction(testDeps(handle), caller, { operation: "run_command", arguments: { host: host.name, command: "chmod -f 600 lh-live" }, channel: "mcp" }, { waitMs: 0 }));
    expect(refusal.code).toBe("APPROVAL_PENDING");
    return { approvalId: String(refusal.details?.["approval_id"]), actionId: String(refusal.details?.["action_id"]), caller };
  }
  async function markOf(approvalId: string): Promise<Date | null> {
    const [row] = await db().handle.db.select({ at: approvals.clientWaitingAt }).from(approvals).where(eq(approvals.id, approvalId));
    return row?.at ?? null;
  }

  it("a held action starts marked (its submitting call is open); the mark moves at most once per interval however many waiters write", async () => {
    const { approvalId } = await held();
    const start = await markOf(approvalId);
    expect(start).not.toBeNull();
    const t0 = new Date((start as Date).getTime() + 1_000);
    // Eight concurrent waiters inside the interval: none writes.
    const early = await Promise.all(Array.from({ length: 8 }, () => markClientWaiting(db().handle.db, approvalId, t0)));
    expect(early.filter(Boolean)).toHaveLength(0);
    // Past the interval, eight concurrent waiters (as on several hub processes): exactly one writes.
    const t1 = new Date((start as Date).getTime() + WAITING_MARK_EVERY_MS + 1);
    const late = await Promise.all(Array.from({ length: 8 }, () => markClientWaiting(db().handle.db, approvalId, t1)));
    expect(late.filter(Boolean)).toHaveLength(1);
    expect((await markOf(approvalId))?.getTime()).toBe(t1.getTime());
  });

  it("a decided approval is never marked", async () => {
    const { approvalId } = await held();
    await db().handle.db.update(approvals).set({ state: "denied" }).where(eq(approvals.id, approvalId));
    expect(await markClientWaiting(db().handle.db, approvalId, new Date(Date.now() + 60_000))).toBe(false);
  });

  it("an orphaned action (old mark, session gone) lists as orphaned; a waiter inside waitForDecision makes it waiting again", async () => {
    const { approvalId, caller } = await held();
    const { handle } = db();
    const old = new Date(Date.now() - 10 * 60_000);
    await handle.db.update(approvals).set({ clientWaitingAt: old }).where(eq(approvals.id, approvalId));
    const orphaned = await showApproval(handle.db, approvalId);
    expect(orphaned.liveness).toMatchObject({ state: "orphaned", since: old.toISOString(), session: "closed" });
    expect(renderApproval(approvalViewOf(orphaned)).join("\n")).toContain(`orphaned: no client waiting since ${old.toISOString().slice(11, 19)} UTC (session closed)`);

    // The session opens (as the MCP layer stores it), and a client waits for a decision.
    await handle.db.insert(mcpSessions).values({ id: String(caller.sessionId), tokenId: caller.tokenId, protocolVersion: "2025-11-25", expiresAt: new Date(Date.now() + 60_000) });
    const waited = await waitForDecision(handle, approvalId, { waitMs: 50, pollMs: 10 });
    expect(waited.state).toBe("pending");
    const live = await showApproval(handle.db, approvalId);
    expect(live.liveness).toMatchObject({ state: "waiting", session: "open" });
    expect(renderApproval(approvalViewOf(live)).join("\n")).toMatch(/agent waiting \(session open, last seen \d+ s ago\)/);
  });
});
