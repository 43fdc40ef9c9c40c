/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "hostpath.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int valid_label(const char *l) {
  size_t n = strlen(l);
  if (n == 0 || n > 32 || l[0] < 'a' || l[0] > 'z') return 0;
  for (size_t i = 0; i < n; i++) {
    char c = l[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return 0;
  }
  return 1;
}

/* "-": the owner of the opened directory itself (hostpath_open_all). */
#define OWNER_OF_PATH ((unsigned long)-1)

static unsigned long parse_id(char *s) {
  if (!strcmp(s, "-")) return OWNER_OF_PATH;
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || *end || end == s || v > 0xfffffffeUL) fail("config", EINVAL, "hp: owner id");
  return v;
}

void hostpath_parse(struct sandbox_config *cfg, char *record) {
  if (cfg->n_host_paths >= LH_MAX_HOST_PATHS) fail("config", E2BIG, "hp: too many host paths");
  char *fields[4];
  char *p = record;
  for (int i = 0; i < 4; i++) {
    char *sp = strchr(p, ' ');
    if (!sp) fail("config", EINVAL, "hp: want '<ro|rw> <uid> <gid> <label> <path>'");
    *sp = 0;
    fields[i] = p;
    p = sp + 1;
  }
  struct lh_host_path *h = &cfg->host_paths[cfg->n_host_paths];
  if (strcmp(fields[0], "ro") && strcmp(fields[0], "rw")) fail("config", EINVAL, "hp: mode");
  h->rw = !strcmp(fields[0], "rw");
  unsigned long uid = parse_id(fields[1]), gid = parse_id(fields[2]);
  if ((uid == OWNER_OF_PATH) != (gid == OWNER_OF_PATH)) fail("config", EINVAL, "hp: owner uid and gid are both given or both '-'");
  h->owner_of_path = uid == OWNER_OF_PATH;
  h->owner_uid = h->owner_of_path ? 0 : (uid_t)uid;
  h->owner_gid = h->owner_of_path ? 0 : (gid_t)gid;
  if (!valid_label(fields[3])) fail("config", EINVAL, "hp: label");
  /* The path is resolved with openat2 below "/" and RESOLVE_BENEATH, which
   * refuses ".." escapes itself; "/" alone would hand over the whole host. */
  if (p[0] != '/' || p[1] == 0 || strlen(p) >= 4096) fail("config", EINVAL, "hp: path must be absolute and not /");
  for (int i = 0; i < cfg->n_host_paths; i++)
    if (!strcmp(cfg->host_paths[i].label, fields[3])) fail("config", EINVAL, "hp: label given twice");
  h->label = fields[3];
  h->path = p;
  h->fd = -1;
  h->userns_fd = -1;
  cfg->n_host_paths++;
}

/* From a descriptor of "/", never through a symlink: a path that is (or
 * passes through) a link, planted or swapped in before this call, is
 * refused with ELOOP, and what was opened is what gets bound — a link
 * swapped in afterwards changes nothing, because the bind is of this
 * descriptor's dentry, not of a path looked up again. */
static int open_no_symlinks(const char *path) {
  int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) fail("host_path", errno, "open /");
  struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                         .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH};
  int fd = (int)syscall(SYS_openat2, root, path + 1, &how, sizeof how);
  int err = errno;
  close(root);
  if (fd < 0) {
    char msg[4200];
    if (err == ELOOP) snprintf(msg, sizeof msg, "%s: a component is a symlink; host paths are never followed through links", path);
    else if (err == ENOSYS) snprintf(msg, sizeof msg, "%s: openat2 is not available (Linux >= 5.6 needed to open host paths without following links)", path);
    else if (err == ENOTDIR) snprintf(msg, sizeof msg, "%s: not a directory", path);
    else snprintf(msg, sizeof msg, "%s", path);
    fail("host_path", err, msg);
  }
  return fd;
}

/* The idmapping of an "rw" path: a user namespace whose uid_map and gid_map
 * are "<owner> <lease id> 1". Through a mount idmapped with it, a file the
 * owner holds on disk shows as the lease's, and whatever the lease creates
 * or changes is written to disk as the owner — never as a lease uid, which
 * would be left on the host as an orphan id. A short-lived child holds the
 * namespace while its maps are written; the descriptor keeps it after. */
static int make_idmap_userns(uid_t owner_uid, gid_t owner_gid, uid_t lease_uid, gid_t lease_gid) {
  int ready[2], hold[2];
  if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(hold, O_CLOEXEC) < 0) fail("host_path", errno, "pipe2");
  pid_t c = fork();
  if (c < 0) fail("host_path", errno, "fork idmap holder");
  if (c == 0) {
    close(ready[0]);
    close(hold[1]);
    char b = unshare(CLONE_NEWUSER) == 0 ? '1' : '0';
    if (write(ready[1], &b, 1) != 1) _exit(1);
    (void)!read(hold[0], &b, 1);
    _exit(0);
  }
  close(ready[1]);
  close(hold[0]);
  char b = 0;
  if (read(ready[0], &b, 1) != 1 || b != '1') fail("host_path", EPERM, "idmap: unshare(CLONE_NEWUSER) failed in the holder");
  close(ready[0]);
  char file[64], map[64];
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)owner_uid, (unsigned)lease_uid);
  snprintf(file, sizeof file, "/proc/%d/uid_map", (int)c);
  int rc = write_file_str(file, map);
  if (rc < 0) fail("host_path", -rc, "idmap uid_map");
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)owner_gid, (unsigned)lease_gid);
  snprintf(file, sizeof file, "/proc/%d/gid_map", (int)c);
  rc = write_file_str(file, map);
  if (rc < 0) fail("host_path", -rc, "idmap gid_map");
  snprintf(file, sizeof file, "/proc/%d/ns/user", (int)c);
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("host_path", errno, "open idmap user namespace");
  close(hold[1]);
  while (waitpid(c, NULL, 0) < 0 && errno == EINTR) {}
  return fd;
}

/* A detached, recursive clone of the opened directory with the lease's
 * flags set on every mount of it. Detached: nothing appears on the host,
 * and an idmapping can only be set on a mount not yet attached. */
static int clone_with_attrs(int fd, const char *label, uint64_t attrs, int userns_fd) {
  int tree = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
  if (tree < 0) fail("host_path", errno, errno == ENOSYS ? "open_tree is not available (Linux >= 5.2)" : label);
  struct mount_attr attr = {.attr_set = attrs, .userns_fd = userns_fd >= 0 ? (uint64_t)userns_fd : 0};
  if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0) {
    int err = errno;
    char msg[256];
    if (attrs & MOUNT_ATTR_IDMAP)
      snprintf(msg, sizeof msg, "%s: rw needs an idmapped mount (Linux >= 5.12 and a file system that allows idmapping on every mount of the tree); refused rather than letting the lease uid own host files", label);
    else
      snprintf(msg, sizeof msg, "%s: mount_setattr", label);
    fail("host_path", err, msg);
  }
  return tree;
}

static uint64_t attrs_for(const struct sandbox_config *cfg, const struct lh_host_path *h) {
  char inside[64];
  snprintf(inside, sizeof inside, LH_HOST_DIR "/%s", h->label);
  return MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (h->rw ? MOUNT_ATTR_IDMAP : MOUNT_ATTR_RDONLY) |
         (exec_allowed_under(cfg, inside) ? 0 : MOUNT_ATTR_NOEXEC);
}

void hostpath_open_all(struct sandbox_config *cfg) {
  for (int i = 0; i < cfg->n_host_paths; i++) {
    struct lh_host_path *h = &cfg->host_paths[i];
    int dir = open_no_symlinks(h->path);
    if (h->rw && h->owner_of_path) {
      /* The directory that will be bound, not a path looked up again. */
      struct stat st;
      if (fstat(dir, &st) < 0) fail("host_path", errno, h->path);
      h->owner_uid = st.st_uid;
      h->owner_gid = st.st_gid;
    }
    if (h->rw) h->userns_fd = make_idmap_userns(h->owner_uid, h->owner_gid, cfg->lease_uid, cfg->lease_gid);
    h->fd = clone_with_attrs(dir, h->label, attrs_for(cfg, h), h->userns_fd);
    close(dir);
    if (h->userns_fd >= 0) { close(h->userns_fd); h->userns_fd = -1; }
  }
}

void hostpath_attach_all(const struct sandbox_config *cfg, const char *newroot) {
  if (cfg->n_host_paths == 0) return;
  char target[128];
  snprintf(target, sizeof target, "%s" LH_HOST_DIR, newroot);
  if (mkdir(target, 0755) < 0 && errno != EEXIST) fail("host_path", errno, target);
  for (int i = 0; i < cfg->n_host_paths; i++) {
    const struct lh_host_path *h = &cfg->host_paths[i];
    snprintf(target, sizeof target, "%s" LH_HOST_DIR "/%s", newroot, h->label);
    if (mkdir(target, 0755) < 0) fail("host_path", errno, target);
    if (syscall(SYS_move_mount, h->fd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0) fail("host_path", errno, target);
  }
}

static int has_option(const char *opts, const char *want) {
  size_t n = strlen(want);
  for (const char *p = opts; p && *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == n && !strncmp(p, want, n)) return 1;
    p = comma ? comma + 1 : NULL;
  }
  return 0;
}

void hostpath_readback(const struct sandbox_config *cfg) {
  if (cfg->n_host_paths == 0) return;
  static char info[65536];
  ssize_t len = read_file_buf("/proc/self/mountinfo", info, sizeof info);
  if (len < 0) fail("host_path", (int)-len, "/proc/self/mountinfo");
  if ((size_t)len >= sizeof info - 1) fail("host_path", E2BIG, "/proc/self/mountinfo");
  for (int i = 0; i < cfg->n_host_paths; i++) {
    const struct lh_host_path *h = &cfg->host_paths[i];
    char point[64];
    snprintf(point, sizeof point, LH_HOST_DIR "/%s", h->label);
    const char *found = NULL;
    char opts[256];
    /* The last mount at this point is the one on top. Fields: id parent
     * maj:min root mount-point options ... */
    for (char *line = info; line && *line;) {
      char *nl = strchr(line, '\n');
      char mp[128], op[256];
      if (sscanf(line, "%*s %*s %*s %*s %127s %255s", mp, op) == 2 && !strcmp(mp, point)) {
        snprintf(opts, sizeof opts, "%s", op);
        found = opts;
      }
      line = nl ? nl + 1 : NULL;
    }
    if (!found) fail("host_path", ENOENT, point);
    int ok = has_option(found, "nosuid") && has_option(found, "nodev") &&
             (h->rw ? has_option(found, "rw") && has_option(found, "idmapped") : has_option(found, "ro"));
    if (!ok) fail("host_path", EPERM, "mount options read back lack what the mode needs");
    report("K hp %s %s", h->label, found);
  }
}

void hostpath_close_all(struct sandbox_config *cfg) {
  for (int i = 0; i < cfg->n_host_paths; i++) {
    if (cfg->host_paths[i].fd >= 0) close(cfg->host_paths[i].fd);
    cfg->host_paths[i].fd = -1;
  }
}

_Noreturn void hostpath_probe_idmap(const char *dir) {
  if (dup2(STDOUT_FILENO, 4) < 0) _exit(125);
  if (dir[0] != '/' || dir[1] == 0) fail("config", EINVAL, "probe: want an absolute directory other than /");
  int fd = open_no_symlinks(dir);
  struct stat st;
  if (fstat(fd, &st) < 0) fail("host_path", errno, dir);
  int ns = make_idmap_userns(st.st_uid, st.st_gid, 65534, 65534);
  int tree = clone_with_attrs(fd, "probe", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_IDMAP, ns);
  close(tree);
  close(ns);
  close(fd);
  report("ok");
  _exit(0);
}
