/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "cgroup.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CG_ROOT "/sys/fs/cgroup"
enum { MADE_MEMORY = 1, MADE_PIDS = 2, MADE_CPU = 4, MADE_V2 = 8 };

static int cg_write(const char *dir, const char *file, const char *val) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t n = write(fd, val, strlen(val));
  int e = n < 0 ? -errno : 0;
  close(fd);
  return e;
}

static int cg_read(const char *dir, const char *file, char *buf, size_t cap) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t n = read(fd, buf, cap - 1);
  int e = n < 0 ? -errno : 0;
  close(fd);
  buf[n > 0 ? n : 0] = 0;
  return e;
}

static int cg_read_u64(const char *dir, const char *file, uint64_t *out) {
  char buf[64];
  int rc = cg_read(dir, file, buf, sizeof buf);
  if (rc < 0) return rc;
  if (!strncmp(buf, "max", 3)) { *out = UINT64_MAX; return 0; }
  *out = strtoull(buf, NULL, 10);
  return 0;
}

/* "key value" lines, as in memory.oom_control, pids.events, cpu.stat. */
static uint64_t cg_read_key(const char *dir, const char *file, const char *key) {
  char buf[4096];
  if (cg_read(dir, file, buf, sizeof buf) < 0) return 0;
  size_t klen = strlen(key);
  for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (!strncmp(l, key, klen) && l[klen] == ' ') return strtoull(l + klen + 1, NULL, 10);
  }
  return 0;
}

/* This process's path in a v1 hierarchy ("memory") or v2 (""), from
 * /proc/self/cgroup. */
static int own_cgroup_path(const char *controller, char *out, size_t cap) {
  char buf[4096];
  int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -EIO;
  buf[n] = 0;
  for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    char *c1 = strchr(l, ':');
    if (!c1) continue;
    char *c2 = strchr(c1 + 1, ':');
    if (!c2) continue;
    *c2 = 0;
    const char *ctrls = c1 + 1;
    int match = 0;
    if (!*controller) match = (*ctrls == 0);
    else {
      char tmp[256];
      snprintf(tmp, sizeof tmp, "%s", ctrls);
      for (char *s2 = NULL, *t = strtok_r(tmp, ",", &s2); t; t = strtok_r(NULL, ",", &s2))
        if (!strcmp(t, controller)) match = 1;
    }
    if (match) {
      snprintf(out, cap, "%s", c2 + 1);
      return 0;
    }
  }
  return -ENOENT;
}

static int make_lease_dir(const char *mount, const char *controller, const char *lease_id, char *out, size_t cap,
                          char *err, size_t errlen) {
  char own[PATH_MAX], parent[PATH_MAX];
  struct stat st;
  if (stat(mount, &st) < 0) {
    snprintf(err, errlen, "cgroup hierarchy %s is not mounted", mount);
    return -ENOENT;
  }
  int rc = own_cgroup_path(controller, own, sizeof own);
  if (rc < 0) {
    snprintf(err, errlen, "no %s entry in /proc/self/cgroup", *controller ? controller : "cgroup2");
    return rc;
  }
  if (!strcmp(own, "/")) own[0] = 0;
  snprintf(parent, sizeof parent, "%s%s/leasehold", mount, own);
  if (mkdir(parent, 0755) < 0 && errno != EEXIST) {
    rc = -errno;
    snprintf(err, errlen, "mkdir %s: %s", parent, strerror(errno));
    return rc;
  }
  snprintf(out, cap, "%s/%s", parent, lease_id);
  if (mkdir(out, 0755) < 0) {
    rc = -errno;
    snprintf(err, errlen, "mkdir %s: %s", out, strerror(errno));
    return rc;
  }
  return 0;
}

int lh_cgroup_create(struct lh_cgroup *cg, const char *lease_id, const struct lh_cgroup_limits *lim, char *err,
                     size_t errlen) {
  char val[64];
  int rc;
  memset(&cg->readback, 0, sizeof cg->readback);
  cg->created = 0;
  if ((rc = make_lease_dir(CG_ROOT "/memory", "memory", lease_id, cg->memory, sizeof cg->memory, err, errlen)) < 0)
    return rc;
  cg->created |= MADE_MEMORY;
  if ((rc = make_lease_dir(CG_ROOT "/pids", "pids", lease_id, cg->pids, sizeof cg->pids, err, errlen)) < 0) return rc;
  cg->created |= MADE_PIDS;
  if ((rc = make_lease_dir(CG_ROOT "/cpu", "cpu", lease_id, cg->cpu, sizeof cg->cpu, err, errlen)) < 0) return rc;
  cg->created |= MADE_CPU;
  if ((rc = make_lease_dir(CG_ROOT "/unified", "", lease_id, cg->v2, sizeof cg->v2, err, errlen)) < 0) return rc;
  cg->created |= MADE_V2;
  struct stat st;
  if (stat(cg->v2, &st) < 0) { snprintf(err, errlen, "stat %s", cg->v2); return -errno; }
  cg->v2_id = (uint64_t)st.st_ino;

#define WRITE_OR_FAIL(dir, file, v)                                                     \
  do {                                                                                  \
    if ((rc = cg_write(dir, file, v)) < 0) {                                            \
      snprintf(err, errlen, "write %s/%s=%s: %s", dir, file, v, strerror(-rc));         \
      return rc;                                                                        \
    }                                                                                   \
  } while (0)
  snprintf(val, sizeof val, "%llu", (unsigned long long)lim->memory_bytes);
  WRITE_OR_FAIL(cg->memory, "memory.limit_in_bytes", val);
  /* With swap accounting, cap memory+swap at the same value so the limit
   * cannot be sidestepped by swapping. */
  if (cg_write(cg->memory, "memory.memsw.limit_in_bytes", val) == 0)
    cg_read_u64(cg->memory, "memory.memsw.limit_in_bytes", &cg->memsw_readback);
  snprintf(val, sizeof val, "%llu", (unsigned long long)lim->pids_max);
  WRITE_OR_FAIL(cg->pids, "pids.max", val);
  snprintf(val, sizeof val, "%llu", (unsigned long long)lim->cpu_period_us);
  WRITE_OR_FAIL(cg->cpu, "cpu.cfs_period_us", val);
  snprintf(val, sizeof val, "%llu", (unsigned long long)lim->cpu_quota_us);
  WRITE_OR_FAIL(cg->cpu, "cpu.cfs_quota_us", val);

  if (cg_read_u64(cg->memory, "memory.limit_in_bytes", &cg->readback.memory_bytes) < 0 ||
      cg_read_u64(cg->pids, "pids.max", &cg->readback.pids_max) < 0 ||
      cg_read_u64(cg->cpu, "cpu.cfs_quota_us", &cg->readback.cpu_quota_us) < 0 ||
      cg_read_u64(cg->cpu, "cpu.cfs_period_us", &cg->readback.cpu_period_us) < 0) {
    snprintf(err, errlen, "reading limits back failed");
    return -EIO;
  }
  return 0;
}

void lh_cgroup_kill(const struct lh_cgroup *cg) {
  if ((cg->created & MADE_V2) && cg_write(cg->v2, "cgroup.kill", "1") == 0) return;
  /* Kernels before 5.14 have no cgroup.kill: signal what the pids cgroup
   * lists (processes cannot leave it on their own). */
  char buf[65536];
  for (int round = 0; round < 3; round++) {
    if (!(cg->created & MADE_PIDS) || cg_read(cg->pids, "cgroup.procs", buf, sizeof buf) < 0 || !buf[0]) return;
    for (char *l = buf; *l;) {
      pid_t p = (pid_t)strtol(l, &l, 10);
      if (p > 0) kill(p, SIGKILL);
      while (*l == '\n') l++;
    }
  }
}

void lh_cgroup_read_stats(const struct lh_cgroup *cg, struct lh_cgroup_stats *st) {
  memset(st, 0, sizeof *st);
  st->oom_kill = cg_read_key(cg->memory, "memory.oom_control", "oom_kill");
  st->under_oom = cg_read_key(cg->memory, "memory.oom_control", "under_oom");
  cg_read_u64(cg->memory, "memory.failcnt", &st->memory_failcnt);
  cg_read_u64(cg->memory, "memory.max_usage_in_bytes", &st->memory_max_usage);
  st->pids_events_max = cg_read_key(cg->pids, "pids.events", "max");
  cg_read_u64(cg->pids, "pids.peak", &st->pids_peak_current);
  st->cpu_nr_periods = cg_read_key(cg->cpu, "cpu.stat", "nr_periods");
  st->cpu_nr_throttled = cg_read_key(cg->cpu, "cpu.stat", "nr_throttled");
  st->cpu_throttled_ns = cg_read_key(cg->cpu, "cpu.stat", "throttled_time");
}

static int procs_empty(const char *dir) {
  char buf[64];
  if (cg_read(dir, "cgroup.procs", buf, sizeof buf) < 0) return 1;
  return buf[0] == 0;
}

void lh_cgroup_withdraw(struct lh_cgroup *cg, int *verified_empty, int *removed) {
  const char *dirs[4] = {cg->v2, cg->memory, cg->pids, cg->cpu};
  const int bits[4] = {MADE_V2, MADE_MEMORY, MADE_PIDS, MADE_CPU};
  *verified_empty = 0;
  *removed = 0;
  struct timespec nap = {0, 1000000};
  for (int attempt = 0; attempt < 3000; attempt++) {
    int empty = 1;
    for (int i = 0; i < 4; i++)
      if ((cg->created & bits[i]) && !procs_empty(dirs[i])) empty = 0;
    if (empty) { *verified_empty = 1; break; }
    if (attempt % 100 == 0) lh_cgroup_kill(cg);
    nanosleep(&nap, NULL);
  }
  if (!*verified_empty) return; /* never remove (or pretend to) a live lease */
  int all = 1;
  for (int i = 0; i < 4; i++) {
    if (!(cg->created & bits[i])) continue;
    int ok = 0;
    for (int attempt = 0; attempt < 200; attempt++) {
      if (rmdir(dirs[i]) == 0 || errno == ENOENT) { ok = 1; break; }
      if (errno != EBUSY) break;
      nanosleep(&nap, NULL);
    }
    if (ok) cg->created &= ~bits[i];
    else all = 0;
  }
  *removed = all;
}
