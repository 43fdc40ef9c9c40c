/**
 * Step 6: the default decision for a risk level (DESIGN.md "Policy").
 * `read_only` runs without a person; `low`..`high` need a matching grant or
 * an approval; `critical` always needs an approval and never a grant. No
 * configuration changes this table — it is part of the safety property.
 */
import type { RiskLevel } from "./risk";

export type DecisionPath = "auto_allow" | "grant_or_hold" | "hold";

const DECISIONS: Readonly<Record<RiskLevel, DecisionPath>> = {
  read_only: "auto_allow",
  low: "grant_or_hold",
  medium: "grant_or_hold",
  high: "grant_or_hold",
  critical: "hold",
};

/**
 * Verdicts whose text was not (wholly) analysed: the parse failed, or the
 * assessor stopped at its depth or time budget. Their level is a floor, not a
 * finding — 5,000 padding commands then `rm -rf /` rates high, not critical —
 * so no grant may stand in for a person on them.
 */
const UNANALYSED_RULES: ReadonlySet<string> = new Set(["parse.error", "parse.too-deep", "analysis.budget"]);

export function decisionPath(level: RiskLevel, reasons: ReadonlyArray<{ rule: string }> = []): DecisionPath {
  const path = DECISIONS[level];
  return path === "grant_or_hold" && reasons.some((r) => UNANALYSED_RULES.has(r.rule)) ? "hold" : path;
}
