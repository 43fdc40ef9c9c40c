/**
 * Fair shares of a host's job slots: one token that starts many
 * long `sleep` jobs cannot take every slot of the host's guest, another
 * token's `id` is claimed at once, and a job waiting for a slot on an online
 * host stays queued instead of failing HOST_UNAVAILABLE.
 */
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { submitAction } from "../../server/actions";
import { claimJob } from "../../server/dispatch";
import { hosts, jobs } from "../../server/db/schema";
import { sweepJobs } from "../../server/jobs/delivery";
import { describeEachDatabase } from "../support/databases";
import { actionState, insertHost, insertToken, testDeps } from "./support";

const GUEST_SLOTS = 4; // the guest's default (agent-guest/daemon/daemon.ts)

describeEachDatabase("fair shares of a host's job slots", (db) => {
  it("one token's five auto-allowed sleeps take at most 3 of the guest's 4 slots; another token's id is claimed among the first two claims", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const greedy = await insertToken(d);
    const other = await insertToken(d);
    const sleeps = [];
    for (let i = 0; i < 5; i += 1) {
      sleeps.push(await submitAction(deps, greedy, { operation: "run_command", arguments: { host: host.name, command: `sleep 600 # ${i}` }, channel: "mcp" }, { waitMs: 0 }));
    }
    expect(sleeps.every((o) => o.decision === "auto_allow")).toBe(true);
    const id = await submitAction(deps, other, { operation: "run_command", arguments: { host: host.name, command: "id" }, channel: "mcp" }, { waitMs: 0 });
    expect(id.decision).toBe("auto_allow");

    // The guest's four poll loops each claim one job.
    const claimed: string[] = [];
    for (let slot = 0; slot < GUEST_SLOTS; slot += 1) {
      const job = await claimJob(d, host.id, `host:${host.id}`);
      if (job !== null) claimed.push(job.actionId);
    }
    expect(claimed.slice(0, 2)).toContain(id.action_id);
    expect(claimed.filter((a) => a !== id.action_id)).toHaveLength(3);
    // The greedy token is at its share: its remaining sleeps wait, even with a slot free.
    expect(await claimJob(d, host.id, `host:${host.id}`)).toBeNull();
  });

  it("a job waiting for a slot on an online host stays queued past the claim window; on an offline host it fails HOST_UNAVAILABLE", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const online = await insertHost(d);
    const offline = await insertHost(d);
    const caller = await insertToken(d);
    const waiting = await submitAction(deps, caller, { operation: "run_command", arguments: { host: online.name, command: "id" }, channel: "mcp" }, { waitMs: 0 });
    const stranded = await submitAction(deps, caller, { operation: "run_command", arguments: { host: offline.name, command: "id" }, channel: "mcp" }, { waitMs: 0 });
    const longAgo = new Date(Date.now() - 120_000);
    await d.update(hosts).set({ lastSeenAt: new Date() }).where(eq(hosts.id, online.id));
    await d.update(hosts).set({ lastSeenAt: longAgo }).where(eq(hosts.id, offline.id));
    await d.update(jobs).set({ createdAt: longAgo }).where(eq(jobs.id, waiting.job.id));
    await d.update(jobs).set({ createdAt: longAgo }).where(eq(jobs.id, stranded.job.id));

    await sweepJobs(d, { windows: { heartbeatLostMs: 10_000, claimWaitMs: 10_000 } });
    expect((await d.select().from(jobs).where(eq(jobs.id, waiting.job.id)))[0]?.state).toBe("queued");
    expect(await actionState(d, waiting.action_id)).not.toBe("failed");
    expect((await d.select().from(jobs).where(eq(jobs.id, stranded.job.id)))[0]?.state).toBe("cancelled");
    expect(await actionState(d, stranded.action_id)).toBe("failed");

    // Past its deadline even an online host's queued job ends (it would never be handed out).
    await d.update(jobs).set({ deadline: new Date(Date.now() - 1_000) }).where(eq(jobs.id, waiting.job.id));
    await sweepJobs(d, { windows: { heartbeatLostMs: 10_000, claimWaitMs: 10_000 } });
    expect((await d.select().from(jobs).where(eq(jobs.id, waiting.job.id)))[0]?.state).toBe("cancelled");
  });
});
