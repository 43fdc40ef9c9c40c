import { expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import { insertHost, insertJob } from "../../test/pipeline/support";
import { requestStop, watchForStop } from "./stop";
import { actionTopic, wake } from "./wake";

describeEachDatabase("the guest's stop watch", (db) => {
  it("answers stop when the running job's stop is requested and announced: the wake-up answers, not the re-read or the end of the wait", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    const { jobId, actionId } = await insertJob(d, host.id, "claimed");
    // Neither the wait nor the re-read ends before the test's own 5 s timeout: only the wake-up can answer.
    const watching = watchForStop(d, host.id, jobId, 60_000, undefined, 60_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await requestStop(d, jobId)).toBe(true);
    wake(actionTopic(actionId));
    expect(await watching).toEqual({ alive: true, stop: true });
  });

  it("answers stop at once for a job already asked to stop, alive without stop when the wait runs out", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    const stopped = await insertJob(d, host.id, "claimed");
    await requestStop(d, stopped.jobId);
    expect(await watchForStop(d, host.id, stopped.jobId, 20_000)).toEqual({ alive: true, stop: true });
    const running = await insertJob(d, host.id, "claimed");
    expect(await watchForStop(d, host.id, running.jobId, 50)).toEqual({ alive: true });
  });

  it("hostile: another host's job, a job not running and a malformed id are not alive, answered without waiting out the 20 s asked", async () => {
    const d = db().handle.db;
    const owner = await insertHost(d);
    const other = await insertHost(d);
    const claimed = await insertJob(d, owner.id, "claimed");
    const queued = await insertJob(d, owner.id, "queued");
    const done = await insertJob(d, owner.id, "completed");
    expect(await watchForStop(d, other.id, claimed.jobId, 20_000)).toEqual({ alive: false });
    expect(await watchForStop(d, owner.id, queued.jobId, 20_000)).toEqual({ alive: false });
    expect(await watchForStop(d, owner.id, done.jobId, 20_000)).toEqual({ alive: false });
    expect(await watchForStop(d, owner.id, "not-a-uuid", 20_000)).toEqual({ alive: false });
  });
});
