import { describe, expect, it } from "vitest";
import { breakdown, countersPerCall, type TraceLine } from "./stage-breakdown";

const line = (id: string, stage: string, t: number, statements?: number): TraceLine => ({ id, stage, t, pid: 1, ...(statements === undefined ? {} : { counters: { statements, transactions: 0 } }) });

describe("stage breakdown", () => {
  it("each stage's delta is its timestamp minus the previous stage's, per call; a repeated stage counts at its first time; other calls are ignored", () => {
    const trace = [
      line("a", "hub.start", 1010, 0),
      line("a", "hub.assessed", 1012, 2),
      line("a", "hub.decided", 1020, 9),
      line("a", "hub.decided", 1090, 20),
      line("b", "hub.start", 5000),
      line("other", "hub.start", 1),
    ];
    const rows = breakdown(trace, new Map([["a", { sent: 1000, received: 1100 }], ["b", { sent: 4990, received: 5100 }]]));
    const row = (stage: string) => rows.find((r) => r.stage === stage);
    expect(row("hub.start")).toMatchObject({ n: 2, p50: 10 });
    expect(row("hub.assessed")).toMatchObject({ n: 1, p50: 2, statements: 2 });
    expect(row("hub.decided")).toMatchObject({ n: 1, p50: 8, statements: 7 });
    // client.received follows hub.receipt, which neither call recorded.
    expect(row("client.received")?.n).toBe(0);
  });

  it("counters per call come from the hub's receipt lines of the calls measured", () => {
    const trace = [line("a", "hub.receipt", 1, 100), line("b", "hub.receipt", 2, 130), line("c", "hub.receipt", 3, 190), line("x", "hub.receipt", 4, 900)];
    expect(countersPerCall(trace, new Set(["a", "b", "c"]))?.statements).toBe(45);
  });
});
