/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
/* The lease's cgroups, host side: what both hierarchies share — cgroup file
 * reads and writes, this process's own cgroup paths, the owner tag and the
 * live-lease set, which hierarchy enforces (lh_cgroup_mode), the lease
 * directory, kill, the post-run counters and withdrawal. The v1 and v2
 * limit writers are in cgroup_v1.c and cgroup_v2.c, the stale-lease sweep
 * in cgroup_sweep.c. */
#include "cgroup_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

int lh_cg_write(const char *dir, const char *file, const char *val) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t n = write(fd, val, strlen(val));
  int e = n < 0 ? -errno : 0;
  close(fd);
  return e;
}

int lh_cg_read(const char *dir, const char *file, char *buf, size_t cap) {
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
static int lh_cg_parse_u64(const char *s, uint64_t *out) {
  if (!strncmp(s, "max", 3) && (s[3] == 0 || s[3] == '\n' || s[3] == ' ')) { *out = UINT64_MAX; return 0; }
  if (*s < '0' || *s > '9') return -EINVAL;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || (*end != 0 && *end != '\n' && *end != ' ')) return -EINVAL;
  *out = v;
  return 0;
}

int lh_cg_read_u64(const char *dir, const char *file, uint64_t *out) {
  char buf[64];
  int rc = lh_cg_read(dir, file, buf, sizeof buf);
  return rc < 0 ? rc : lh_cg_parse_u64(buf, out);
}

/* "key value" lines, as in memory.oom_control, pids.events, cpu.stat.
 * -ENODATA when the file has no such line (an older kernel's format). */
int lh_cg_read_key(const char *dir, const char *file, const char *key, uint64_t *out) {
  char buf[4096];
  int rc = lh_cg_read(dir, file, buf, sizeof buf);
  if (rc < 0) return rc;
  size_t klen = strlen(key);
  for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (!strncmp(l, key, klen) && l[klen] == ' ') return lh_cg_parse_u64(l + klen + 1, out);
  }
  return -ENODATA;
}

/* This process's path in a v1 hierarchy ("memory") or v2 (""), from
 * /proc/self/cgroup. */
int lh_cg_own_cgroup_path(const char *controller, char *out, size_t cap) {
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
int lh_cg_proc_starttime(pid_t pid, unsigned long long *out) {
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
  lh_cg_proc_starttime(getpid(), &start);
  snprintf(owner_prefix, sizeof owner_prefix, LH_CG_PREFIX "%llu.%d.%llu.", own_pidns, (int)getpid(), start);
}

const char *lh_cgroup_owner_prefix(void) {
  pthread_once(&owner_once, owner_init);
  return owner_prefix;
}

unsigned long long lh_cg_own_pidns(void) {
  pthread_once(&owner_once, owner_init);
  return own_pidns;
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

int lh_cg_live_contains(const char *name) {
  int found = 0;
  pthread_mutex_lock(&live_mu);
  for (struct live_lease *l = live_head; l && !found; l = l->next)
    if (!strcmp(l->name, name)) found = 1;
  pthread_mutex_unlock(&live_mu);
  return found;
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

int lh_cg_is_cgroup2(const char *path) {
  struct statfs sf;
  return statfs(path, &sf) == 0 && (unsigned long)sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* The cgroup2 mount: /sys/fs/cgroup on a pure-v2 host, /sys/fs/cgroup/unified
 * on a hybrid one (these machines). */
const char *lh_cg_v2_mount(void) {
  if (lh_cg_is_cgroup2(CG_ROOT)) return CG_ROOT;
  if (lh_cg_is_cgroup2(CG_ROOT "/unified")) return CG_ROOT "/unified";
  return NULL;
}

/* "memory pids cpu" all listed in a space-separated controller file. */
int lh_cg_has_all_controllers(const char *dir, const char *file) {
  char buf[512];
  if (lh_cg_read(dir, file, buf, sizeof buf) < 0) return 0;
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
int lh_cg_own_v2_dir(const char *mount, char *out, size_t cap) {
  char own[PATH_MAX];
  int rc = lh_cg_own_cgroup_path("", own, sizeof own);
  if (rc < 0) return rc;
  if (!strcmp(own, "/")) own[0] = 0;
  snprintf(out, cap, "%s%s", mount, own);
  return 0;
}

int lh_cgroup_mode(char *why, size_t whylen) {
  const char *m = lh_cg_v2_mount();
  char own[PATH_MAX];
  if (m && lh_cg_own_v2_dir(m, own, sizeof own) == 0 && lh_cg_has_all_controllers(own, "cgroup.controllers")) return LH_CG_V2;
  struct stat st;
  static const char *const v1[] = {CG_ROOT "/memory", CG_ROOT "/pids", CG_ROOT "/cpu", NULL};
  for (int i = 0; v1[i]; i++) {
    if (stat(v1[i], &st) < 0 || lh_cg_is_cgroup2(v1[i])) {
      snprintf(why, whylen, "no cgroup v1 %s hierarchy and memory, pids and cpu are not all available in cgroup v2 (%s)",
               v1[i] + strlen(CG_ROOT "/"), m ? m : "no cgroup2 mount");
      return -EOPNOTSUPP;
    }
  }
  if (!m) { snprintf(why, whylen, "no cgroup2 hierarchy for the lease's cgroup id"); return -EOPNOTSUPP; }
  return LH_CG_V1;
}

/* <base>/leasehold/<name>. */
int lh_cg_make_lease_dir_in(const char *base, const char *name, char *out, size_t cap, char *err, size_t errlen) {
  char parent[PATH_MAX];
  int rc;
  snprintf(parent, sizeof parent, "%s/leasehold", base);
  if (mkdir(parent, 0755) < 0 && errno != EEXIST) {
    rc = -errno;
    snprintf(err, errlen, "mkdir %s: %s", parent, strerror(errno));
    return rc;
  }
  if (lh_cg_is_cgroup2(parent) && lh_cg_has_all_controllers(parent, "cgroup.controllers")) {
    /* v2 controller path: children of "leasehold" get memory, pids and cpu.
     * Idempotent; "leasehold" itself never holds a process. */
    if ((rc = lh_cg_write(parent, "cgroup.subtree_control", "+memory +pids +cpu")) < 0) {
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

int lh_cgroup_create(struct lh_cgroup *cg, const char *lease_id, const struct lh_cgroup_limits *lim, char *err,
                     size_t errlen) {
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
  if (mode == LH_CG_V2) return lh_cg_create_v2(cg, lim, err, errlen);

  return lh_cg_create_v1(cg, lim, err, errlen);
}

void lh_cgroup_kill(const struct lh_cgroup *cg) {
  if ((cg->created & MADE_V2) && lh_cg_write(cg->v2, "cgroup.kill", "1") == 0) return;
  /* Kernels before 5.14 have no cgroup.kill: signal what the pids cgroup
   * lists (processes cannot leave it on their own). */
  const char *dir = cg->mode == LH_CG_V2 ? cg->v2 : cg->pids;
  int made = cg->mode == LH_CG_V2 ? (cg->created & MADE_V2) : (cg->created & MADE_PIDS);
  char buf[65536];
  for (int round = 0; round < 3; round++) {
    if (!made || lh_cg_read(dir, "cgroup.procs", buf, sizeof buf) < 0 || !buf[0]) return;
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
void lh_cg_read_counter(struct lh_cgroup_stats *st, int idx, const char *faults, const char *dir, const char *file,
                         const char *key, uint64_t scale) {
  uint64_t v = 0;
  int rc = fault_injected(faults, file) ? -EIO : key ? lh_cg_read_key(dir, file, key, &v) : lh_cg_read_u64(dir, file, &v);
  st->file[idx] = file;
  st->key[idx] = key;
  st->err[idx] = rc < 0 ? -rc : 0;
  st->value[idx] = rc < 0 ? 0 : v * scale;
}

void lh_cgroup_read_stats(const struct lh_cgroup *cg, struct lh_cgroup_stats *st, const char *faults) {
  memset(st, 0, sizeof *st);
  if (cg->mode == LH_CG_V2) lh_cg_read_stats_v2(cg, st, faults);
  else lh_cg_read_stats_v1(cg, st, faults);
}

static int procs_empty(const char *dir) {
  char buf[64];
  if (lh_cg_read(dir, "cgroup.procs", buf, sizeof buf) < 0) return 1;
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
