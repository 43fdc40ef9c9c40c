/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
/* The v2 controller path: memory, pids and cpu all in the lease's own
 * cgroup2 directory, which is also its identity directory. */
#include "cgroup_internal.h"
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* memory.max, memory.swap.max=0, pids.max, cpu.max in the lease's own v2
 * directory, which is also its identity directory. */
int lh_cg_create_v2(struct lh_cgroup *cg, const struct lh_cgroup_limits *lim, char *err, size_t errlen) {
  const char *m = lh_cg_v2_mount();
  char own[PATH_MAX], base[PATH_MAX], val[64], buf[128];
  int rc;
  if (!m || lh_cg_own_v2_dir(m, own, sizeof own) < 0) { snprintf(err, errlen, "no cgroup2 hierarchy"); return -ENOENT; }
  /* Leases go in <own>/leasehold, which needs the controllers enabled in our
   * own cgroup's subtree_control. The root cgroup may do that while holding
   * processes; any other cgroup that holds processes (ours holds the agent)
   * cannot ("no internal processes": EBUSY). Then the leases go next to us,
   * in <parent>/leasehold: the parent already delegates memory, pids and cpu
   * (they are in our cgroup.controllers), and every lease limit still applies
   * in full; only the agent's own cgroup limit no longer covers them. This is
   * systemd's Delegate=yes + DelegateSubgroup= layout. */
  snprintf(base, sizeof base, "%s", own);
  if (!lh_cg_has_all_controllers(own, "cgroup.subtree_control") &&
      (rc = lh_cg_write(own, "cgroup.subtree_control", "+memory +pids +cpu")) < 0) {
    char *slash = strrchr(base, '/');
    if (rc != -EBUSY || !strcmp(own, m) || !slash || slash - base < (ptrdiff_t)strlen(m)) {
      snprintf(err, errlen, "cannot enable +memory +pids +cpu for children of %s: %s", own, strerror(-rc));
      return rc;
    }
    *slash = 0;
    if (!lh_cg_has_all_controllers(base, "cgroup.subtree_control")) {
      snprintf(err, errlen, "cannot enable +memory +pids +cpu for children of %s (%s) nor use its parent %s",
               own, strerror(-rc), base);
      return -EBUSY;
    }
  }
  if ((rc = lh_cg_make_lease_dir_in(base, cg->name, cg->v2, sizeof cg->v2, err, errlen)) < 0) return rc;
  cg->created |= MADE_V2;
  if (!lh_cg_has_all_controllers(cg->v2, "cgroup.controllers")) {
    snprintf(err, errlen, "%s did not get memory, pids and cpu controllers", cg->v2);
    return -EOPNOTSUPP;
  }
  snprintf(cg->memory, sizeof cg->memory, "%s", cg->v2);
  snprintf(cg->pids, sizeof cg->pids, "%s", cg->v2);
  snprintf(cg->cpu, sizeof cg->cpu, "%s", cg->v2);
  struct stat st;
  if (stat(cg->v2, &st) < 0) { rc = -errno; snprintf(err, errlen, "stat %s", cg->v2); return rc; }
  cg->v2_id = (uint64_t)st.st_ino;

  snprintf(val, sizeof val, "%llu", (unsigned long long)lim->memory_bytes);
  WRITE_OR_FAIL(cg->v2, "memory.max", val);
  /* No swap: memory+swap is then capped at memory.max, as memsw does in v1.
   * Without swap accounting the file is absent and this is reported. */
  uint64_t swap_max = UINT64_MAX;
  if (lh_cg_write(cg->v2, "memory.swap.max", "0") == 0 && lh_cg_read_u64(cg->v2, "memory.swap.max", &swap_max) == 0 &&
      swap_max == 0)
    cg->memsw_readback = lim->memory_bytes; /* replaced by the read-back memory.max below */
  snprintf(val, sizeof val, "%llu", (unsigned long long)lim->pids_max);
  WRITE_OR_FAIL(cg->v2, "pids.max", val);
  snprintf(val, sizeof val, "%llu %llu", (unsigned long long)lim->cpu_quota_us, (unsigned long long)lim->cpu_period_us);
  WRITE_OR_FAIL(cg->v2, "cpu.max", val);

  if (lh_cg_read_u64(cg->v2, "memory.max", &cg->readback.memory_bytes) < 0 ||
      lh_cg_read_u64(cg->v2, "pids.max", &cg->readback.pids_max) < 0 || lh_cg_read(cg->v2, "cpu.max", buf, sizeof buf) < 0) {
    snprintf(err, errlen, "reading limits back failed");
    return -EIO;
  }
  char quota[32] = "";
  unsigned long long period = 0;
  if (sscanf(buf, "%31s %llu", quota, &period) != 2) {
    snprintf(err, errlen, "unexpected cpu.max: %s", buf);
    return -EIO;
  }
  cg->readback.cpu_quota_us = !strcmp(quota, "max") ? UINT64_MAX : strtoull(quota, NULL, 10);
  cg->readback.cpu_period_us = period;
  if (cg->memsw_readback) cg->memsw_readback = cg->readback.memory_bytes;
  return 0;
}

void lh_cg_read_stats_v2(const struct lh_cgroup *cg, struct lh_cgroup_stats *st, const char *faults) {
  /* memory.events counts this cgroup and its descendants. "max" (usage hit
   * memory.max) plays the part of v1's failcnt. */
  lh_cg_read_counter(st, LH_STAT_OOM_KILL, faults, cg->v2, "memory.events", "oom_kill", 1);
  lh_cg_read_counter(st, LH_STAT_UNDER_OOM, faults, cg->v2, "memory.events", "oom", 1);
  lh_cg_read_counter(st, LH_STAT_MEMORY_FAILCNT, faults, cg->v2, "memory.events", "max", 1);
  lh_cg_read_counter(st, LH_STAT_MEMORY_MAX_USAGE, faults, cg->v2, "memory.peak", NULL, 1); /* 5.19+ */
  lh_cg_read_counter(st, LH_STAT_PIDS_EVENTS_MAX, faults, cg->v2, "pids.events", "max", 1);
  lh_cg_read_counter(st, LH_STAT_PIDS_PEAK, faults, cg->v2, "pids.peak", NULL, 1); /* 6.1+ */
  lh_cg_read_counter(st, LH_STAT_CPU_NR_PERIODS, faults, cg->v2, "cpu.stat", "nr_periods", 1);
  lh_cg_read_counter(st, LH_STAT_CPU_NR_THROTTLED, faults, cg->v2, "cpu.stat", "nr_throttled", 1);
  lh_cg_read_counter(st, LH_STAT_CPU_THROTTLED_NS, faults, cg->v2, "cpu.stat", "throttled_usec", 1000);
}
