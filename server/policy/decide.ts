/**
 * Step 6: the default decision for a risk level (docs/design.md#decision).
 * `read_only` runs without a person; `low`..`high` need a matching grant or
 * an approval; `critical` always needs an approval and never a grant. No
 * configuration changes this table — it is part of the safety property.
 *
 * One opt-in changes where the line is drawn, never the rating: a caller
 * whose observe scope is `any` (a token or OAuth grant made with it) runs a
 * call to an operation that can run under an observe lease at once, under
 * that lease, whatever its level (`observe_scope`). The kernel, not the
 * verdict, is then what keeps the call harmless: the workspace is mounted
 * read-only, /tmp is thrown away, there is no network and the cgroup limits
 * hold. Anything that needs the workspace writable or the network is outside
 * it and decided by the table as before.
 */
import type { RiskLevel } from "./risk";
import { ROLLBACK_RULE } from "./risk/host-paths";

export type DecisionPath = "auto_allow" | "observe_scope" | "grant_or_hold" | "hold";

/** A caller's observe scope: `judged` (every call rated, the default) or `any` (sandbox-first). */
export type ObserveScope = "judged" | "any";
export const OBSERVE_SCOPES: readonly ObserveScope[] = ["judged", "any"];

const DECISIONS: Readonly<Record<RiskLevel, Exclude<DecisionPath, "observe_scope">>> = {
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

/**
 * Verdicts a person must decide whatever grants exist: a rollback replaces a
 * host path's tree with an older one (docs/design.md#host-paths).
 */
const PERSON_ONLY_RULES: ReadonlySet<string> = new Set([ROLLBACK_RULE]);

/** The table's decision for a verdict, with no observe scope. */
export function decisionPath(level: RiskLevel, reasons: ReadonlyArray<{ rule: string }> = []): Exclude<DecisionPath, "observe_scope"> {
  const path = DECISIONS[level];
  return path === "grant_or_hold" && reasons.some((r) => UNANALYSED_RULES.has(r.rule) || PERSON_ONLY_RULES.has(r.rule)) ? "hold" : path;
}

export interface DecisionInput {
  level: RiskLevel;
  reasons?: ReadonlyArray<{ rule: string }>;
  /** The caller's observe scope; an admin in the console is `judged`. */
  observe: ObserveScope;
  /**
   * The operation declares that it can run under an observe lease (manifest
   * `observe_scope: true`: a launched workload with no network, which the
   * guest runs with the workspace read-only when the lease is `observe`).
   */
  observeCapable: boolean;
  /** The call asked for a write lease (`lease: "write"`): the judged path, writes kept. */
  writeLeaseRequested: boolean;
  /**
   * The call mounts a host path read-write. The observe lease keeps the
   * workspace read-only, not a rw host path, so such a call is always judged.
   */
  writesHostPaths?: boolean;
}

/**
 * The decision path for one call. `observe_scope` only replaces a path that
 * would need a grant or a person; a verdict the table already allows keeps
 * `auto_allow` (it was judged read-only and says so).
 */
export function decideCall(input: DecisionInput): DecisionPath {
  const judged = decisionPath(input.level, input.reasons);
  if (judged === "auto_allow") return judged;
  if (input.observe === "any" && input.observeCapable && !input.writeLeaseRequested && input.writesHostPaths !== true) return "observe_scope";
  return judged;
}
