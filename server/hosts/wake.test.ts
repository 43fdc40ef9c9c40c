import { describe, expect, it } from "vitest";
import { actionTopic, jobTopic, sleepUntilWoken, wake } from "./wake";

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
});
