/**
 * The sweep of lease cgroups left behind by launches whose process died
 * (native/src/cgroup_sweep.c), and the one run before this process's first
 * launch.
 */
import { loadAddon } from "./addon";

export interface SweepResult {
  /** stale leases (left by dead launches) whose every cgroup directory was removed */
  removed: number;
  /** processes found inside stale leases and SIGKILLed */
  killed: number;
  /** leases left alone: live launches of this process, leases whose owner process is alive,
   * and `leasehold/` children not named by our scheme (or of another pid namespace) */
  untouched: { live_own: number; live_other: number; foreign: number };
  /** stale leases (or parts) that could not be emptied or removed, with the reason */
  failures: { path: string; reason: string }[];
}

/**
 * Finds lease cgroups left behind by launches whose process died (in every
 * hierarchy: v1 memory/pids/cpu and the cgroup2 mount), kills anything still
 * inside, verifies them empty and removes them. A lease directory is named
 * `lh.<pidns>.<pid>.<starttime>.<lease id>` under a `leasehold/` parent; only
 * those whose owner process is gone (or this process's own leftovers from a
 * failed withdrawal) are touched. Synchronous; runs once automatically before
 * this process's first launch.
 */
export function sweepStaleLeases(): SweepResult {
  const r = loadAddon().sweepStaleLeases();
  return {
    removed: r.removed,
    killed: r.killed,
    untouched: { live_own: r.liveOwn, live_other: r.liveOther, foreign: r.foreign },
    failures: r.failures,
  };
}

/** `lh.<pidns>.<pid>.<starttime>.`: the name prefix of every lease cgroup this process creates. */
export function leaseCgroupPrefix(): string {
  return loadAddon().leaseOwnerPrefix();
}

let startupSweep: SweepResult | undefined;
/** The sweep run before this process's first launch (undefined until then). */
export function startupSweepResult(): SweepResult | undefined {
  return startupSweep;
}

/** Runs the sweep once, before this process's first launch; later calls return that first report. */
export function sweepBeforeFirstLaunch(): SweepResult {
  startupSweep ??= sweepStaleLeases();
  return startupSweep;
}
