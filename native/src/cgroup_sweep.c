/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
/* The start-up sweep of lease cgroups left by dead launches (lh_cgroup_sweep,
 * cgroup.h): every hierarchy walked, only our own scheme's stale names
 * touched. */
#include "cgroup_internal.h"
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
      if (lh_cg_read(c->paths[i], "cgroup.procs", buf, sizeof buf) < 0) continue; /* gone */
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
      if (c->is_v2[i]) lh_cg_write(c->paths[i], "cgroup.kill", "1");
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
  if (lh_cg_is_cgroup2(CG_ROOT)) {
    sweep_walk(&s, CG_ROOT, 0, 1);
  } else {
    for (int i = 0; v1[i]; i++) sweep_walk(&s, v1[i], 0, 0);
    if (lh_cg_is_cgroup2(CG_ROOT "/unified")) sweep_walk(&s, CG_ROOT "/unified", 0, 1);
  }
  if (s.dirs_seen > SWEEP_MAX_DIRS) sweep_fail(rep, CG_ROOT, "cgroup tree larger than the sweep walks; some hierarchies not fully searched");
  for (size_t i = 0; i < s.n; i++) {
    struct sweep_cand *c = &s.c[i];
    unsigned long long ns, start, cur;
    long pid;
    if (parse_lease_name(c->name, &ns, &pid, &start) < 0 || ns != lh_cg_own_pidns()) {
      rep->foreign++; /* not ours to judge: never touched */
    } else if (!strncmp(c->name, own, own_len)) {
      if (lh_cg_live_contains(c->name)) rep->live_own++;
      else sweep_one(c, rep); /* ours, withdrawal failed earlier: names are never reused */
    } else if (lh_cg_proc_starttime((pid_t)pid, &cur) == 0 && cur == start) {
      rep->live_other++;
    } else {
      sweep_one(c, rep);
    }
    for (int k = 0; k < c->npaths; k++) free(c->paths[k]);
  }
  free(s.c);
  pthread_mutex_unlock(&sweep_mu);
}
