/**
 * The production readiness check: a capability is ready on a host only when
 * that host's stored report (`hosts.health.report`, written by its guest
 * agent) says so, per `computeHostReadiness`. Until guest agents report
 * (a later issue) every host is "not ready" and mutating and read-only
 * actions alike are refused with CAPABILITY_UNAVAILABLE — the honest answer,
 * not a silent "ready".
 */
import { eq } from "drizzle-orm";
import { computeHostReadiness, kernelRequirementsFor, tierSatisfies, type HostReport } from "../capabilities";
import type { Database } from "../db";
import { hosts } from "../db/schema";
import type { ReadinessCheck } from "./types";

function asReport(value: unknown): HostReport | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const report = (value as { report?: unknown }).report;
  if (report === null || typeof report !== "object") return undefined;
  const r = report as Partial<HostReport>;
  if (typeof r.host !== "string" || typeof r.online !== "boolean" || typeof r.reported_at !== "string" || !Array.isArray(r.workers) || !Array.isArray(r.kernel_features)) {
    return undefined;
  }
  return r as HostReport;
}

export function hostReportReadiness(db: Database): ReadinessCheck {
  return {
    async check({ manifest, host }) {
      const health = "health" in host ? host.health : (await db.select({ health: hosts.health }).from(hosts).where(eq(hosts.id, host.id)))[0]?.health;
      const report = asReport(health);
      if (report === undefined) return { ready: false, reason: `host ${host.name} has not reported its workers yet` };
      const readiness = computeHostReadiness(manifest, { ...report, host: host.name }, { now: new Date() });
      if (readiness.state === "ready") return { ready: true };
      // A host that runs a weaker tier than the policy needs can never run it as declared: that is
      // UNENFORCEABLE (docs/design.md#readiness), not a capability that may become available by waiting.
      const needs = kernelRequirementsFor(manifest.sandbox.network);
      const tooWeak = readiness.state === "unsupported" && report.tier !== null && !tierSatisfies(report.tier, needs.min_tier);
      return { ready: false, reason: `${manifest.id} is ${readiness.state} on ${host.name}: ${readiness.reasons.join("; ")}`, ...(tooWeak ? { unenforceable: true } : {}) };
    },
  };
}
