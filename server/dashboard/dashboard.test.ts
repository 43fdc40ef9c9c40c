/**
 * Dashboard aggregation on both databases. The chart statements run over
 * rows placed at known instants (a window in 2031, away from every other
 * test's rows), so each bucket, percentile and histogram count is checked
 * exactly; the summary is checked against rows this file makes.
 */
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { Database } from "../db";
import { actions, approvals, jobs } from "../db/schema";
import { describeEachDatabase } from "../../test/support/databases";
import { insertAdmin, insertHost } from "../../test/pipeline/support";
import { bucketLabels, dashboardCharts, dashboardSummary, DURATION_BOUNDS_MS } from ".";

const at = (iso: string) => new Date(iso);
const HASH = `sha256:${"cd".repeat(32)}`;

/** One action created at `created`, decided as `decision`; optionally its approval and its job's completion. */
async function place(
  d: Database,
  hostId: string,
  adminId: string,
  o: { created: string; decision: "auto_allow" | "grant" | "hold"; approval?: { state: "approved" | "denied" | "pending" | "expired"; decidedAfterMs?: number }; completedAfterMs?: number },
): Promise<string> {
  const id = randomUUID();
  const created = at(o.created);
  await d.insert(actions).values({
    id, channel: "mcp", callerKey: `admin:${adminId}`, operation: "run_command", capabilityId: "shell", hostId, actionHash: HASH, prepared: { arguments: { command: "true" } },
    riskLevel: o.decision === "auto_allow" ? "read_only" : "high", state: o.completedAfterMs === undefined ? "held" : "completed",
    result: { decision: o.decision, grant_id: null, approval_id: null }, createdAt: created, updatedAt: created,
  });
  if (o.approval !== undefined) {
    await d.insert(approvals).values({
      actionId: id, actionHash: HASH, state: o.approval.state, requestedBy: "x", riskLevel: "high", deadline: new Date(created.getTime() + 300_000), createdAt: created,
      decidedAt: o.approval.decidedAfterMs === undefined ? null : new Date(created.getTime() + o.approval.decidedAfterMs), decidedBy: o.approval.decidedAfterMs === undefined ? null : adminId,
    });
  }
  if (o.completedAfterMs !== undefined) {
    await d.insert(jobs).values({ actionId: id, hostId, payload: {}, signature: "x", state: "completed", deadline: new Date(created.getTime() + 600_000), createdAt: created, completedAt: new Date(created.getTime() + o.completedAfterMs) });
  }
  return id;
}

it("duration bucket labels cover every bound plus an open-ended last bucket", () => {
  expect(bucketLabels()).toEqual(["<1 s", "1 s–2 s", "2 s–5 s", "5 s–10 s", "10 s–30 s", "30 s–1 min", "1 min–5 min", "≥5 min"]);
  expect(bucketLabels().length).toBe(DURATION_BOUNDS_MS.length + 1);
});

describeEachDatabase("dashboard aggregation", (db) => {
  it("actions per hour by decision (24 UTC hours, zeros kept), approval response time and end-to-end latency, from the rows alone", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    const admin = await insertAdmin(d);
    const now = Date.parse("2031-03-01T12:59:00.000Z");
    await place(d, host.id, admin.id, { created: "2031-03-01T10:15:00.000Z", decision: "auto_allow", completedAfterMs: 1_500 });
    await place(d, host.id, admin.id, { created: "2031-03-01T10:40:00.000Z", decision: "hold", approval: { state: "approved", decidedAfterMs: 4_000 }, completedAfterMs: 65_000 });
    await place(d, host.id, admin.id, { created: "2031-03-01T11:00:00.000Z", decision: "hold", approval: { state: "denied", decidedAfterMs: 40_000 } });
    await place(d, host.id, admin.id, { created: "2031-03-01T12:05:00.000Z", decision: "grant", completedAfterMs: 700 });
    await place(d, host.id, admin.id, { created: "2031-03-01T12:30:00.000Z", decision: "hold", approval: { state: "pending" } });
    // An expiry is not a person's response; a row before the window and one after `now` are not counted.
    await place(d, host.id, admin.id, { created: "2031-03-01T12:31:00.000Z", decision: "hold", approval: { state: "expired", decidedAfterMs: 300_000 } });
    await place(d, host.id, admin.id, { created: "2031-02-28T12:59:00.000Z", decision: "auto_allow", completedAfterMs: 100 });
    await place(d, host.id, admin.id, { created: "2031-03-01T13:30:00.000Z", decision: "auto_allow" });

    const charts = await dashboardCharts(d, now);
    expect(charts.since).toBe("2031-02-28T13:00:00.000Z");
    expect(charts.actions_per_hour.length).toBe(24);
    expect(charts.actions_per_hour[23]?.hour).toBe("2031-03-01T12:00:00.000Z");
    const byHour = Object.fromEntries(charts.actions_per_hour.filter((h) => h.total > 0).map((h) => [h.hour.slice(11, 13), Object.fromEntries(Object.entries(h.counts).filter(([, n]) => n > 0))]));
    expect(byHour).toEqual({
      "10": { auto_allow: 1, approved: 1 },
      "11": { denied: 1 },
      "12": { grant: 1, pending: 1, expired: 1 },
    });
    expect(charts.actions_per_hour.reduce((n, h) => n + h.total, 0)).toBe(6);

    expect(charts.approval_response).toEqual({ count: 2, p50_ms: 22_000, p95_ms: 38_200, max_ms: 40_000, buckets: [0, 0, 1, 0, 0, 1, 0, 0] });
    expect(charts.latency.without_person).toEqual({ count: 2, p50_ms: 1_100, p95_ms: 1_460, max_ms: 1_500, buckets: [1, 1, 0, 0, 0, 0, 0, 0] });
    expect(charts.latency.with_person).toEqual({ count: 1, p50_ms: 65_000, p95_ms: 65_000, max_ms: 65_000, buckets: [0, 0, 0, 0, 0, 0, 1, 0] });
  });

  it("an empty window has zero buckets and no invented percentiles", async () => {
    const charts = await dashboardCharts(db().handle.db, Date.parse("2040-01-01T00:00:00.000Z"));
    expect(charts.actions_per_hour.every((h) => h.total === 0)).toBe(true);
    expect(charts.approval_response).toEqual({ count: 0, p50_ms: null, p95_ms: null, max_ms: null, buckets: [0, 0, 0, 0, 0, 0, 0, 0] });
  });

  it("summary: pending approvals before their deadline, recent actions newest first, hosts, ledger size", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    const admin = await insertAdmin(d);
    const before = await dashboardSummary(d);
    // Created after the other test's 2031 rows, so it is the newest; its deadline is ahead.
    const id = await place(d, host.id, admin.id, { created: "2035-01-01T00:00:00.000Z", decision: "hold", approval: { state: "pending" } });
    const after = await dashboardSummary(d);
    expect(after.pending_approvals).toBe(before.pending_approvals + 1);
    expect(after.recent_actions[0]?.id).toBe(id);
    const times = after.recent_actions.map((a) => Date.parse(a.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(after.recent_actions.length).toBeLessThanOrEqual(8);
    expect(after.hosts.total).toBeGreaterThanOrEqual(1);
    // Hosts this file made never reported in: not online.
    expect(after.hosts.list.find((h) => h.name === host.name)?.online).toBe(false);
    expect(after.ledger.entries).toBeGreaterThanOrEqual(0);
    expect(after.ledger.checkpoint).toBeNull();
  });
});
