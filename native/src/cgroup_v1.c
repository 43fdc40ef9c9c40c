/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
/* The v1 controller path: memory (nested under the agent's memcg), pids
 * and cpu in their v1 hierarchies, plus a controller-less cgroup2
 * directory whose inode is the lease's cgroup id. */
#include "cgroup_internal.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* <mount><our own path in that hierarchy>/leasehold/<name>. */
static int make_lease_dir(const char *mount, const char *controller, const char *name, char *out, size_t cap,
                          char *err, size_t errlen) {
  char own[PATH_MAX], base[PATH_MAX];
  struct stat st;
  if (!mount || stat(mount, &st) < 0) {
    snprintf(err, errlen, "cgroup hierarchy %s is not mounted", mount ? mount : "cgroup2");
    return -ENOENT;
  }
  int rc = lh_cg_own_cgroup_path(controller, own, sizeof own);
  if (rc < 0) {
    snprintf(err, errlen, "no %s entry in /proc/self/cgroup", *controller ? controller : "cgroup2");
    return rc;
  }
  if (!strcmp(own, "/")) own[0] = 0;
  snprintf(base, sizeof base, "%s%s", mount, own);
  return lh_cg_make_lease_dir_in(base, name, out, cap, err, errlen);
}

int lh_cg_create_v1(struct lh_cgroup *cg, const struct lh_cgroup_limits *lim, char *err, size_t errlen) {
  char val[64];
  int rc;
  const char *lease_id = cg->name;
  if ((rc = make_lease_dir(CG_ROOT "/memory", "memory", lease_id, cg->memory, sizeof cg->memory, err, errlen)) < 0)
    return rc;
  cg->created |= MADE_MEMORY;
  if ((rc = make_lease_dir(CG_ROOT "/pids", "pids", lease_id, cg->pids, sizeof cg->pids, err, errlen)) < 0) return rc;
  cg->created |= MADE_PIDS;
  if ((rc = make_lease_dir(CG_ROOT "/cpu", "cpu", lease_id, cg->cpu, sizeof cg->cpu, err, errlen)) < 0) return rc;
  cg->created |= MADE_CPU;
  if ((rc = make_lease_dir(lh_cg_v2_mount(), "", lease_id, cg->v2, sizeof cg->v2, err, errlen)) < 0) return rc;
  cg->created |= MADE_V2;
  struct stat st;
  if (stat(cg->v2, &st) < 0) { rc = -errno; snprintf(err, errlen, "stat %s", cg->v2); return rc; }
  cg->v2_id = (uint64_t)st.st_ino;

  snprintf(val, sizeof val, "%llu", (unsigned long long)lim->memory_bytes);
  WRITE_OR_FAIL(cg->memory, "memory.limit_in_bytes", val);
  /* With swap accounting, cap memory+swap at the same value so the limit
   * cannot be sidestepped by swapping. */
  if (lh_cg_write(cg->memory, "memory.memsw.limit_in_bytes", val) == 0)
    lh_cg_read_u64(cg->memory, "memory.memsw.limit_in_bytes", &cg->memsw_readback);
  snprintf(val, sizeof val, "%llu", (unsigned long long)lim->pids_max);
  WRITE_OR_FAIL(cg->pids, "pids.max", val);
  snprintf(val, sizeof val, "%llu", (unsigned long long)lim->cpu_period_us);
  WRITE_OR_FAIL(cg->cpu, "cpu.cfs_period_us", val);
  snprintf(val, sizeof val, "%llu", (unsigned long long)lim->cpu_quota_us);
  WRITE_OR_FAIL(cg->cpu, "cpu.cfs_quota_us", val);

  if (lh_cg_read_u64(cg->memory, "memory.limit_in_bytes", &cg->readback.memory_bytes) < 0 ||
      lh_cg_read_u64(cg->pids, "pids.max", &cg->readback.pids_max) < 0 ||
      lh_cg_read_u64(cg->cpu, "cpu.cfs_quota_us", &cg->readback.cpu_quota_us) < 0 ||
      lh_cg_read_u64(cg->cpu, "cpu.cfs_period_us", &cg->readback.cpu_period_us) < 0) {
    snprintf(err, errlen, "reading limits back failed");
    return -EIO;
  }
  return 0;
}

void lh_cg_read_stats_v1(const struct lh_cgroup *cg, struct lh_cgroup_stats *st, const char *faults) {
  lh_cg_read_counter(st, LH_STAT_OOM_KILL, faults, cg->memory, "memory.oom_control", "oom_kill", 1); /* 4.13+ */
  lh_cg_read_counter(st, LH_STAT_UNDER_OOM, faults, cg->memory, "memory.oom_control", "under_oom", 1);
  lh_cg_read_counter(st, LH_STAT_MEMORY_FAILCNT, faults, cg->memory, "memory.failcnt", NULL, 1);
  lh_cg_read_counter(st, LH_STAT_MEMORY_MAX_USAGE, faults, cg->memory, "memory.max_usage_in_bytes", NULL, 1);
  lh_cg_read_counter(st, LH_STAT_PIDS_EVENTS_MAX, faults, cg->pids, "pids.events", "max", 1);
  lh_cg_read_counter(st, LH_STAT_PIDS_PEAK, faults, cg->pids, "pids.peak", NULL, 1);
  lh_cg_read_counter(st, LH_STAT_CPU_NR_PERIODS, faults, cg->cpu, "cpu.stat", "nr_periods", 1);
  lh_cg_read_counter(st, LH_STAT_CPU_NR_THROTTLED, faults, cg->cpu, "cpu.stat", "nr_throttled", 1);
  lh_cg_read_counter(st, LH_STAT_CPU_THROTTLED_NS, faults, cg->cpu, "cpu.stat", "throttled_time", 1);
}
