import { beforeAll, describe, expect, it } from "vitest";
import { assessShellRiskSync, initShellRisk } from "./assess";
import { CORPUS } from "./corpus";

beforeAll(async () => {
  await initShellRisk();
});

describe("risk corpus", () => {
  it("has at least 300 distinct entries", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(300);
    expect(new Set(CORPUS.map((c) => c.text)).size).toBe(CORPUS.length);
  });

  it.each(CORPUS.map((c) => [c.text, c] as const))("%j", (_label, entry) => {
    const verdict = assessShellRiskSync(entry.text);
    const rules = verdict.reasons.map((r) => r.rule);
    const summary = verdict.reasons.map((r) => `${r.level} ${r.rule} ${JSON.stringify(entry.text.slice(r.span.start, r.span.end))}`);
    expect({ level: verdict.level, missing: entry.rules.filter((r) => !rules.includes(r)) }, summary.join("\n")).toEqual({ level: entry.level, missing: [] });
    for (const r of verdict.reasons) {
      expect(r.span.start).toBeGreaterThanOrEqual(0);
      expect(r.span.end).toBeLessThanOrEqual(entry.text.length);
      expect(r.span.end).toBeGreaterThanOrEqual(r.span.start);
    }
    // The verdict is the maximum of its reasons, never more, never less.
    expect(verdict.reasons.some((r) => r.level === verdict.level)).toBe(true);
  });
});
