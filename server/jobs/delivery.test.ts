import { describe, expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import { insertHost, insertJob } from "../../test/pipeline/support";
import { countingTransactions } from "../../test/support/count-transactions";
import type { Database } from "../db";
import { actions, jobs } from "../db/schema";
import { eq, sql } from "drizzle-orm";
import { ackJob, heartbeat, nextJob, sweepJobs } from "./delivery";
import { HeartbeatBody } from "../trust/protocol";
import { jobTopic, onOutputProgress, wake, type OutputProgress } from "./wake";

function collect(actionId: string): { seen: OutputProgress[]; stop(): void } {
  const seen: OutputProgress[] = [];
  return { seen, stop: onOutputProgress(actionId, (p) => seen.push(p)) };
}

describeEachDatabase("heartbeat and output progress", (db) => {
  it("a live claim's heartbeat renews it and passes its output counts to the action's waiters", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    const { jobId, actionId } = await insertJob(d, host.id, "claimed");
    const listener = collect(actionId);
    try {
      expect(await heartbeat(d, host.id, jobId)).toBe(true);
      expect(listener.seen).toEqual([]);
      expect(await heartbeat(d, host.id, jobId, { stdout_bytes: 1500, stderr_bytes: 7 })).toBe(true);
      expect(listener.seen[0]).toEqual({ stdout_bytes: 1500, stderr_bytes: 7 });
    } finally {
      listener.stop();
    }
  });

  it("another host, an unclaimed or finished job, and a malformed id are refused, and say nothing to waiters", async () => {
    const d = db().handle.db;
    const owner = await insertHost(d);
    const other = await insertHost(d);
    const claimed = await insertJob(d, owner.id, "claimed");
    const queued = await insertJob(d, owner.id, "queued");
    const done = await insertJob(d, owner.id, "completed");
    const listeners = [collect(claimed.actionId), collect(queued.actionId), collect(done.actionId)];
    try {
      const output = { stdout_bytes: 1, stderr_bytes: 0 };
      expect(await heartbeat(d, other.id, claimed.jobId, output)).toBe(false);
      expect(await heartbeat(d, owner.id, queued.jobId, output)).toBe(false);
      expect(await heartbeat(d, owner.id, done.jobId, output)).toBe(false);
      expect(await heartbeat(d, owner.id, "not-a-uuid", output)).toBe(false);
      expect(listeners.flatMap((l) => l.seen)).toEqual([]);
    } finally {
      for (const l of listeners) l.stop();
    }
  });
});

describeEachDatabase("the job sweep's windows", (db) => {
  it("a claim silent longer than the heartbeat window ends unknown, a job unclaimed longer than the claim window ends HOST_UNAVAILABLE; shorter ones are left alone", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    const claimed = await insertJob(d, host.id, "claimed");
    const queued = await insertJob(d, host.id, "queued");
    const threeSecondsAgo = new Date(Date.now() - 3_000);
    await d.update(jobs).set({ heartbeatAt: threeSecondsAgo }).where(eq(jobs.id, claimed.jobId));
    await d.update(jobs).set({ createdAt: threeSecondsAgo }).where(eq(jobs.id, queued.jobId));
    const state = async (actionId: string) => (await d.select().from(actions).where(eq(actions.id, actionId)))[0];

    expect(await sweepJobs(d, { windows: { heartbeatLostMs: 60_000, claimWaitMs: 60_000 } })).toBe(0);
    expect((await state(claimed.actionId))?.state).toBe("dispatched");
    expect(await sweepJobs(d, { windows: { heartbeatLostMs: 2_000, claimWaitMs: 2_000 } })).toBe(2);
    expect((await state(claimed.actionId))?.state).toBe("unknown");
    const failed = await state(queued.actionId);
    expect(failed?.state).toBe("failed");
    expect((failed?.result as { error: { code: string; message: string } }).error).toMatchObject({ code: "HOST_UNAVAILABLE", message: expect.stringContaining("within 2 s") });
  });
});

describe("heartbeat body", () => {
  it("accepts nothing, or two byte counts", () => {
    expect(HeartbeatBody.safeParse({}).success).toBe(true);
    expect(HeartbeatBody.safeParse({ output: { stdout_bytes: 0, stderr_bytes: 12 } }).success).toBe(true);
  });
  it("refuses negative, fractional, huge or string counts, extra fields and content", () => {
    for (const body of [
      { output: { stdout_bytes: -1, stderr_bytes: 0 } },
      { output: { stdout_bytes: 1.5, stderr_bytes: 0 } },
      { output: { stdout_bytes: 2 ** 60, stderr_bytes: 0 } },
      { output: { stdout_bytes: "1", stderr_bytes: 0 } },
      { output: { stdout_bytes: 1 } },
      { output: { stdout_bytes: 1, stderr_bytes: 0, text: "secret" } },
      { output: { stdout_bytes: 1, stderr_bytes: 0 }, extra: true },
      [],
      "x",
    ]) {
      expect(HeartbeatBody.safeParse(body).success, JSON.stringify(body)).toBe(false);
    }
  });
});

describeEachDatabase("the guest's long-poll", (db) => {
  it("a look that finds no queued job opens no claim transaction; a job queued and announced while it waits is claimed by it", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    // The poll's database, counting the transactions it opens (a claim is one).
    const counted = countingTransactions(d);
    expect(await nextJob(counted.db, host.id, 300)).toBeNull();
    expect(counted.count()).toBe(0);

    const poll = nextJob(counted.db, host.id, 10_000);
    await new Promise((r) => setTimeout(r, 100));
    const { jobId } = await insertJob(d, host.id, "queued");
    wake(jobTopic(host.id));
    expect((await poll)?.id).toBe(jobId);
    expect(counted.count()).toBe(1);
  });
});


describeEachDatabase("acknowledged delivery", (db) => {
  const state = async (d: Database, actionId: string) => (await d.select().from(actions).where(eq(actions.id, actionId)))[0];
  const job = async (d: Database, jobId: string) => (await d.select().from(jobs).where(eq(jobs.id, jobId)))[0];

  it("a job handed to a long-poll the guest never answered ends not run (HOST_UNAVAILABLE, retryable), never unknown", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    const { jobId, actionId } = await insertJob(d, host.id, "queued");
    // The long-poll takes the job; its answer never reaches the guest (the link went down).
    expect((await nextJob(d, host.id, 0))?.id).toBe(jobId);
    // The host is then silent past every window.
    const past = sql`now() - interval '30 seconds'`;
    await d.execute(sql`update hosts set last_seen_at = ${past} where id = ${host.id}`);
    await d.execute(sql`update jobs set created_at = ${past}, claimed_at = ${past}, heartbeat_at = ${past} where id = ${jobId}`);
    const windows = { heartbeatLostMs: 2_000, claimWaitMs: 2_000, offerAckMs: 2_000 };
    for (let pass = 0; pass < 3; pass += 1) await sweepJobs(d, { windows });
    const ended = await state(d, actionId);
    expect(ended?.state).toBe("failed");
    expect((ended?.result as { error: { code: string; retryable: boolean } }).error).toMatchObject({ code: "HOST_UNAVAILABLE", retryable: true });
    expect((await job(d, jobId))?.state).toBe("cancelled");
  });

  it("an offer is the guest's only after its ack: acked once (a repeated ack is answered alike), then heartbeats renew it; another host's ack, an unoffered job and a re-queued offer are refused", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    const other = await insertHost(d);
    const { jobId } = await insertJob(d, host.id, "queued");
    await expect(ackJob(d, host.id, jobId)).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await nextJob(d, host.id, 0))?.id).toBe(jobId);
    expect((await job(d, jobId))?.state).toBe("offered");
    expect(await heartbeat(d, host.id, jobId)).toBe(false);
    await expect(ackJob(d, other.id, jobId)).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(ackJob(d, host.id, "not-a-uuid")).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await ackJob(d, host.id, jobId)).toEqual({ acked: true });
    expect(await ackJob(d, host.id, jobId)).toEqual({ acked: true });
    expect((await job(d, jobId))?.state).toBe("claimed");
    expect(await heartbeat(d, host.id, jobId)).toBe(true);

    // An offer left unacked past its bound goes back to the queue; its late ack is refused, the next long-poll gets it again.
    const second = await insertJob(d, host.id, "queued");
    expect((await nextJob(d, host.id, 0))?.id).toBe(second.jobId);
    await d.execute(sql`update jobs set claimed_at = now() - interval '10 seconds' where id = ${second.jobId}`);
    expect(await sweepJobs(d, { windows: { heartbeatLostMs: 60_000, claimWaitMs: 60_000, offerAckMs: 2_000 } })).toBe(0);
    expect((await job(d, second.jobId))?.state).toBe("queued");
    await expect(ackJob(d, host.id, second.jobId)).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await nextJob(d, host.id, 0))?.id).toBe(second.jobId);
    expect(await ackJob(d, host.id, second.jobId)).toEqual({ acked: true });
  });
});
