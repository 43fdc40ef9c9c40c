/* SPDX-License-Identifier: UNLICENSED */
/* What cgroup.c, cgroup_v1.c, cgroup_v2.c and cgroup_sweep.c share; not part
 * of the addon's interface (that is cgroup.h). */
#ifndef LEASEHOLD_CGROUP_INTERNAL_H
#define LEASEHOLD_CGROUP_INTERNAL_H
#include "cgroup.h"
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#define CG_ROOT "/sys/fs/cgroup"
/* Bits of lh_cgroup.created: the directories this lease made. */
enum { MADE_MEMORY = 1, MADE_PIDS = 2, MADE_CPU = 4, MADE_V2 = 8 };

/* Writes a limit or fails the create with `err` filled (needs `int rc`, `err`, `errlen` in scope). */
#define WRITE_OR_FAIL(dir, file, v)                                                     \
  do {                                                                                  \
    if ((rc = lh_cg_write(dir, file, v)) < 0) {                                         \
      snprintf(err, errlen, "write %s/%s=%s: %s", dir, file, v, strerror(-rc));         \
      return rc;                                                                        \
    }                                                                                   \
  } while (0)

/* <dir>/<file>: 0 or -errno. */
int lh_cg_write(const char *dir, const char *file, const char *val);
/* NUL-terminated into buf (cap bytes at most). */
int lh_cg_read(const char *dir, const char *file, char *buf, size_t cap);
int lh_cg_read_u64(const char *dir, const char *file, uint64_t *out);
/* The `key` line of a "key value" file; -ENODATA when it has none. */
int lh_cg_read_key(const char *dir, const char *file, const char *key, uint64_t *out);
/* This process's path in a v1 hierarchy ("memory") or v2 (""). */
int lh_cg_own_cgroup_path(const char *controller, char *out, size_t cap);
/* Field 22 of /proc/<pid>/stat. */
int lh_cg_proc_starttime(pid_t pid, unsigned long long *out);
/* The pid namespace inode in this process's owner prefix. */
unsigned long long lh_cg_own_pidns(void);
/* Is `name` one of this process's live leases? */
int lh_cg_live_contains(const char *name);
int lh_cg_is_cgroup2(const char *path);
/* The cgroup2 mount point, or NULL. */
const char *lh_cg_v2_mount(void);
/* "memory pids cpu" all listed in `dir`/`file`. */
int lh_cg_has_all_controllers(const char *dir, const char *file);
int lh_cg_own_v2_dir(const char *mount, char *out, size_t cap);
/* mkdir <base>/leasehold/<name> (controllers enabled on a v2 parent). */
int lh_cg_make_lease_dir_in(const char *base, const char *name, char *out, size_t cap, char *err, size_t errlen);
/* One post-run counter into st[idx] (the test seam `faults` makes it EIO). */
void lh_cg_read_counter(struct lh_cgroup_stats *st, int idx, const char *faults, const char *dir, const char *file,
                        const char *key, uint64_t scale);

/* The limits of each path, written and read back; called by lh_cgroup_create
 * after the name is checked and registered. */
int lh_cg_create_v1(struct lh_cgroup *cg, const struct lh_cgroup_limits *lim, char *err, size_t errlen);
int lh_cg_create_v2(struct lh_cgroup *cg, const struct lh_cgroup_limits *lim, char *err, size_t errlen);
void lh_cg_read_stats_v1(const struct lh_cgroup *cg, struct lh_cgroup_stats *st, const char *faults);
void lh_cg_read_stats_v2(const struct lh_cgroup *cg, struct lh_cgroup_stats *st, const char *faults);
#endif
