/**
 * Host health as the guest reports it (`POST /api/agent/health`): its
 * enforcement tier, the kernel probe, each worker's digest and self-test,
 * and its witness state. Stored in `hosts.health` in the shape the
 * pipeline's readiness check (`hostReportReadiness`) reads — the hub never
 * decides readiness from anything else. `reported_at` is the hub's own
 * clock at receipt. A tier change is sealed (`host/1 tier_changed`).
 * A witness failure is kept and shown on hub health, loudly.
 */
import { isIP } from "node:net";
import { eq, isNull, sql } from "drizzle-orm";
import type { HostReport } from "../capabilities";
import { ENFORCEMENT_TIERS, KERNEL_FEATURES } from "../trust/kernel-requirements";
import type { Database } from "../db";
import { hosts } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { hashActor } from "../ledger/entry";
import type { AuthenticatedHost } from "./auth";
import { WorkspaceDirsReport, type GuestHealthReport, type HostCeilingSummary } from "../trust/protocol";
import { HostPathEntry, SnapshotSummary, HostPathsReport, MAX_REPORTED_SNAPSHOTS } from "../trust/host-paths";

export interface StoredHostHealth {
  report: HostReport;
  probe: Record<string, unknown>;
  witness: { size: number; failure: string | null };
  accepting_jobs: boolean;
  guest_version: string;
  /** The address the hub's server saw this report come from (see HEADER_PEER); null when unknown. */
  seen_from?: string | null;
  /** The host paths the guest's ceiling lists; null (or absent, in rows stored before) when the report listed none. */
  host_paths?: HostPathEntry[] | null;
  /** The guest's retained snapshots of "rw" labels, most recent first. */
  snapshots?: SnapshotSummary[];
  /** The workspace's directories as the guest last listed them while idle (docs/design.md#prechecks); absent when not reported. */
  workspace_dirs?: WorkspaceDirsReport;
}

function invalid(message: string): never {
  throw new LeaseholdError("INVALID_ARGUMENT", `health report: ${message}`, { tier: "hub" });
}

export function parseHealthReport(body: unknown): GuestHealthReport {
  const r = (body ?? {}) as Partial<GuestHealthReport>;
  if (r.tier !== null && !ENFORCEMENT_TIERS.includes(r.tier as never)) invalid("tier must be A, B, C or null");
  if (!Array.isArray(r.kernel_features) || r.kernel_features.some((f) => !(KERNEL_FEATURES as readonly string[]).includes(f))) invalid("unknown kernel feature");
  if (!Array.isArray(r.workers) || r.workers.length > 64) invalid("workers must be a list");
  for (const w of r.workers) {
    if (typeof w.capability !== "string" || typeof w.version !== "string" || !Number.isSafeInteger(w.capability_api) || !Number.isSafeInteger(w.worker_abi)) invalid("malformed worker");
    if (w.digest !== null && !/^sha256:[0-9a-f]{64}$/.test(w.digest)) invalid("worker digest must be sha256:<hex> or null");
    if (!["pass", "fail", "not_run"].includes(w.self_test)) invalid("self_test must be pass, fail or not_run");
    if (w.detail !== undefined && (typeof w.detail !== "string" || w.detail.length > 1000)) invalid("worker detail must be a string of at most 1000 characters");
  }
  if (typeof r.witness !== "object" || r.witness === null || !Number.isSafeInteger(r.witness.size)) invalid("witness must be {size, failure}");
  if (r.witness.failure !== null && typeof r.witness.failure !== "string") invalid("witness.failure must be a string or null");
  if (typeof r.accepting_jobs !== "boolean" || typeof r.guest_version !== "string") invalid("accepting_jobs and guest_version are required");
  if (typeof r.probe !== "object" || r.probe === null || JSON.stringify(r.probe).length > 16_384) invalid("probe must be a small object");
  if (r.host_paths !== undefined || r.snapshots !== undefined) {
    const parsed = HostPathsReport.safeParse({ host_paths: r.host_paths ?? [], snapshots: r.snapshots ?? [] });
    if (!parsed.success) invalid(`host_paths/snapshots: ${parsed.error.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`).join("; ").slice(0, 500)}`);
    const labels = parsed.data.host_paths.map((entry) => entry.label);
    if (new Set(labels).size !== labels.length) invalid("host_paths lists a label twice");
  }
  if (r.workspace_dirs !== undefined && !WorkspaceDirsReport.safeParse(r.workspace_dirs).success) invalid("workspace_dirs must be {after_job, complete, dirs}");
  return r as GuestHealthReport;
}

/** `::ffff:10.0.0.2` (an IPv4 peer on a dual-stack socket) → `10.0.0.2`; anything that is not an IP address → null. */
function peerAddress(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const address = value.startsWith("::ffff:") && isIP(value.slice(7)) === 4 ? value.slice(7) : value;
  return isIP(address) === 0 ? null : address;
}

export async function storeHealthReport(db: Database, host: AuthenticatedHost, body: unknown, seen: { peer?: string | null } = {}): Promise<void> {
  const r = parseHealthReport(body);
  const health: StoredHostHealth = {
    report: {
      host: host.name,
      // A guest that stopped taking jobs (failed witness check) is reported offline: nothing is dispatched to it.
      online: r.accepting_jobs,
      reported_at: new Date().toISOString(),
      tier: r.tier,
      kernel_features: r.kernel_features,
      workers: r.workers,
    },
    probe: r.probe,
    witness: { size: r.witness.size, failure: r.witness.failure === null ? null : r.witness.failure.slice(0, 1000) },
    accepting_jobs: r.accepting_jobs,
    guest_version: r.guest_version.slice(0, 64),
    seen_from: peerAddress(seen.peer),
    host_paths: r.host_paths === undefined ? null : r.host_paths,
    snapshots: r.snapshots ?? [],
    ...(r.workspace_dirs === undefined ? {} : { workspace_dirs: r.workspace_dirs }),
  };
  await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    const [before] = await tx.select({ tier: hosts.enforcementTier }).from(hosts).where(eq(hosts.id, host.id)).for("update");
    if (before !== undefined && before.tier !== r.tier && r.tier !== null) {
      await appendEntry(tx, {
        type: "host/1",
        time: new Date(),
        action_id: null,
        actor: hashActor("host", host.id),
        data: { event: "tier_changed", host_id: host.id, key_digest: null, tier: r.tier, ceiling_digest: null },
      });
    }
    await tx.update(hosts).set({ health, enforcementTier: r.tier, lastSeenAt: sql`now()` }).where(eq(hosts.id, host.id));
  });
}

const CEILING_FIELDS = ["workspace_max_bytes", "memory_bytes", "cpus", "pids", "timeout_ms", "output_bytes", "exec_dirs", "egress_rules"] as const;

/** The ceiling summary (the contract's `HostCeilingSummary`) in a stored probe, or null when absent or malformed (an older guest, or a report the hub cannot read). */
export function ceilingSummaryOf(probe: unknown): HostCeilingSummary | null {
  const c = (probe as { ceiling?: unknown } | null | undefined)?.ceiling;
  if (c === null || typeof c !== "object") return null;
  const out: Record<string, number> = {};
  for (const field of CEILING_FIELDS) {
    const value = (c as Record<string, unknown>)[field];
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return null;
    out[field] = value;
  }
  return out as unknown as HostCeilingSummary;
}

/** What a host reported of its host paths: null `host_paths` when it listed none. */
export interface HostPathsView {
  host_paths: HostPathEntry[] | null;
  snapshots: SnapshotSummary[];
}

/**
 * The host paths and snapshots in a stored health row, re-parsed (a row
 * stored by another hub version is not trusted to have today's shape): a
 * malformed list reads as none, which refuses every mount (fail closed).
 */
export function hostPathsOf(health: unknown): HostPathsView {
  const stored = (health ?? {}) as { host_paths?: unknown; snapshots?: unknown };
  const paths = stored.host_paths === undefined || stored.host_paths === null ? null : HostPathEntry.array().max(32).safeParse(stored.host_paths);
  const snapshots = SnapshotSummary.array().max(MAX_REPORTED_SNAPSHOTS).safeParse(stored.snapshots ?? []);
  return { host_paths: paths === null || !paths.success ? null : paths.data, snapshots: snapshots.success ? snapshots.data : [] };
}

/** The BPF loader's verdict as the guest reported it in its probe (agent-guest/daemon/health.ts, native bpfStatus()). */
export interface HostBpfSummary {
  /** hex SHA-256 of the BPF object that enforces the tier; null on tier C. */
  object_sha256: string | null;
  /** What was tried and why a stronger tier was refused. */
  detail: string;
}

/** The BPF summary in a stored probe, or null when absent or malformed (an older guest). */
export function bpfSummaryOf(probe: unknown): HostBpfSummary | null {
  const b = (probe as { bpf?: unknown } | null | undefined)?.bpf;
  if (b === null || typeof b !== "object") return null;
  const { object_sha256: sha, detail } = b as Record<string, unknown>;
  if (typeof detail !== "string" || detail.length > 4096) return null;
  if (sha !== null && (typeof sha !== "string" || !/^[0-9a-f]{64}$/.test(sha))) return null;
  return { object_sha256: sha, detail };
}

export interface HostSummary {
  name: string;
  online: boolean;
  tier: string | null;
  accepting_jobs: boolean;
  witness_failure: string | null;
  last_seen_at: string | null;
  /** Where the guest's last report came from, as the hub's server saw it (admin-facing only). */
  seen_from: string | null;
  /** The guest's version and its ceiling summary, from its last report (null when it never reported one). */
  guest_version: string | null;
  ceiling: HostCeilingSummary | null;
  /** The tier's BPF object and the loader's detail (null when the guest did not report them). */
  bpf: HostBpfSummary | null;
  /** The host paths its ceiling lists (null: none reported) and its recent snapshots. */
  host_paths: HostPathEntry[] | null;
  snapshots: SnapshotSummary[];
}

/** Every enrolled host with what its guest last said (for hub health and the CLI). */
export async function listHostSummaries(db: Database, now = Date.now()): Promise<HostSummary[]> {
  const rows = await db.select().from(hosts).where(isNull(hosts.removedAt)).orderBy(hosts.name);
  return rows.map((row) => {
    const health = row.health as Partial<StoredHostHealth>;
    const reportedAt = health.report ? Date.parse(health.report.reported_at) : NaN;
    return {
      name: row.name,
      online: health.report?.online === true && Number.isFinite(reportedAt) && now - reportedAt < 120_000,
      tier: row.enforcementTier,
      accepting_jobs: health.accepting_jobs ?? false,
      witness_failure: health.witness?.failure ?? null,
      last_seen_at: row.lastSeenAt?.toISOString() ?? null,
      seen_from: health.seen_from ?? null,
      guest_version: typeof health.guest_version === "string" ? health.guest_version : null,
      ceiling: ceilingSummaryOf(health.probe),
      bpf: bpfSummaryOf(health.probe),
      ...hostPathsOf(health),
    };
  });
}
