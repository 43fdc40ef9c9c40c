import { describe, expect, it } from "vitest";
import { decideSessionCap, type CapSession } from "./session-cap";

const NOW = 1_000_000;
const idle = (digest: string, lastUsedMs: number): CapSession => ({ digest, lastUsedMs, busyUntilMs: null });
const busy = (digest: string, lastUsedMs: number, busyUntilMs: number): CapSession => ({ digest, lastUsedMs, busyUntilMs });

describe("decideSessionCap", () => {
  it("under the cap there is room and nothing is closed", () => {
    expect(decideSessionCap([idle("a", 1)], 2, NOW)).toEqual({ kind: "room" });
    expect(decideSessionCap([], 1, NOW)).toEqual({ kind: "room" });
  });

  it("at the cap the least recently used idle session is closed, never a busy one even if older", () => {
    expect(decideSessionCap([idle("a", 30), idle("b", 10), idle("c", 20)], 3, NOW)).toEqual({ kind: "evict", digest: "b" });
    expect(decideSessionCap([busy("old", 1, NOW + 5_000), idle("b", 10), idle("c", 20)], 3, NOW)).toEqual({ kind: "evict", digest: "b" });
    // Over the cap (a lowered setting) it still frees one at a time.
    expect(decideSessionCap([idle("a", 5), idle("b", 4), idle("c", 3)], 2, NOW)).toEqual({ kind: "evict", digest: "c" });
  });

  it("equal last use: the choice is stable (lowest digest), so racing processes pick the same one", () => {
    expect(decideSessionCap([idle("z", 7), idle("m", 7)], 2, NOW)).toEqual({ kind: "evict", digest: "m" });
  });

  it("all busy: a wait of the soonest moment one can become idle, rounded up, at least 1 s", () => {
    expect(decideSessionCap([busy("a", 1, NOW + 42_100), busy("b", 2, NOW + 17_001)], 2, NOW)).toEqual({ kind: "wait", retryAfterS: 18, busy: 2 });
    expect(decideSessionCap([busy("a", 1, NOW - 5)], 1, NOW)).toEqual({ kind: "wait", retryAfterS: 1, busy: 1 });
  });
});
