import { describe, expect, it } from "vitest";
import { actionTopic, hasWaiter, jobTopic, sleepUntilWoken, subscribeTopic, wake } from "./wake";

async function woken(sleepers: Array<Promise<"woken" | "slept">>): Promise<number> {
  const settled = await Promise.all(sleepers);
  return settled.filter((s) => s === "woken").length;
}

function sleeper(topic: string, ms: number): Promise<"woken" | "slept"> {
  const started = Date.now();
  return sleepUntilWoken(topic, ms).then(() => (Date.now() - started < ms - 20 ? "woken" : "slept"));
}

describe("in-process wake-ups", () => {
  it("a queued job wakes exactly one of the host's waiting long-polls (one claim per job, not one per waiter)", async () => {
    const topic = jobTopic("00000000-0000-4000-8000-000000000001");
    const sleepers = [sleeper(topic, 400), sleeper(topic, 400), sleeper(topic, 400)];
    wake(topic);
    expect(await woken(sleepers)).toBe(1);
  });

  it("two queued jobs wake two different waiters", async () => {
    const topic = jobTopic("00000000-0000-4000-8000-000000000002");
    const sleepers = [sleeper(topic, 400), sleeper(topic, 400), sleeper(topic, 400)];
    wake(topic);
    wake(topic);
    expect(await woken(sleepers)).toBe(2);
  });

  it("a finished action wakes every caller waiting on it", async () => {
    const topic = actionTopic("00000000-0000-4000-8000-000000000003");
    const sleepers = [sleeper(topic, 400), sleeper(topic, 400)];
    wake(topic);
    expect(await woken(sleepers)).toBe(2);
  });

  it("a standing subscription keeps a wake-up that came while its holder was busy, for its next wait only; closed, it is no waiter", async () => {
    const topic = actionTopic("00000000-0000-4000-8000-000000000004");
    const subscription = subscribeTopic(topic);
    expect(hasWaiter(topic)).toBe(true); // a waiter while not sleeping, too
    wake(topic); // while the holder is "busy" (not in wait)
    let started = Date.now();
    await subscription.wait(2_000);
    expect(Date.now() - started).toBeLessThan(500);
    started = Date.now();
    await subscription.wait(150); // consumed: this one sleeps its time
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    started = Date.now();
    setTimeout(() => wake(topic), 30);
    await subscription.wait(2_000); // woken while waiting
    expect(Date.now() - started).toBeLessThan(1_000);
    subscription.close();
    expect(hasWaiter(topic)).toBe(false);
  });

  it("a subscription's wait ends when its signal aborts", async () => {
    const subscription = subscribeTopic(actionTopic("00000000-0000-4000-8000-000000000005"));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const started = Date.now();
    await subscription.wait(2_000, controller.signal);
    expect(Date.now() - started).toBeLessThan(1_000);
    subscription.close();
  });

  it("two jobs queued at once wake two standing job-topic subscriptions, and one asleep is preferred to one busy", async () => {
    const topic = jobTopic("00000000-0000-4000-8000-000000000006");
    const a = subscribeTopic(topic);
    const b = subscribeTopic(topic);
    const waits = [a.wait(1_000), b.wait(1_000)];
    wake(topic);
    wake(topic);
    expect(await Promise.all(waits)).toEqual([true, true]);

    // `a` is busy (not waiting), `b` sleeps: the wake-up goes to `b`, and `a` keeps nothing.
    const bWait = b.wait(1_000);
    wake(topic);
    expect(await bWait).toBe(true);
    expect(await a.wait(50)).toBe(false);
    a.close();
    b.close();
  });
});

