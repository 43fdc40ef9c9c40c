import { describe, expect, it } from "vitest";
import { RISK_LEVELS, RiskLevelSchema, compareRisk, isAtLeast, maxRisk } from "./levels";

describe("risk levels", () => {
  it("are ordered read_only < low < medium < high < critical", () => {
    for (let i = 1; i < RISK_LEVELS.length; i++) expect(compareRisk(RISK_LEVELS[i - 1]!, RISK_LEVELS[i]!)).toBeLessThan(0);
    expect(compareRisk("high", "high")).toBe(0);
  });

  it("maxRisk picks the riskiest and defaults to read_only", () => {
    expect(maxRisk()).toBe("read_only");
    expect(maxRisk("low", "critical", "medium")).toBe("critical");
    expect(isAtLeast("high", "medium")).toBe(true);
    expect(isAtLeast("low", "medium")).toBe(false);
  });

  it("the zod schema accepts exactly the five levels", () => {
    for (const l of RISK_LEVELS) expect(RiskLevelSchema.parse(l)).toBe(l);
    expect(RiskLevelSchema.safeParse("severe").success).toBe(false);
    expect(RiskLevelSchema.safeParse("READ_ONLY").success).toBe(false);
  });
});
