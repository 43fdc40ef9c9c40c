/**
 * Host paths around one job (docs/design.md#sandbox, docs/design.md#snapshots):
 * the compiled policy's labels checked against the ceiling, each "rw" label
 * probed for an idmapped bind, held against other writers on this guest
 * (HOST_BUSY), its tree bounded and snapshotted before the job may change
 * it, and digested again after (what the job changed stored as blobs on
 * the way); and the `rollback` operation, which puts a snapshot back.
 */
import path from "node:path";
import { probeIdmappedMount } from "../../native/index";
import { LeaseholdError, RollbackArguments, type EvidenceMount, type HostPathEntry } from "../../server/trust";
import { grantedMounts, type GrantedHostPath, type HostCeiling } from "../ceiling/index";
import { DEFAULT_RETENTION, digestAfterJob, holdLabels, listSnapshots, manifestEntries, newestSnapshotOf, pruneSnapshots, readManifest, restoreSnapshot, takeSnapshot, type RestoreResult, type TreeBudget, type TreeEntry } from "../snapshots/index";
import type { VerifiedJob } from "./verify-job";

/** A label's tree budget when the ceiling names none: the workspace's defaults. */
export const DEFAULT_HOST_PATH_MAX_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_HOST_PATH_MAX_INODES = 100_000;

export function snapshotsPath(stateDir: string): string {
  return path.join(stateDir, "snapshots");
}

function entryOf(ceiling: HostCeiling, label: string): HostPathEntry {
  const entry = (ceiling.host_paths ?? []).find((h) => h.label === label);
  if (entry === undefined) throw new LeaseholdError("POLICY_REFUSED", `host ceiling (guest check): ${label} is not a host path label of the host ceiling; nothing was run`, { tier: "guest", details: { field: "mounts", label } });
  return entry;
}

export function budgetOf(entry: HostPathEntry): TreeBudget {
  return { max_bytes: entry.max_bytes ?? DEFAULT_HOST_PATH_MAX_BYTES, max_inodes: entry.max_inodes ?? DEFAULT_HOST_PATH_MAX_INODES };
}

export interface PreparedMounts {
  /** What the sandbox policy's `host_paths` gets. */
  granted: GrantedHostPath[];
  /** After the job: each mount for the evidence, "rw" ones with the tree digest after (absent, with a limitation, when it could not be taken). */
  finish(): { mounts: EvidenceMount[]; limitations: string[] };
  release(): void;
}

/**
 * Before a launch: POLICY_REFUSED for a label beyond the ceiling;
 * UNENFORCEABLE for "rw" where no idmapped bind can be made or no snapshot
 * store is configured; HOST_BUSY when another job holds an "rw" label; a
 * tree over its budget POLICY_REFUSED — all before anything runs. `bind`
 * false: nothing is bound into a sandbox (the idmapping is not probed). Then one
 * snapshot per "rw" label, pruned to the retention afterwards.
 */
export function prepareMounts(job: Pick<VerifiedJob, "job_id" | "policy">, ctx: { ceiling: HostCeiling; snapshotsDir?: string | undefined }, options: { bind: boolean } = { bind: true }): PreparedMounts {
  const granted = grantedMounts(job.policy.mounts, ctx.ceiling);
  const rw = granted.filter((g) => g.mode === "rw");
  if (rw.length > 0 && ctx.snapshotsDir === undefined) {
    throw new LeaseholdError("UNENFORCEABLE", "a read-write host path needs the guest's snapshot store, and this guest has none configured; nothing was run", { tier: "guest", details: { field: "mounts" } });
  }
  // A job that writes through the guest's own path check (fs_write to a label) binds nothing.
  for (const g of options.bind ? rw : []) {
    const probe = probeIdmappedMount(g.path);
    if (!probe.ok) throw new LeaseholdError("UNENFORCEABLE", `host path ${g.label} (${g.path}) cannot be bound read-write here: ${probe.reason}; nothing was run`, { tier: "guest", details: { field: "mounts", label: g.label } });
  }
  const release = holdLabels(rw.map((g) => g.label), job.job_id);
  const taken = new Map<string, { id: string; digest: `sha256:${string}`; budget: TreeBudget; entries: TreeEntry[] }>();
  try {
    for (const g of rw) {
      const budget = budgetOf(entryOf(ctx.ceiling, g.label));
      const snap = takeSnapshot(ctx.snapshotsDir as string, g.label, g.path, budget);
      taken.set(g.label, { id: snap.id, digest: snap.tree_digest as `sha256:${string}`, budget, entries: manifestEntries(snap) });
    }
    if (rw.length > 0) pruneSnapshots(ctx.snapshotsDir as string, retentionOf(ctx.ceiling));
  } catch (error) {
    release();
    throw error;
  }
  return {
    granted,
    release,
    finish: () => {
      const limitations: string[] = [];
      const mounts = granted.map((g): EvidenceMount => {
        const t = taken.get(g.label);
        if (t === undefined) return { label: g.label, path: g.path, mode: g.mode };
        const out: EvidenceMount = { label: g.label, path: g.path, mode: g.mode, tree_before: t.digest, snapshot_id: t.id };
        try {
          // Files the job changed are read here once, and stored as blobs on the way, so the label's next snapshot reads none.
          out.tree_after = digestAfterJob(ctx.snapshotsDir as string, g.label, g.path, t.budget, t.entries);
        } catch (error) {
          limitations.push(`host path ${g.label}: tree digest after the job not taken (${error instanceof Error ? error.message : String(error)})`);
        }
        return out;
      });
      return { mounts, limitations };
    },
  };
}

export function retentionOf(ceiling: HostCeiling) {
  return { ...DEFAULT_RETENTION, ...(ceiling.snapshots ?? {}) };
}

/** The `rollback` operation's outcome, before evidence is built around it. */
export interface RollbackOutcome {
  structured: Record<string, unknown>;
  mount: EvidenceMount;
  restored: RestoreResult;
  /** Removes the tree the restore swapped out (root's, 0700, beside the label): run once the result is delivered. */
  afterDelivery: () => void;
}

/**
 * Restores one snapshot into its label's tree. The label must be asked "rw"
 * by the signed policy and listed "rw" by the ceiling; the tree as it is
 * now is snapshotted first (so a rollback can be rolled back); the label is
 * held for the length (HOST_BUSY to another writer).
 */
export function runRollback(job: Pick<VerifiedJob, "job_id" | "policy" | "arguments">, ctx: { ceiling: HostCeiling; snapshotsDir?: string | undefined }): RollbackOutcome {
  // The prepared action may still name its host and idempotency key; the operation's own arguments are the rest.
  const { host: _host, idempotency_key: _key, ...own } = job.arguments;
  const args = RollbackArguments.safeParse(own);
  if (!args.success) throw new LeaseholdError("INVALID_ARGUMENT", `rollback: ${args.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`, { tier: "guest" });
  const { label, snapshot_id } = args.data;
  const granted = grantedMounts(job.policy.mounts, ctx.ceiling);
  const g = granted.find((m) => m.label === label);
  if (g === undefined || g.mode !== "rw") {
    throw new LeaseholdError("POLICY_REFUSED", `rollback of ${label}: the signed policy does not give ${label} read-write; nothing was changed`, { tier: "guest", details: { field: "mounts", label } });
  }
  if (ctx.snapshotsDir === undefined) throw new LeaseholdError("UNENFORCEABLE", "rollback needs the guest's snapshot store, and this guest has none configured", { tier: "guest" });
  const store = ctx.snapshotsDir;
  const manifest = readManifest(store, snapshot_id);
  if (manifest.label !== label) throw new LeaseholdError("POLICY_REFUSED", `snapshot ${snapshot_id} is of label ${manifest.label}, not ${label}; nothing was changed`, { tier: "guest", details: { label, snapshot_id } });
  const budget = budgetOf(entryOf(ctx.ceiling, label));
  const release = holdLabels([label], job.job_id);
  try {
    const undo = takeSnapshot(store, label, g.path, budget);
    // The old tree's removal (an unlink per entry) waits until the result is delivered: nothing reads it,
    // and it is root's alone from the swap on.
    let removeOld = () => {};
    const restored = restoreSnapshot(store, manifest, g.path, budget, { deferRemoval: (remove) => (removeOld = remove) });
    pruneSnapshots(store, retentionOf(ctx.ceiling));
    return {
      restored,
      afterDelivery: () => removeOld(),
      mount: { label, path: g.path, mode: "rw", tree_before: undo.tree_digest, tree_after: restored.tree_digest, snapshot_id: undo.id },
      structured: {
        label,
        snapshot_id,
        tree_digest: restored.tree_digest,
        snapshot_tree_digest: manifest.tree_digest,
        identical: restored.identical,
        not_restored: restored.not_restored,
        atomic: restored.atomic,
        undo_snapshot_id: undo.id,
      },
    };
  } finally {
    release();
  }
}

/** One label's baseline: the snapshot taken, the reason none was needed, or why it could not be taken. */
export type BaselineOutcome = { label: string } & ({ taken: string; ms: number } | { kept: string } | { failed: string });

/**
 * Each "rw" label's baseline (docs/design.md#snapshots), taken when the guest
 * starts, before it takes a job: a full snapshot of the tree when the store
 * holds none of that label and path. The snapshot before each approved job
 * is still taken, always; with a baseline in the store it takes every file
 * unchanged since by its stamp (the blob stored already), so an approved job
 * waits for the files changed since, not the whole tree's. A label whose
 * baseline cannot be taken (over its budget, missing) is reported and left:
 * its jobs meet the same refusal before they run (a store that cannot be
 * made fails each label the same way; the guest still starts). Labels are
 * held while their baseline is taken, as for a job.
 */
export function takeBaselines(ceiling: HostCeiling, snapshotsDir: string): BaselineOutcome[] {
  const out: BaselineOutcome[] = [];
  const rw = (ceiling.host_paths ?? []).filter((h) => h.mode === "rw");
  for (const entry of rw) {
    let release: (() => void) | undefined;
    try {
      const have = newestSnapshotOf(snapshotsDir, entry.label, entry.path);
      if (have !== undefined) {
        out.push({ label: entry.label, kept: have });
        continue;
      }
      release = holdLabels([entry.label], `baseline:${entry.label}`);
      const started = performance.now();
      const snap = takeSnapshot(snapshotsDir, entry.label, entry.path, budgetOf(entry));
      pruneSnapshots(snapshotsDir, retentionOf(ceiling));
      out.push({ label: entry.label, taken: snap.id, ms: performance.now() - started });
    } catch (error) {
      out.push({ label: entry.label, failed: error instanceof Error ? error.message : String(error) });
    } finally {
      release?.();
    }
  }
  return out;
}

/** The retained snapshots for the health report (none when the store does not exist yet). */
export function reportedSnapshots(snapshotsDir: string | undefined) {
  return snapshotsDir === undefined ? [] : listSnapshots(snapshotsDir);
}
