import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { HANDOFF_MAX_OUTPUT_BYTES, offerCompletion, takeCompletion } from "./handoff";
import type { StoredCompletion } from "./intake";
import { actionTopic, sleepUntilWoken, wake } from "./wake";

const completion = (jobId: string): StoredCompletion =>
  ({ state: "completed", job_id: jobId, evidence_entry_id: "7", envelope_digest: "sha256:00", envelope: {}, key_id: "k", structured: null, error: null }) as unknown as StoredCompletion;

/** Something in this process waiting on the action, as a caller's completion waiter does. */
function waitOn(actionId: string): () => void {
  const topic = actionTopic(actionId);
  void sleepUntilWoken(topic, 60_000);
  return () => wake(topic);
}

afterEach(() => {
  vi.useRealTimers();
});

describe("completion handoff", () => {
  it("hands a completion to this process's waiter once, with the output as given", () => {
    const id = randomUUID();
    const stop = waitOn(id);
    const output = { stdout: Buffer.from("hello\n") };
    offerCompletion(id, { completion: completion("j1"), output });
    stop();
    const handed = takeCompletion(id);
    expect(handed?.completion.job_id).toBe("j1");
    expect(handed?.output.stdout?.toString()).toBe("hello\n");
    expect(takeCompletion(id)).toBeUndefined();
  });

  it("keeps nothing when nobody here waits on the action (another replica's caller, or one that stopped)", () => {
    const id = randomUUID();
    offerCompletion(id, { completion: completion("j2"), output: {} });
    expect(takeCompletion(id)).toBeUndefined();
  });

  it("leaves large output to the database read", () => {
    const id = randomUUID();
    const stop = waitOn(id);
    offerCompletion(id, { completion: completion("j3"), output: { stdout: Buffer.alloc(HANDOFF_MAX_OUTPUT_BYTES + 1) } });
    stop();
    expect(takeCompletion(id)).toBeUndefined();
  });

  it("forgets an offer nobody took within 30 s, and holds at most 256", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const stale = randomUUID();
    let stop = waitOn(stale);
    offerCompletion(stale, { completion: completion("old"), output: {} });
    stop();
    vi.setSystemTime(Date.now() + 30_000);
    expect(takeCompletion(stale)).toBeUndefined();

    const ids = Array.from({ length: 300 }, () => randomUUID());
    for (const id of ids) {
      stop = waitOn(id);
      offerCompletion(id, { completion: completion(id), output: {} });
      stop();
    }
    const kept = ids.filter((id) => takeCompletion(id) !== undefined);
    expect(kept).toEqual(ids.slice(-256));
  });
});
