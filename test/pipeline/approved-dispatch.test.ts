/**
 * Approved actions nobody waits for are dispatched by the housekeeping pass
 * (server/actions/approved.ts): once, even when a waiter and several
 * processes' passes race; never when the submitting token was revoked
 * meanwhile (the refusal is sealed and stored, and approval_wait answers it).
 */
import { eq, sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { dispatchApprovedAction, resumeAction, startApprovedDispatch, submitAction } from "../../server/actions";
import { approve } from "../../server/approvals";
import { actions, agentTokens, jobs } from "../../server/db/schema";
import { describeEachDatabase } from "../support/databases";
import { codeOf, rejectionOf } from "../support/refusals";
import { actionState, entriesOf, insertAdmin, insertHost, insertToken, testDeps } from "./support";

describeEachDatabase("approved actions dispatched with nobody waiting", (db) => {
  const held = async (command: string) => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const caller = await insertToken(d, { createdBy: "someone-else" });
    const refusal = await rejectionOf(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command }, channel: "mcp" }, { waitMs: 0 }));
    const actionId = String(refusal.details?.["action_id"]);
    await approve(d, String(refusal.details?.["approval_id"]), await insertAdmin(d), "ok");
    // The decision is older than the grace a live waiter gets.
    await d.execute(sql`update approvals set decided_at = now() - interval '10 seconds' where action_id = ${actionId}`);
    return { d, deps, caller, actionId };
  };

  it("a pass dispatches an approved action nobody waits for; racing a waiter and two more passes, one job is queued and the waiter gets it", async () => {
    const { d, deps, caller, actionId } = await held("rm notes.txt");
    const passes = [startApprovedDispatch(deps, { intervalMs: 3_600_000 }), startApprovedDispatch(deps, { intervalMs: 3_600_000 }), startApprovedDispatch(deps, { intervalMs: 3_600_000 })];
    try {
      const [resumed, ...counts] = await Promise.all([resumeAction(deps, caller, actionId, { waitMs: 0 }), ...passes.map((p) => p.pass())]);
      expect(resumed.status).toBe("dispatched");
      expect(counts.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1);
      const queued = await d.select().from(jobs).where(eq(jobs.actionId, actionId));
      expect(queued).toHaveLength(1);
      expect(resumed.job?.id).toBe(queued[0]?.id);
      expect((await entriesOf(d, actionId)).filter((e) => e.type === "dispatch/1")).toHaveLength(1);
      expect(await Promise.all(passes.map((p) => p.pass()))).toEqual([0, 0, 0]);
    } finally {
      await Promise.all(passes.map((p) => p.stop()));
    }
  });

  it("a waiter's grace: an approval decided a moment ago is left to its waiter", async () => {
    const { d, deps, actionId } = await held("rm grace.txt");
    await d.execute(sql`update approvals set decided_at = now() where action_id = ${actionId}`);
    const pass = startApprovedDispatch(deps, { intervalMs: 3_600_000 });
    try {
      expect(await pass.pass()).toBe(0);
      expect(await actionState(d, actionId)).toBe("approved");
    } finally {
      await pass.stop();
    }
  });

  it("hostile: the submitting token revoked after the approval — the pass queues no job, seals the refusal, stores it, and approval_wait answers FORBIDDEN", async () => {
    const { d, deps, caller, actionId } = await held("rm revoked.txt");
    await d.update(agentTokens).set({ revokedAt: new Date() }).where(eq(agentTokens.id, caller.tokenId));
    expect(await dispatchApprovedAction(deps, actionId)).toBe("skipped");
    expect(await d.select().from(jobs).where(eq(jobs.actionId, actionId))).toEqual([]);
    expect(await actionState(d, actionId)).toBe("failed");
    expect((await entriesOf(d, actionId)).filter((e) => e.type === "refusal/1")).toHaveLength(1);
    const [row] = await d.select({ result: actions.result }).from(actions).where(eq(actions.id, actionId));
    expect((row?.result as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    expect(await codeOf(resumeAction(deps, caller, actionId, { waitMs: 0 }))).toBe("FORBIDDEN");
    // Nothing is tried again.
    expect(await dispatchApprovedAction(deps, actionId)).toBe("skipped");
    expect((await entriesOf(d, actionId)).filter((e) => e.type === "refusal/1")).toHaveLength(1);
  });
});
