import { describe, expect, it } from "vitest";
import { decisionPath } from "./decide";

describe("decisionPath", () => {
  it("read_only runs, low..high may be granted, critical is always held", () => {
    expect(decisionPath("read_only")).toBe("auto_allow");
    for (const level of ["low", "medium", "high"] as const) expect(decisionPath(level, [{ rule: "command.deletes" }])).toBe("grant_or_hold");
    expect(decisionPath("critical")).toBe("hold");
  });
  it("a verdict whose text was not wholly analysed (parse error, too deep, out of budget) is never grantable", () => {
    for (const rule of ["parse.error", "parse.too-deep", "analysis.budget"]) {
      expect(decisionPath("high", [{ rule: "command.deletes" }, { rule }])).toBe("hold");
    }
  });
});
