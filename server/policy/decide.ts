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

export function decisionPath(level: RiskLevel): DecisionPath {
  return DECISIONS[level];
}
