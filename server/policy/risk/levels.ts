import { z } from "zod";

/**
 * Risk levels in ascending order. The order is the contract: docs/design.md#decision's
 * default decision (auto-allow, hold, never grantable) is keyed on it, so a
 * level is never inserted between two existing ones without revisiting every
 * grant ceiling stored in the database.
 */
export const RISK_LEVELS = ["read_only", "low", "medium", "high", "critical"] as const;

export type RiskLevel = (typeof RISK_LEVELS)[number];

export const RiskLevelSchema = z.enum(RISK_LEVELS);

const RANK: Readonly<Record<RiskLevel, number>> = {
  read_only: 0,
  low: 1,
  medium: 2,
  high: 3,
  critical: 4,
};

/** Negative when `a` is less risky than `b`, zero when equal, positive otherwise. */
export function compareRisk(a: RiskLevel, b: RiskLevel): number {
  return RANK[a] - RANK[b];
}

/** The riskiest of the given levels; `read_only` for none, so absence of findings never lowers. */
export function maxRisk(...levels: readonly RiskLevel[]): RiskLevel {
  let best: RiskLevel = "read_only";
  for (const level of levels) if (RANK[level] > RANK[best]) best = level;
  return best;
}

export function isAtLeast(level: RiskLevel, floor: RiskLevel): boolean {
  return RANK[level] >= RANK[floor];
}
