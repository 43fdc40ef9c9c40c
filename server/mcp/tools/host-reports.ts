import { isNull } from "drizzle-orm";
import { ENFORCEMENT_TIERS, type HostEnforcementTier, type HostReport, type WorkerReport } from "../../capabilities";
import type { Database } from "../../db";
import { hosts } from "../../db/schema";

/** A host is online when its guest reported within this window. */
export const HOST_ONLINE_WINDOW_S = 120;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function workersOf(health: unknown): WorkerReport[] {
  if (!isRecord(health) || !Array.isArray(health.workers)) return [];
  return health.workers.filter(
    (w): w is WorkerReport =>
      isRecord(w) &&
      typeof w.capability === "string" &&
      typeof w.capability_api === "number" &&
      typeof w.worker_abi === "number" &&
      typeof w.version === "string" &&
      (w.digest === null || typeof w.digest === "string") &&
      (w.self_test === "pass" || w.self_test === "fail" || w.self_test === "not_run"),
  );
}

/**
 * Host reports as the guest agents last stored them in `hosts.health.report`
 * (server/hosts/health.ts `storeHealthReport`; the pipeline's readiness
 * check reads the same place). A guest that stopped accepting jobs reports
 * `online: false` there and is offline here too.
 * Anything malformed counts as absent — readiness is measured, never assumed,
 * so a report the hub cannot read makes a capability less ready, not more.
 */
export async function readHostReports(db: Database, now: Date): Promise<HostReport[]> {
  const rows = await db.select().from(hosts).where(isNull(hosts.removedAt)).orderBy(hosts.name);
  return rows.map((row) => {
    const lastSeen = row.lastSeenAt === null ? null : new Date(row.lastSeenAt);
    const tier = (ENFORCEMENT_TIERS as readonly string[]).includes(row.enforcementTier ?? "") ? (row.enforcementTier as HostEnforcementTier) : null;
    const health = row.health as unknown;
    const report = isRecord(health) && isRecord(health.report) ? health.report : undefined;
    const features = report !== undefined && Array.isArray(report.kernel_features) ? report.kernel_features.filter((f): f is string => typeof f === "string") : [];
    return {
      host: row.name,
      online: report?.online === true && lastSeen !== null && now.getTime() - lastSeen.getTime() <= HOST_ONLINE_WINDOW_S * 1000,
      reported_at: (lastSeen ?? new Date(0)).toISOString(),
      tier,
      kernel_features: features,
      workers: workersOf(report),
    };
  });
}

/** Hosts a token may see: all, or those named in its `--hosts` scope. */
export function hostVisible(hostsScope: readonly string[] | null, host: string): boolean {
  return hostsScope === null || hostsScope.includes(host);
}
