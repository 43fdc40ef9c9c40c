/* SPDX-License-Identifier: UNLICENSED */
/* The lease's cgroups, host side (runs in an agent thread; no shared state).
 * v1 memory/pids/cpu where the controllers live in v1 (these hosts), nested
 * under the agent's own cgroups, plus a controller-less cgroup v2 directory
 * whose inode is the lease's cgroup id (the BPF programs key on it). */
#ifndef LEASEHOLD_CGROUP_H
#define LEASEHOLD_CGROUP_H
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

struct lh_cgroup_limits {
  uint64_t memory_bytes;
  uint64_t pids_max;
  uint64_t cpu_quota_us;
  uint64_t cpu_period_us;
};

/* Lease directory names: "lh.<pidns inode>.<owner pid>.<owner start time>.<lease id>",
 * always inside a parent named "leasehold". The owner triple lets a later
 * process tell a dead launch's leftovers from a live launch of another
 * process (see lh_cgroup_sweep). */
#define LH_CG_PREFIX "lh."

/* v1: memory/pids/cpu in v1 hierarchies + a controller-less v2 identity dir.
 * v2: memory/pids/cpu all in the lease's v2 directory (the identity dir). */
enum { LH_CG_V1 = 1, LH_CG_V2 = 2 };

struct lh_cgroup {
  char name[192];                    /* lease directory name (same in every hierarchy) */
  int registered;                    /* in this process's live-lease set */
  char memory[PATH_MAX];
  char pids[PATH_MAX];
  char cpu[PATH_MAX];
  char v2[PATH_MAX];
  uint64_t v2_id;
  struct lh_cgroup_limits readback; /* read from the kernel files after writing */
  uint64_t memsw_readback;           /* 0 when memsw accounting is absent */
  int created;                       /* bitmask of the directories we made */
  int mode;                          /* LH_CG_V1 or LH_CG_V2: where memory/pids/cpu are enforced */
};

/* Counters read after the run, indexed by LH_STAT_*. A counter that could
 * not be read has err[i] set (a positive errno: ENOENT = the file does not
 * exist on this kernel, ENODATA = no such line in it, EINVAL = not a number,
 * EIO = the read failed) and value[i] 0, which then means nothing: it is reported as
 * unknown, never as a measured 0 (an unread OOM counter is not "no OOM
 * kill"). file[i] and key[i] (NULL: the whole file) say where it comes from. */
enum {
  LH_STAT_OOM_KILL, LH_STAT_UNDER_OOM, LH_STAT_MEMORY_FAILCNT, LH_STAT_MEMORY_MAX_USAGE,
  LH_STAT_PIDS_EVENTS_MAX, LH_STAT_PIDS_PEAK, LH_STAT_CPU_NR_PERIODS, LH_STAT_CPU_NR_THROTTLED,
  LH_STAT_CPU_THROTTLED_NS, LH_STAT_COUNT
};
struct lh_cgroup_stats {
  uint64_t value[LH_STAT_COUNT];
  int err[LH_STAT_COUNT];
  const char *file[LH_STAT_COUNT]; /* static strings */
  const char *key[LH_STAT_COUNT];
};

/* "lh.<pidns>.<pid>.<starttime>." of this process: every lease it creates starts with it. */
const char *lh_cgroup_owner_prefix(void);

/* Which hierarchy this host's lease would use: LH_CG_V2 when memory, pids
 * and cpu are all available to this process's cgroup2 directory
 * (cgroup.controllers), else LH_CG_V1 when all three v1 hierarchies and a
 * cgroup2 mount exist, else -EOPNOTSUPP with `why` filled. */
int lh_cgroup_mode(char *why, size_t whylen);

/* Creates, writes limits, reads them back. 0, or -errno with `err` filled. */
int lh_cgroup_create(struct lh_cgroup *cg, const char *lease_id, const struct lh_cgroup_limits *lim, char *err,
                     size_t errlen);
/* Kills every process in the lease (cgroup.kill on the v2 directory). */
void lh_cgroup_kill(const struct lh_cgroup *cg);
/* `faults`: the test seam of lh_launch_request.fault_unreadable (NULL or ""
 * in production). */
void lh_cgroup_read_stats(const struct lh_cgroup *cg, struct lh_cgroup_stats *st, const char *faults);
/* Kill, wait until every hierarchy lists no process, remove the directories.
 * Sets *verified_empty and *removed. */
void lh_cgroup_withdraw(struct lh_cgroup *cg, int *verified_empty, int *removed);
/* Drops the lease from this process's live set (after withdrawal, whatever
 * its outcome: a lease that could not be removed is then a sweep candidate). */
void lh_cgroup_forget(struct lh_cgroup *cg);

#define LH_SWEEP_MAX_FAILURES 32
struct lh_sweep_failure {
  char path[PATH_MAX];
  char reason[160];
};
struct lh_sweep_report {
  unsigned removed;      /* stale leases whose every directory is gone */
  unsigned killed;       /* processes SIGKILLed (or cgroup.kill'ed) inside them */
  unsigned live_own;     /* leases of this process's live launches: untouched */
  unsigned live_other;   /* leases whose owner process is alive: untouched */
  unsigned foreign;      /* "leasehold/" children not named by our scheme, or of another pid namespace: untouched */
  unsigned n_failures;
  struct lh_sweep_failure failures[LH_SWEEP_MAX_FAILURES];
};
/* Finds lease cgroups left by dead launches in every hierarchy (v1 memory,
 * pids, cpu and the cgroup2 mount), kills what is still inside, verifies the
 * cgroups empty and removes them. Never touches a lease of a live launch of
 * this process, a lease whose owner process is alive, or anything not named
 * by our scheme under a "leasehold" parent. */
void lh_cgroup_sweep(struct lh_sweep_report *rep);
#ifdef __cplusplus
}
#endif
#endif
