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

struct lh_cgroup {
  char memory[PATH_MAX];
  char pids[PATH_MAX];
  char cpu[PATH_MAX];
  char v2[PATH_MAX];
  uint64_t v2_id;
  struct lh_cgroup_limits readback; /* read from the kernel files after writing */
  uint64_t memsw_readback;           /* 0 when memsw accounting is absent */
  int created;                       /* bitmask of the directories we made */
};

struct lh_cgroup_stats {
  uint64_t oom_kill, under_oom, memory_failcnt, memory_max_usage;
  uint64_t pids_events_max, pids_peak_current;
  uint64_t cpu_nr_periods, cpu_nr_throttled, cpu_throttled_ns;
  uint64_t cpuacct_usage_ns;
};

/* Creates, writes limits, reads them back. 0, or -errno with `err` filled. */
int lh_cgroup_create(struct lh_cgroup *cg, const char *lease_id, const struct lh_cgroup_limits *lim, char *err,
                     size_t errlen);
/* Kills every process in the lease (cgroup.kill on the v2 directory). */
void lh_cgroup_kill(const struct lh_cgroup *cg);
void lh_cgroup_read_stats(const struct lh_cgroup *cg, struct lh_cgroup_stats *st);
/* Kill, wait until every hierarchy lists no process, remove the directories.
 * Sets *verified_empty and *removed. */
void lh_cgroup_withdraw(struct lh_cgroup *cg, int *verified_empty, int *removed);
#ifdef __cplusplus
}
#endif
#endif
