import { describe, expect, it } from "vitest";
import { decideCall, decisionPath, type DecisionInput } from "./decide";
import type { RiskLevel } from "./risk";

const LEVELS: RiskLevel[] = ["read_only", "low", "medium", "high", "critical"];

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

describe("decideCall (observe scope)", () => {
  const base: Omit<DecisionInput, "level"> = { observe: "any", observeCapable: true, writeLeaseRequested: false, reasons: [{ rule: "command.writes" }] };

  it("observe any runs every level above read_only under the observe scope on an observe-capable operation, critical and unanalysed text included", () => {
    for (const level of ["low", "medium", "high", "critical"] as const) expect(decideCall({ ...base, level })).toBe("observe_scope");
    expect(decideCall({ ...base, level: "high", reasons: [{ rule: "parse.error" }] })).toBe("observe_scope");
  });

  it("a read_only verdict stays auto_allow: it was judged read-only and the record says so", () => {
    expect(decideCall({ ...base, level: "read_only", reasons: [] })).toBe("auto_allow");
  });

  it("the judged scope (the default) decides exactly as the table does, at every level", () => {
    for (const level of LEVELS) {
      for (const observeCapable of [true, false]) {
        for (const writeLeaseRequested of [true, false]) {
          expect(decideCall({ level, reasons: base.reasons, observe: "judged", observeCapable, writeLeaseRequested })).toBe(decisionPath(level, base.reasons));
        }
      }
    }
  });

  it("an operation that cannot run under an observe lease (network, workspace writes) is decided by the table even with observe any", () => {
    for (const level of LEVELS) expect(decideCall({ ...base, level, observeCapable: false })).toBe(decisionPath(level, base.reasons));
  });

  it("a call asking for a write lease takes the judged path (rating, grant or hold)", () => {
    for (const level of LEVELS) expect(decideCall({ ...base, level, writeLeaseRequested: true })).toBe(decisionPath(level, base.reasons));
  });

  it("a call that mounts a host path rw takes the judged path even with observe any (the observe lease keeps only the workspace read-only)", () => {
    for (const level of LEVELS) expect(decideCall({ ...base, level, writesHostPaths: true })).toBe(decisionPath(level, base.reasons));
  });

  it("a rollback verdict (host_path.rollback) is held for a person at every level a grant could otherwise cover", () => {
    for (const level of ["low", "medium", "high"] as const) expect(decisionPath(level, [{ rule: "host_path.rollback" }])).toBe("hold");
  });
});
