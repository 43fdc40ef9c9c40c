/**
 * Capability readiness, measured from what hosts report — never assumed.
 *
 * States (docs/design.md#readiness):
 * - `declared`    a manifest exists, but no host reports a worker for it;
 * - `installed`   some host has the worker with a compatible ABI, but none is
 *                 ready (no or unpinned/mismatched content digest, worker
 *                 version differs from the manifest, self-test not passed);
 * - `ready`       every host that has the worker is ready on it;
 * - `degraded`    at least one host is ready, at least one other host that has
 *                 the worker is not (offline, incompatible, not verified);
 * - `unavailable` hosts that have the worker are all offline or their reports
 *                 are stale;
 * - `unsupported` hosts that have the worker cannot run it as declared: the
 *                 worker speaks another Capability API / Worker ABI, or the
 *                 kernel lacks a feature or the enforcement tier the policy
 *                 needs.
 *
 * Per host, a capability is `ready` only when the host is online with a fresh
 * report, reports the worker's content digest (matching the pinned digest
 * when one is configured: an operator's `pinnedDigests`, or the manifest's
 * `worker_digest`), the worker's capability_api, worker_abi and
 * version match the manifest, its self-test passed, and the host's tier and
 * probed kernel features cover the policy's needs. Hosts without the worker
 * do not count against a capability: not every host must run everything.
 *
 * Activation is not readiness: a disabled opt-in capability still has a
 * readiness; the registry reports both.
 */
import type { Manifest } from "./manifest-schema";
import {
  ENFORCEMENT_TIERS,
  kernelRequirementsFor,
  tierSatisfies,
  type HostEnforcementTier,
} from "../trust/kernel-requirements";

export const READINESS_STATES = ["declared", "installed", "ready", "degraded", "unavailable", "unsupported"] as const;
export type ReadinessState = (typeof READINESS_STATES)[number];
/** A host's own verdict for one capability; `degraded` only exists across hosts. */
export type HostReadinessState = Exclude<ReadinessState, "degraded">;

/** One worker as a guest agent reports it. */
export interface WorkerReport {
  capability: string;
  capability_api: number;
  worker_abi: number;
  version: string;
  /** "sha256:<64 hex>" of the worker's content, or null when the guest could not measure it. */
  digest: string | null;
  self_test: "pass" | "fail" | "not_run";
  /** Why the worker is not usable on the host, in the guest's words (e.g. its bundle is missing). */
  detail?: string;
}

/** What one host last told the hub (kept by whoever stores host health). */
export interface HostReport {
  host: string;
  online: boolean;
  /** ISO-8601 time of the report; staleness is judged against `ReadinessOptions.now`. */
  reported_at: string;
  /** The tier the guest's probe established, or null when it could establish none. */
  tier: HostEnforcementTier | null;
  /** Features the guest's start-up probe found working. */
  kernel_features: readonly string[];
  workers: readonly WorkerReport[];
}

export interface ReadinessOptions {
  /** The current time. When given, reports older than `maxReportAgeS` count as unavailable. */
  now?: Date;
  /** Default 120 s. */
  maxReportAgeS?: number;
  /** Content digests an operator pinned, by capability id. A different digest is not ready. */
  pinnedDigests?: Readonly<Record<string, string>>;
}

export interface HostReadiness {
  host: string;
  state: HostReadinessState;
  /** Why the state is not `ready` (empty when it is). Never contains secrets. */
  reasons: string[];
}

export interface CapabilityReadiness {
  capability: string;
  state: ReadinessState;
  /** Hosts that have a worker for this capability, sorted by name. */
  hosts: HostReadiness[];
}

const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;
const DEFAULT_MAX_REPORT_AGE_S = 120;

/** One host's readiness for one capability. Pure. */
export function computeHostReadiness(manifest: Manifest, report: HostReport, options: ReadinessOptions = {}): HostReadiness {
  const host = report.host;
  const workers = report.workers.filter((worker) => worker.capability === manifest.id);
  if (workers.length === 0) return { host, state: "declared", reasons: ["host reports no worker for this capability"] };
  if (workers.length > 1) return { host, state: "installed", reasons: ["host reports more than one worker for this capability"] };
  const worker = workers[0] as WorkerReport;

  if (!report.online) return { host, state: "unavailable", reasons: ["host is offline"] };
  if (options.now !== undefined) {
    const reportedAt = Date.parse(report.reported_at);
    const maxAgeMs = (options.maxReportAgeS ?? DEFAULT_MAX_REPORT_AGE_S) * 1000;
    if (!Number.isFinite(reportedAt)) return { host, state: "unavailable", reasons: ["host report has no valid time"] };
    if (options.now.getTime() - reportedAt > maxAgeMs) return { host, state: "unavailable", reasons: ["host report is stale"] };
  }

  const unsupported: string[] = [];
  if (worker.capability_api !== manifest.capability_api) {
    unsupported.push(`worker speaks capability_api ${worker.capability_api}, manifest needs ${manifest.capability_api}`);
  }
  if (worker.worker_abi !== manifest.worker_abi) {
    unsupported.push(`worker speaks worker_abi ${worker.worker_abi}, manifest needs ${manifest.worker_abi}`);
  }
  const needs = kernelRequirementsFor(manifest.sandbox.network);
  if (report.tier === null || !ENFORCEMENT_TIERS.includes(report.tier)) {
    unsupported.push("host established no enforcement tier");
  } else if (!tierSatisfies(report.tier, needs.min_tier)) {
    unsupported.push(`policy needs enforcement tier ${needs.min_tier} or stronger, host has tier ${report.tier}`);
  }
  const present = new Set(report.kernel_features);
  const missing = needs.kernel_features.filter((feature) => !present.has(feature));
  if (missing.length > 0) unsupported.push(`host kernel lacks: ${missing.join(", ")}`);
  if (unsupported.length > 0) return { host, state: "unsupported", reasons: unsupported };

  const notVerified: string[] = [];
  if (worker.version !== manifest.version) notVerified.push(`worker version ${worker.version} differs from manifest version ${manifest.version}`);
  if (worker.digest === null || !DIGEST_PATTERN.test(worker.digest)) {
    notVerified.push("worker content digest not reported");
  } else {
    // The manifest's own pin (a bundle capability's, filled by the hub from the bundle it ships) and
    // an operator's pin both hold: a host is ready only with exactly the pinned bytes.
    const pinned = options.pinnedDigests?.[manifest.id];
    if (pinned !== undefined && pinned !== worker.digest) notVerified.push("worker content digest does not match the pinned digest");
    if (manifest.worker_digest !== undefined && manifest.worker_digest !== worker.digest) {
      notVerified.push(`worker content digest ${worker.digest} differs from the manifest's ${manifest.worker_digest}`);
    }
  }
  if (worker.self_test !== "pass") notVerified.push(`worker self-test ${worker.self_test === "fail" ? "failed" : "not run"}`);
  if (notVerified.length > 0 && typeof worker.detail === "string" && worker.detail !== "") notVerified.push(`guest says: ${worker.detail.slice(0, 500)}`);
  if (notVerified.length > 0) return { host, state: "installed", reasons: notVerified };

  return { host, state: "ready", reasons: [] };
}

/**
 * A capability's readiness across every host report. Pure: same inputs, same
 * answer; it reads no clock unless given `options.now`.
 */
export function computeReadiness(
  manifest: Manifest,
  hostReports: readonly HostReport[],
  options: ReadinessOptions = {},
): CapabilityReadiness {
  const hosts = hostReports
    .map((report) => computeHostReadiness(manifest, report, options))
    .filter((host) => host.state !== "declared")
    .sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
  return { capability: manifest.id, state: aggregate(hosts), hosts };
}

function aggregate(hosts: readonly HostReadiness[]): ReadinessState {
  if (hosts.length === 0) return "declared";
  const ready = hosts.filter((host) => host.state === "ready").length;
  if (ready === hosts.length) return "ready";
  if (ready > 0) return "degraded";
  if (hosts.some((host) => host.state === "installed")) return "installed";
  if (hosts.some((host) => host.state === "unsupported")) return "unsupported";
  return "unavailable";
}

/** True when `host` can run the capability now; the pipeline refuses otherwise. */
export function isReadyOnHost(readiness: CapabilityReadiness, host: string): boolean {
  return readiness.hosts.some((entry) => entry.host === host && entry.state === "ready");
}

/**
 * docs/design.md#manifest: a `required` capability's failure degrades hub health. Anything
 * short of `ready` (including `degraded`, where some host cannot run it)
 * counts. `optional` and `opt-in` capabilities never degrade the hub.
 */
export function degradesHubHealth(manifest: Pick<Manifest, "activation">, readiness: Pick<CapabilityReadiness, "state">): boolean {
  return manifest.activation === "required" && readiness.state !== "ready";
}

export interface CapabilityHealthSummary {
  status: "ok" | "degraded";
  /** Required capabilities that are not ready, by id. */
  degraded_by: { capability: string; state: ReadinessState }[];
}

/** Folds readiness into the hub-health verdict for the health endpoint. */
export function summariseCapabilityHealth(
  entries: readonly { manifest: Pick<Manifest, "id" | "activation">; readiness: Pick<CapabilityReadiness, "state"> }[],
): CapabilityHealthSummary {
  const degradedBy = entries
    .filter((entry) => degradesHubHealth(entry.manifest, entry.readiness))
    .map((entry) => ({ capability: entry.manifest.id, state: entry.readiness.state }));
  return { status: degradedBy.length === 0 ? "ok" : "degraded", degraded_by: degradedBy };
}
