/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "cgroup.h"
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
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

/* A decimal counter or limit ("max" = unlimited). Anything else is an error,
 * never 0: a value we could not parse was not measured. */
static int parse_u64(const char *s, uint64_t *out) {
  if (!strncmp(s, "max", 3) && (s[3] == 0 || s[3] == '\n' || s[3] == ' ')) { *out = UINT64_MAX; return 0; }
  if (*s < '0' || *s > '9') return -EINVAL;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || (*end != 0 && *end != '\n' && *end != ' ')) return -EINVAL;
  *out = v;
  return 0;
}

static int cg_read_u64(const char *dir, const char *file, uint64_t *out) {
  char buf[64];
  int rc = cg_read(dir, file, buf, sizeof buf);
  return rc < 0 ? rc : parse_u64(buf, out);
}

/* "key value" lines, as in memory.oom_control, pids.events, cpu.stat.
 * -ENODATA when the file has no such line (an older kernel's format). */
static int cg_read_key(const char *dir, const char *file, const char *key, uint64_t *out) {
  char buf[4096];
  int rc = cg_read(dir, file, buf, sizeof buf);
  if (rc < 0) return rc;
  size_t klen = strlen(key);
  for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (!strncmp(l, key, klen) && l[klen] == ' ') return parse_u64(l + klen + 1, out);
  }
  return -ENODATA;
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

/* ---- owner tag and this process's live leases ------------------------- */

/* Start time (clock ticks after boot, field 22 of /proc/<pid>/stat) of a
 * process: with the pid it names one process for the lifetime of the boot. */
static int proc_starttime(pid_t pid, unsigned long long *out) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -EIO;
  buf[n] = 0;
  char *p = strrchr(buf, ')'); /* comm may contain spaces and parentheses */
  if (!p) return -EIO;
  p++; /* the space before field 3 */
  for (int field = 3; field < 22; field++) { /* move to the space before field 22 */
    p = strchr(p + 1, ' ');
    if (!p) return -EIO;
  }
  *out = strtoull(p + 1, NULL, 10);
  return 0;
}

static char owner_prefix[96];
static unsigned long long own_pidns;
static pthread_once_t owner_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
struct live_lease { struct live_lease *next; char name[192]; };
static struct live_lease *live_head;

static void owner_init(void) {
  struct stat st;
  unsigned long long start = 0;
  own_pidns = stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
  proc_starttime(getpid(), &start);
  snprintf(owner_prefix, sizeof owner_prefix, LH_CG_PREFIX "%llu.%d.%llu.", own_pidns, (int)getpid(), start);
}

const char *lh_cgroup_owner_prefix(void) {
  pthread_once(&owner_once, owner_init);
  return owner_prefix;
}

static int live_register(const char *name) {
  struct live_lease *l = calloc(1, sizeof *l);
  if (!l) return -ENOMEM;
  snprintf(l->name, sizeof l->name, "%s", name);
  pthread_mutex_lock(&live_mu);
  l->next = live_head;
  live_head = l;
  pthread_mutex_unlock(&live_mu);
  return 0;
}

/* Caller holds live_mu. */
static int live_contains_locked(const char *name) {
  for (struct live_lease *l = live_head; l; l = l->next)
    if (!strcmp(l->name, name)) return 1;
  return 0;
}

void lh_cgroup_forget(struct lh_cgroup *cg) {
  if (!cg->registered) return;
  pthread_mutex_lock(&live_mu);
  for (struct live_lease **pp = &live_head; *pp; pp = &(*pp)->next) {
    if (!strcmp((*pp)->name, cg->name)) {
      struct live_lease *dead = *pp;
      *pp = dead->next;
      free(dead);
      break;
    }
  }
  pthread_mutex_unlock(&live_mu);
  cg->registered = 0;
}

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static int is_cgroup2(const char *path) {
  struct statfs sf;
  return statfs(path, &sf) == 0 && (unsigned long)sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* The cgroup2 mount: /sys/fs/cgroup on a pure-v2 host, /sys/fs/cgroup/unified
 * on a hybrid one (these machines). */
static const char *v2_mount(void) {
  if (is_cgroup2(CG_ROOT)) return CG_ROOT;
  if (is_cgroup2(CG_ROOT "/unified")) return CG_ROOT "/unified";
  return NULL;
}

/* "memory pids cpu" all listed in a space-separated controller file. */
static int has_all_controllers(const char *dir, const char *file) {
  char buf[512];
  if (cg_read(dir, file, buf, sizeof buf) < 0) return 0;
  static const char *const want[] = {"memory", "pids", "cpu", NULL};
  for (int i = 0; want[i]; i++) {
    int found = 0;
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", buf);
    for (char *sv = NULL, *t = strtok_r(tmp, " \n", &sv); t; t = strtok_r(NULL, " \n", &sv))
      if (!strcmp(t, want[i])) found = 1;
    if (!found) return 0;
  }
  return 1;
}

/* This process's directory in the cgroup2 hierarchy. */
static int own_v2_dir(const char *mount, char *out, size_t cap) {
  char own[PATH_MAX];
  int rc = own_cgroup_path("", own, sizeof own);
  if (rc < 0) return rc;
  if (!strcmp(own, "/")) own[0] = 0;
  snprintf(out, cap, "%s%s", mount, own);
  return 0;
}

int lh_cgroup_mode(char *why, size_t whylen) {
  const char *m = v2_mount();
  char own[PATH_MAX];
  if (m && own_v2_dir(m, own, sizeof own) == 0 && has_all_controllers(own, "cgroup.controllers")) return LH_CG_V2;
  struct stat st;
  static const char *const v1[] = {CG_ROOT "/memory", CG_ROOT "/pids", CG_ROOT "/cpu", NULL};
  for (int i = 0; v1[i]; i++) {
    if (stat(v1[i], &st) < 0 || is_cgroup2(v1[i])) {
      snprintf(why, whylen, "no cgroup v1 %s hierarchy and memory, pids and cpu are not all available in cgroup v2 (%s)",
               v1[i] + strlen(CG_ROOT "/"), m ? m : "no cgroup2 mount");
      return -EOPNOTSUPP;
    }
  }
  if (!m) { snprintf(why, whylen, "no cgroup2 hierarchy for the lease's cgroup id"); return -EOPNOTSUPP; }
  return LH_CG_V1;
}

/* <base>/leasehold/<name>. */
static int make_lease_dir_in(const char *base, const char *name, char *out, size_t cap, char *err, size_t errlen) {
  char parent[PATH_MAX];
  int rc;
  snprintf(parent, sizeof parent, "%s/leasehold", base);
  if (mkdir(parent, 0755) < 0 && errno != EEXIST) {
    rc = -errno;
    snprintf(err, errlen, "mkdir %s: %s", parent, strerror(errno));
    return rc;
  }
  if (is_cgroup2(parent) && has_all_controllers(parent, "cgroup.controllers")) {
    /* v2 controller path: children of "leasehold" get memory, pids and cpu.
     * Idempotent; "leasehold" itself never holds a process. */
    if ((rc = cg_write(parent, "cgroup.subtree_control", "+memory +pids +cpu")) < 0) {
      snprintf(err, errlen, "enable +memory +pids +cpu in %s/cgroup.subtree_control: %s", parent, strerror(-rc));
      return rc;
    }
  }
  snprintf(out, cap, "%s/%s", parent, name);
  if (mkdir(out, 0755) < 0) {
    rc = -errno;
    snprintf(err, errlen, "mkdir %s: %s", out, strerror(errno));
    return rc;
  }
  return 0;
}

/* <mount><our own path in that hierarchy>/leasehold/<name>. */
static int make_lease_dir(const char *mount, const char *controller, const char *name, char *out, size_t cap,
                          char *err, size_t errlen) {
  char own[PATH_MAX], base[PATH_MAX];
  struct stat st;
  if (!mount || stat(mount, &st) < 0) {
    snprintf(err, errlen, "cgroup hierarchy %s is not mounted", mount ? mount : "cgroup2");
    return -ENOENT;
  }
  int rc = own_cgroup_path(controller, own, sizeof own);
  if (rc < 0) {
    snprintf(err, errlen, "no %s entry in /proc/self/cgroup", *controller ? controller : "cgroup2");
    return rc;
  }
  if (!strcmp(own, "/")) own[0] = 0;
  snprintf(base, sizeof base, "%s%s", mount, own);
  return make_lease_dir_in(base, name, out, cap, err, errlen);
}

#define WRITE_OR_FAIL(dir, file, v)                                                     \
  do {                                                                                  \
    if ((rc = cg_write(dir, file, v)) < 0) {                                            \
      snprintf(err, errlen, "write %s/%s=%s: %s", dir, file, v, strerror(-rc));         \
      return rc;                                                                        \
    }                                                                                   \
  } while (0)

/* memory.max, memory.swap.max=0, pids.max, cpu.max in the lease's own v2
 * directory, which is also its identity directory. */
static int create_v2(struct lh_cgroup *cg, const struct lh_cgroup_limits *lim, char *err, size_t errlen) {
  const char *m = v2_mount();
  char own[PATH_MAX], base[PATH_MAX], val[64], buf[128];
  int rc;
  if (!m || own_v2_dir(m, own, sizeof own) < 0) { snprintf(err, errlen, "no cgroup2 hierarchy"); return -ENOENT; }
  /* Leases go in <own>/leasehold, which needs the controllers enabled in our
   * own cgroup's subtree_control. The root cgroup may do that while holding
   * processes; any other cgroup that holds processes (ours holds the agent)
   * cannot ("no internal processes": EBUSY). Then the leases go next to us,
   * in <parent>/leasehold: the parent already delegates memory, pids and cpu
   * (they are in our cgroup.controllers), and every lease limit still applies
   * in full; only the agent's own cgroup limit no longer covers them. This is
   * systemd's Delegate=yes + DelegateSubgroup= layout. */
  snprintf(base, sizeof base, "%s", own);
  if (!has_all_controllers(own, "cgroup.subtree_control") &&
      (rc = cg_write(own, "cgroup.subtree_control", "+memory +pids +cpu")) < 0) {
    char *slash = strrchr(base, '/');
    if (rc != -EBUSY || !strcmp(own, m) || !slash || slash - base < (ptrdiff_t)strlen(m)) {
      snprintf(err, errlen, "cannot enable +memory +pids +cpu for children of %s: %s", own, strerror(-rc));
      return rc;
    }
    *slash = 0;
    if (!has_all_controllers(base, "cgroup.subtree_control")) {
      snprintf(err, errlen, "cannot enable +memory +pids +cpu for children of %s (%s) nor use its parent %s",
               own, strerror(-rc), base);
      return -EBUSY;
    }
  }
  if ((rc = make_lease_dir_in(base, cg->name, cg->v2, sizeof cg->v2, err, errlen)) < 0) return rc;
  cg->created |= MADE_V2;
  if (!has_all_controllers(cg->v2, "cgroup.controllers")) {
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
  if (cg_write(cg->v2, "memory.swap.max", "0") == 0 && cg_read_u64(cg->v2, "memory.swap.max", &swap_max) == 0 &&
      swap_max == 0)
    cg->memsw_readback = lim->memory_bytes; /* replaced by the read-back memory.max below */
  snprintf(val, sizeof val, "%llu", (unsigned long long)lim->pids_max);
  WRITE_OR_FAIL(cg->v2, "pids.max", val);
  snprintf(val, sizeof val, "%llu %llu", (unsigned long long)lim->cpu_quota_us, (unsigned long long)lim->cpu_period_us);
  WRITE_OR_FAIL(cg->v2, "cpu.max", val);

  if (cg_read_u64(cg->v2, "memory.max", &cg->readback.memory_bytes) < 0 ||
      cg_read_u64(cg->v2, "pids.max", &cg->readback.pids_max) < 0 || cg_read(cg->v2, "cpu.max", buf, sizeof buf) < 0) {
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

int lh_cgroup_create(struct lh_cgroup *cg, const char *lease_id, const struct lh_cgroup_limits *lim, char *err,
                     size_t errlen) {
  char val[64];
  int rc;
  memset(&cg->readback, 0, sizeof cg->readback);
  cg->created = 0;
  cg->registered = 0;
  cg->mode = 0;
  cg->memsw_readback = 0;
  if (!*lease_id || strspn(lease_id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(lease_id)) {
    snprintf(err, errlen, "lease id must be [A-Za-z0-9_-]+");
    return -EINVAL;
  }
  if ((size_t)snprintf(cg->name, sizeof cg->name, "%s%s", lh_cgroup_owner_prefix(), lease_id) >= sizeof cg->name) {
    snprintf(err, errlen, "lease id too long");
    return -ENAMETOOLONG;
  }
  int mode = lh_cgroup_mode(err, errlen);
  if (mode < 0) return mode;
  /* Registered before the first mkdir: a concurrent sweep that can see the
   * directory also sees it is live. */
  if ((rc = live_register(cg->name)) < 0) { snprintf(err, errlen, "out of memory"); return rc; }
  cg->registered = 1;
  cg->mode = mode;
  if (mode == LH_CG_V2) return create_v2(cg, lim, err, errlen);

  lease_id = cg->name;
  if ((rc = make_lease_dir(CG_ROOT "/memory", "memory", lease_id, cg->memory, sizeof cg->memory, err, errlen)) < 0)
    return rc;
  cg->created |= MADE_MEMORY;
  if ((rc = make_lease_dir(CG_ROOT "/pids", "pids", lease_id, cg->pids, sizeof cg->pids, err, errlen)) < 0) return rc;
  cg->created |= MADE_PIDS;
  if ((rc = make_lease_dir(CG_ROOT "/cpu", "cpu", lease_id, cg->cpu, sizeof cg->cpu, err, errlen)) < 0) return rc;
  cg->created |= MADE_CPU;
  if ((rc = make_lease_dir(v2_mount(), "", lease_id, cg->v2, sizeof cg->v2, err, errlen)) < 0) return rc;
  cg->created |= MADE_V2;
  struct stat st;
  if (stat(cg->v2, &st) < 0) { rc = -errno; snprintf(err, errlen, "stat %s", cg->v2); return rc; }
  cg->v2_id = (uint64_t)st.st_ino;

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
  const char *dir = cg->mode == LH_CG_V2 ? cg->v2 : cg->pids;
  int made = cg->mode == LH_CG_V2 ? (cg->created & MADE_V2) : (cg->created & MADE_PIDS);
  char buf[65536];
  for (int round = 0; round < 3; round++) {
    if (!made || cg_read(dir, "cgroup.procs", buf, sizeof buf) < 0 || !buf[0]) return;
    for (char *l = buf; *l;) {
      pid_t p = (pid_t)strtol(l, &l, 10);
      if (p > 0) kill(p, SIGKILL);
      while (*l == '\n') l++;
    }
  }
}

/* The test seam (lh_launch_request.fault_unreadable): is `file` one of the
 * space-separated names in `faults`? */
static int fault_injected(const char *faults, const char *file) {
  if (!faults || !*faults) return 0;
  size_t n = strlen(file);
  for (const char *p = faults; (p = strstr(p, file)); p += n)
    if ((p == faults || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ')) return 1;
  return 0;
}

/* One counter: the `key` line of `file` in `dir`, or (key NULL) the file's
 * single number, times `scale`. A failed read leaves err[idx] set: an
 * unreadable memory.events is "unknown", never "no OOM kill". */
static void read_counter(struct lh_cgroup_stats *st, int idx, const char *faults, const char *dir, const char *file,
                         const char *key, uint64_t scale) {
  uint64_t v = 0;
  int rc = fault_injected(faults, file) ? -EIO : key ? cg_read_key(dir, file, key, &v) : cg_read_u64(dir, file, &v);
  st->file[idx] = file;
  st->key[idx] = key;
  st->err[idx] = rc < 0 ? -rc : 0;
  st->value[idx] = rc < 0 ? 0 : v * scale;
}

void lh_cgroup_read_stats(const struct lh_cgroup *cg, struct lh_cgroup_stats *st, const char *faults) {
  memset(st, 0, sizeof *st);
  if (cg->mode == LH_CG_V2) {
    /* memory.events counts this cgroup and its descendants. "max" (usage hit
     * memory.max) plays the part of v1's failcnt. */
    read_counter(st, LH_STAT_OOM_KILL, faults, cg->v2, "memory.events", "oom_kill", 1);
    read_counter(st, LH_STAT_UNDER_OOM, faults, cg->v2, "memory.events", "oom", 1);
    read_counter(st, LH_STAT_MEMORY_FAILCNT, faults, cg->v2, "memory.events", "max", 1);
    read_counter(st, LH_STAT_MEMORY_MAX_USAGE, faults, cg->v2, "memory.peak", NULL, 1); /* 5.19+ */
    read_counter(st, LH_STAT_PIDS_EVENTS_MAX, faults, cg->v2, "pids.events", "max", 1);
    read_counter(st, LH_STAT_PIDS_PEAK, faults, cg->v2, "pids.peak", NULL, 1); /* 6.1+ */
    read_counter(st, LH_STAT_CPU_NR_PERIODS, faults, cg->v2, "cpu.stat", "nr_periods", 1);
    read_counter(st, LH_STAT_CPU_NR_THROTTLED, faults, cg->v2, "cpu.stat", "nr_throttled", 1);
    read_counter(st, LH_STAT_CPU_THROTTLED_NS, faults, cg->v2, "cpu.stat", "throttled_usec", 1000);
    return;
  }
  read_counter(st, LH_STAT_OOM_KILL, faults, cg->memory, "memory.oom_control", "oom_kill", 1); /* 4.13+ */
  read_counter(st, LH_STAT_UNDER_OOM, faults, cg->memory, "memory.oom_control", "under_oom", 1);
  read_counter(st, LH_STAT_MEMORY_FAILCNT, faults, cg->memory, "memory.failcnt", NULL, 1);
  read_counter(st, LH_STAT_MEMORY_MAX_USAGE, faults, cg->memory, "memory.max_usage_in_bytes", NULL, 1);
  read_counter(st, LH_STAT_PIDS_EVENTS_MAX, faults, cg->pids, "pids.events", "max", 1);
  read_counter(st, LH_STAT_PIDS_PEAK, faults, cg->pids, "pids.peak", NULL, 1);
  read_counter(st, LH_STAT_CPU_NR_PERIODS, faults, cg->cpu, "cpu.stat", "nr_periods", 1);
  read_counter(st, LH_STAT_CPU_NR_THROTTLED, faults, cg->cpu, "cpu.stat", "nr_throttled", 1);
  read_counter(st, LH_STAT_CPU_THROTTLED_NS, faults, cg->cpu, "cpu.stat", "throttled_time", 1);
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

/* ---- start-up sweep of leases left by dead launches --------------------- */

#define SWEEP_MAX_DEPTH 12
#define SWEEP_MAX_DIRS 20000
#define SWEEP_MAX_PATHS 8

struct sweep_cand {
  char name[192];
  char *paths[SWEEP_MAX_PATHS];
  int is_v2[SWEEP_MAX_PATHS];
  int npaths;
};
struct sweep_state {
  struct sweep_cand *c;
  size_t n, cap;
  unsigned dirs_seen;
  struct lh_sweep_report *rep;
};

static void sweep_fail(struct lh_sweep_report *rep, const char *path, const char *reason) {
  if (rep->n_failures >= LH_SWEEP_MAX_FAILURES) return;
  struct lh_sweep_failure *f = &rep->failures[rep->n_failures++];
  snprintf(f->path, sizeof f->path, "%s", path);
  snprintf(f->reason, sizeof f->reason, "%s", reason);
}

static void sweep_add(struct sweep_state *s, const char *name, const char *path, int is_v2) {
  struct sweep_cand *c = NULL;
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->c[i].name, name)) { c = &s->c[i]; break; }
  if (!c) {
    if (s->n == s->cap) {
      size_t cap = s->cap ? s->cap * 2 : 16;
      struct sweep_cand *nc = realloc(s->c, cap * sizeof *nc);
      if (!nc) { sweep_fail(s->rep, path, "out of memory"); return; }
      s->c = nc;
      s->cap = cap;
    }
    c = &s->c[s->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
  }
  if (c->npaths >= SWEEP_MAX_PATHS) { sweep_fail(s->rep, path, "lease name in too many hierarchies"); return; }
  c->paths[c->npaths] = strdup(path);
  if (!c->paths[c->npaths]) { sweep_fail(s->rep, path, "out of memory"); return; }
  c->is_v2[c->npaths++] = is_v2;
}

/* Collects the children of every directory named "leasehold" below `dir`. */
static void sweep_walk(struct sweep_state *s, const char *dir, int depth, int is_v2) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
    if (++s->dirs_seen > SWEEP_MAX_DIRS) break;
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) continue;
    if (!strcmp(e->d_name, "leasehold")) {
      DIR *ld = opendir(path);
      if (!ld) continue;
      struct dirent *le;
      while ((le = readdir(ld))) {
        if (le->d_type != DT_DIR || le->d_name[0] == '.') continue;
        char lp[PATH_MAX];
        if ((size_t)snprintf(lp, sizeof lp, "%s/%s", path, le->d_name) >= sizeof lp) continue;
        sweep_add(s, le->d_name, lp, is_v2);
      }
      closedir(ld);
    } else if (depth < SWEEP_MAX_DEPTH) {
      sweep_walk(s, path, depth + 1, is_v2);
    }
  }
  closedir(d);
}

/* Parses "lh.<pidns>.<pid>.<start>.<lease id>" strictly. */
static int parse_lease_name(const char *name, unsigned long long *ns, long *pid, unsigned long long *start) {
  size_t pl = strlen(LH_CG_PREFIX);
  if (strncmp(name, LH_CG_PREFIX, pl)) return -1;
  const char *p = name + pl;
  unsigned long long v[3];
  for (int i = 0; i < 3; i++) {
    if (*p < '0' || *p > '9') return -1;
    char *end;
    errno = 0;
    v[i] = strtoull(p, &end, 10);
    if (errno || *end != '.') return -1;
    p = end + 1;
  }
  if (!*p || strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(p)) return -1;
  if (v[1] == 0 || v[1] > 0x7fffffff) return -1;
  *ns = v[0];
  *pid = (long)v[1];
  *start = v[2];
  return 0;
}

static int seen_pid(pid_t *seen, int *nseen, int cap, pid_t p) {
  for (int i = 0; i < *nseen; i++)
    if (seen[i] == p) return 1;
  if (*nseen < cap) seen[(*nseen)++] = p;
  return 0;
}

static void sweep_one(struct sweep_cand *c, struct lh_sweep_report *rep) {
  static char buf[65536]; /* sweeps are serialised by sweep_mu */
  pid_t seen[1024];
  int nseen = 0, empty = 0;
  struct timespec nap = {0, 10 * 1000000};
  for (int round = 0; round < 300 && !empty; round++) {
    empty = 1;
    for (int i = 0; i < c->npaths; i++) {
      if (cg_read(c->paths[i], "cgroup.procs", buf, sizeof buf) < 0) continue; /* gone */
      for (char *l = buf; *l;) {
        char *end;
        long p = strtol(l, &end, 10);
        if (end == l) break;
        l = end;
        while (*l == '\n') l++;
        if (p <= 0) continue;
        empty = 0;
        if (!seen_pid(seen, &nseen, (int)(sizeof seen / sizeof seen[0]), (pid_t)p)) rep->killed++;
        kill((pid_t)p, SIGKILL);
      }
    }
    if (empty) break;
    /* cgroup.kill also catches what forks between our read and our kill. */
    for (int i = 0; i < c->npaths; i++)
      if (c->is_v2[i]) cg_write(c->paths[i], "cgroup.kill", "1");
    nanosleep(&nap, NULL);
  }
  if (!empty) {
    sweep_fail(rep, c->paths[0], "stale lease still has processes after 3 s of SIGKILL: not removed");
    return;
  }
  int all = 1;
  for (int i = 0; i < c->npaths; i++) {
    int ok = 0, e = 0;
    for (int attempt = 0; attempt < 200; attempt++) {
      if (rmdir(c->paths[i]) == 0 || errno == ENOENT) { ok = 1; break; }
      e = errno;
      if (e != EBUSY) break;
      nanosleep(&(struct timespec){0, 5 * 1000000}, NULL);
    }
    if (!ok) {
      char why[160];
      snprintf(why, sizeof why, "rmdir: %s", strerror(e));
      sweep_fail(rep, c->paths[i], why);
      all = 0;
    }
  }
  if (all) rep->removed++;
}

static pthread_mutex_t sweep_mu = PTHREAD_MUTEX_INITIALIZER;

void lh_cgroup_sweep(struct lh_sweep_report *rep) {
  memset(rep, 0, sizeof *rep);
  const char *own = lh_cgroup_owner_prefix();
  size_t own_len = strlen(own);
  pthread_mutex_lock(&sweep_mu);
  struct sweep_state s = {NULL, 0, 0, 0, rep};
  static const char *const v1[] = {CG_ROOT "/memory", CG_ROOT "/pids", CG_ROOT "/cpu", NULL};
  if (is_cgroup2(CG_ROOT)) {
    sweep_walk(&s, CG_ROOT, 0, 1);
  } else {
    for (int i = 0; v1[i]; i++) sweep_walk(&s, v1[i], 0, 0);
    if (is_cgroup2(CG_ROOT "/unified")) sweep_walk(&s, CG_ROOT "/unified", 0, 1);
  }
  if (s.dirs_seen > SWEEP_MAX_DIRS) sweep_fail(rep, CG_ROOT, "cgroup tree larger than the sweep walks; some hierarchies not fully searched");
  for (size_t i = 0; i < s.n; i++) {
    struct sweep_cand *c = &s.c[i];
    unsigned long long ns, start, cur;
    long pid;
    if (parse_lease_name(c->name, &ns, &pid, &start) < 0 || ns != own_pidns) {
      rep->foreign++; /* not ours to judge: never touched */
    } else if (!strncmp(c->name, own, own_len)) {
      pthread_mutex_lock(&live_mu);
      int live = live_contains_locked(c->name);
      pthread_mutex_unlock(&live_mu);
      if (live) rep->live_own++;
      else sweep_one(c, rep); /* ours, withdrawal failed earlier: names are never reused */
    } else if (proc_starttime((pid_t)pid, &cur) == 0 && cur == start) {
      rep->live_other++;
    } else {
      sweep_one(c, rep);
    }
    for (int k = 0; k < c->npaths; k++) free(c->paths[k]);
  }
  free(s.c);
  pthread_mutex_unlock(&sweep_mu);
}
