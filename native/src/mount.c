/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "mount.h"
#include "hostpath.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The new root is built on a tmpfs mounted over /tmp of our private copy of
 * the host's mount table (never visible on the host: propagation is cut
 * first). */
#define NEWROOT "/tmp"

static char interp_path[PATH_MAX];

const char *elf_interpreter_path(void) { return interp_path; }

static void ensure_dir(const char *path, mode_t mode) {
  if (mkdir(path, mode) < 0 && errno != EEXIST) fail("mount", errno, path);
}

static void ensure_file(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0444);
  if (fd < 0) fail("mount", errno, path);
  close(fd);
}

/* Adds restrictions recursively to an existing mount. mount_setattr only adds
 * flags here, so it also works on mounts the kernel locked when our user
 * namespace copied them (a plain MS_REMOUNT would have to repeat every
 * locked flag or fail with EPERM). */
static void restrict_mount(const char *target, uint64_t attrs) {
  struct mount_attr attr = {.attr_set = attrs};
  if (syscall(SYS_mount_setattr, AT_FDCWD, target, AT_RECURSIVE, &attr, sizeof attr) < 0)
    fail("mount", errno, target);
}

static void bind_path(const char *source, const char *target, uint64_t attrs) {
  if (mount(source, target, NULL, MS_BIND | MS_REC, NULL) < 0) fail("mount", errno, target);
  restrict_mount(target, attrs);
}

static void bind_fd(int fd, const char *target, uint64_t attrs) {
  char src[64];
  snprintf(src, sizeof src, "/proc/self/fd/%d", fd);
  bind_path(src, target, attrs);
}

void open_bind_sources(struct sandbox_config *cfg) {
  cfg->workdir_fd = open(cfg->workdir_host, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cfg->workdir_fd < 0) fail("workdir", errno, cfg->workdir_host);
  for (int i = 0; i < cfg->n_ro_binds; i++) {
    cfg->ro_bind_fds[i] = open(cfg->ro_binds[i], O_PATH | O_CLOEXEC);
    if (cfg->ro_bind_fds[i] < 0) fail("ro-bind", errno, cfg->ro_binds[i]);
  }
}

/* bin, lib, ... are symlinks into /usr on merged-/usr systems: recreate the
 * link instead of binding the target twice. */
static void mirror_top_level(const char *name) {
  char host[64], target[128], link[PATH_MAX];
  struct stat st;
  snprintf(host, sizeof host, "/%s", name);
  snprintf(target, sizeof target, NEWROOT "/%s", name);
  if (lstat(host, &st) < 0) return;
  if (S_ISLNK(st.st_mode)) {
    ssize_t n = readlink(host, link, sizeof link - 1);
    if (n < 0) fail("mount", errno, host);
    link[n] = 0;
    if (symlink(link, target) < 0) fail("mount", errno, target);
  } else if (S_ISDIR(st.st_mode)) {
    ensure_dir(target, 0755);
    bind_path(host, target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  }
}

static void write_new_file(const char *path, const char *content) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail("mount", errno, path);
  if (write_all(fd, content, strlen(content)) < 0) fail("mount", errno, path);
  close(fd);
}

/* Only what dynamic linking, name lookup and TLS need; never the host's
 * shadow, ssh keys or service configuration. */
static const char *const etc_entries[] = {
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "nsswitch.conf", "localtime",
    "alternatives", "ssl", "ca-certificates", "mime.types", "protocols", "services", NULL};

/* /etc/hosts: localhost, then the names the guest resolved (outside the
 * sandbox, when the lease started) for an egress lease, one validated
 * "<address> <name>" line each (helper.c). It lives on the root tmpfs,
 * which is made read-only after pivot_root, like every generated file here. */
static void write_hosts(const struct sandbox_config *cfg) {
  static char buf[LH_MAX_ITEMS * 320 + 128];
  size_t n = (size_t)snprintf(buf, sizeof buf, "127.0.0.1 localhost leasehold\n::1 localhost\n");
  for (int i = 0; i < cfg->n_hosts; i++) {
    size_t l = strlen(cfg->hosts[i]);
    if (n + l + 2 > sizeof buf) fail("mount", E2BIG, "/etc/hosts");
    memcpy(buf + n, cfg->hosts[i], l);
    n += l;
    buf[n++] = '\n';
  }
  buf[n] = 0;
  write_new_file(NEWROOT "/etc/hosts", buf);
}

static void setup_etc(const struct sandbox_config *cfg) {
  char src[PATH_MAX], dst[PATH_MAX];
  struct stat st;
  ensure_dir(NEWROOT "/etc", 0755);
  for (int i = 0; etc_entries[i]; i++) {
    snprintf(src, sizeof src, "/etc/%s", etc_entries[i]);
    snprintf(dst, sizeof dst, NEWROOT "/etc/%s", etc_entries[i]);
    if (stat(src, &st) < 0) continue;
    if (S_ISDIR(st.st_mode)) ensure_dir(dst, 0755);
    else ensure_file(dst);
    bind_path(src, dst, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  }
  /* Agents read it to learn the distribution. On Debian it is a symlink
   * into /usr/lib: bind the file it resolves to, never a link to follow. */
  char osr[PATH_MAX];
  if (realpath("/etc/os-release", osr) && stat(osr, &st) == 0 && S_ISREG(st.st_mode)) {
    ensure_file(NEWROOT "/etc/os-release");
    bind_path(osr, NEWROOT "/etc/os-release", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  }
  write_new_file(NEWROOT "/etc/passwd",
                 "root:x:0:0:root:/root:/usr/sbin/nologin\n"
                 "sandbox:x:1000:1000:leasehold sandbox:/work:/bin/sh\n"
                 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
  write_new_file(NEWROOT "/etc/group", "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n");
  write_new_file(NEWROOT "/etc/hostname", "leasehold\n");
  write_hosts(cfg);
  /* No nameserver: names an egress lease may use are in /etc/hosts, so the
   * workload needs no DNS, and a resolver query cannot carry data out.
   * (glibc falls back to 127.0.0.1, the lease's own loopback, where nothing
   * answers unless the workload itself listens there.) */
  write_new_file(NEWROOT "/etc/resolv.conf", "# leasehold: no DNS in this sandbox; names are in /etc/hosts\n");
}

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty", NULL};

static void setup_dev(void) {
  char src[64], dst[96];
  ensure_dir(NEWROOT "/dev", 0755);
  if (mount("tmpfs", NEWROOT "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64") < 0)
    fail("mount", errno, "/dev tmpfs");
  for (int i = 0; dev_nodes[i]; i++) {
    snprintf(src, sizeof src, "/dev/%s", dev_nodes[i]);
    snprintf(dst, sizeof dst, NEWROOT "/dev/%s", dev_nodes[i]);
    ensure_file(dst);
    /* A device node can only be reached through a bind of the host's node:
     * mknod needs CAP_MKNOD in the initial namespace. */
    bind_path(src, dst, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
  }
  if (symlink("/proc/self/fd", NEWROOT "/dev/fd") < 0 ||
      symlink("/proc/self/fd/0", NEWROOT "/dev/stdin") < 0 ||
      symlink("/proc/self/fd/1", NEWROOT "/dev/stdout") < 0 ||
      symlink("/proc/self/fd/2", NEWROOT "/dev/stderr") < 0)
    fail("mount", errno, "/dev links");
  restrict_mount(NEWROOT "/dev", MOUNT_ATTR_RDONLY);
}

/* /proc entries that show the host's boot, kernel build, hardware, disks or
 * keys rather than the sandbox's own processes (the usual container-runtime
 * list plus what names host devices here). Each that exists is covered by an
 * empty read-only file or directory; entries this kernel lacks are skipped. */
static const char *const masked_proc[] = {
    "cmdline", "config.gz", "sys/kernel/random/boot_id", "kcore", "keys", "key-users", "timer_list",
    "timer_stats", "sched_debug", "kallsyms", "latency_stats", "sysrq-trigger", "interrupts", "iomem",
    "ioports", "dma", "mtrr", "partitions", "diskstats", "swaps", "consoles", "misc", "devices", "kmsg",
    "kpagecount", "kpageflags", "kpagecgroup", "vmallocinfo", "acpi", "scsi", "asound", "bus", "driver",
    "irq", "fs", "tty", NULL};

#define MASKDIR NEWROOT "/.mask"

/* As root, before the identity drop, so the workload (no capabilities, no
 * mount syscalls) cannot take the masks away. The empty file and directory
 * live on a tiny tmpfs that is detached right after: the binds keep it. */
static void mask_proc(void) {
  char target[PATH_MAX];
  struct stat st;
  ensure_dir(MASKDIR, 0700);
  if (mount("tmpfs", MASKDIR, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k,nr_inodes=4") < 0)
    fail("mount", errno, "mask tmpfs");
  ensure_dir(MASKDIR "/dir", 0555);
  ensure_file(MASKDIR "/file");
  restrict_mount(MASKDIR, MOUNT_ATTR_RDONLY);
  for (int i = 0; masked_proc[i]; i++) {
    snprintf(target, sizeof target, NEWROOT "/proc/%s", masked_proc[i]);
    if (lstat(target, &st) < 0) {
      if (errno == ENOENT) continue;
      fail("mount", errno, target);
    }
    bind_path(S_ISDIR(st.st_mode) ? MASKDIR "/dir" : MASKDIR "/file", target,
              MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  }
  if (umount2(MASKDIR, MNT_DETACH) < 0) fail("mount", errno, "detach mask tmpfs");
  if (rmdir(MASKDIR) < 0) fail("mount", errno, "rmdir mask dir");
}

/* /usr is bound whole, so /usr/local (the operator's own scripts and tools)
 * would show through. An empty tmpfs covers it; ro_binds at or under
 * /usr/local are bound on top of it afterwards, then it is made read-only. */
static int hide_usr_local(void) {
  struct stat st;
  if (lstat(NEWROOT "/usr/local", &st) < 0 || !S_ISDIR(st.st_mode)) return 0;
  if (mount("tmpfs", NEWROOT "/usr/local", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=16k,nr_inodes=256") < 0)
    fail("mount", errno, "/usr/local tmpfs");
  return 1;
}

static void find_interpreter(void) {
  static const char *const candidates[] = {"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1",
                                           "/lib/ld-linux.so.2", NULL};
  for (int i = 0; candidates[i]; i++) {
    if (realpath(candidates[i], interp_path)) return;
  }
  interp_path[0] = 0;
}

void setup_newroot(const struct sandbox_config *cfg) {
  char opts[128], target[PATH_MAX];

  /* Our mount namespace is a copy of the host's and shares its peer groups:
   * without this, every mount below would propagate back to the host. */
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) fail("mount", errno, "make / rslave");
  find_interpreter();
  if (mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=256k,nr_inodes=512") < 0)
    fail("mount", errno, "root tmpfs");

  ensure_dir(NEWROOT "/usr", 0755);
  bind_path("/usr", NEWROOT "/usr", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  static const char *const tops[] = {"bin", "sbin", "lib", "lib64", "lib32", "libx32", NULL};
  int usr_local = hide_usr_local();
  for (int i = 0; tops[i]; i++) mirror_top_level(tops[i]);
  setup_etc(cfg);
  setup_dev();

  ensure_dir(NEWROOT "/proc", 0555);
  /* A proc of our own pid namespace: host processes are not listed, and
   * /proc/1 is our init. hidepid is unnecessary for the same reason. */
  if (mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    fail("mount", errno, "/proc (is /proc on the host overmounted?)");
  mask_proc();

  ensure_dir(NEWROOT "/tmp", 01777);
  snprintf(opts, sizeof opts, "mode=1777,size=%llu,nr_inodes=%llu", (unsigned long long)cfg->tmp_bytes,
           (unsigned long long)cfg->tmp_inodes);
  if (mount("tmpfs", NEWROOT "/tmp", "tmpfs",
            MS_NOSUID | MS_NODEV | (exec_allowed_under(cfg, "/tmp") ? 0 : MS_NOEXEC), opts) < 0)
    fail("mount", errno, "/tmp tmpfs");

  for (int i = 0; i < cfg->n_ro_binds; i++) {
    snprintf(target, sizeof target, NEWROOT "%s", cfg->ro_binds[i]);
    struct stat st;
    if (fstat(cfg->ro_bind_fds[i], &st) < 0) fail("ro-bind", errno, cfg->ro_binds[i]);
    /* parents of an extra bind are created on the (still writable) root */
    for (char *p = target + strlen(NEWROOT) + 1; *p; p++) {
      if (*p == '/') { *p = 0; ensure_dir(target, 0755); *p = '/'; }
    }
    if (S_ISDIR(st.st_mode)) ensure_dir(target, 0755);
    else ensure_file(target);
    bind_fd(cfg->ro_bind_fds[i], target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  }

  if (usr_local) restrict_mount(NEWROOT "/usr/local", MOUNT_ATTR_RDONLY);
  hostpath_attach_all(cfg, NEWROOT);

  /* Always at /work: `cwd` is only chdir'ed to (a sub-directory need not
   * exist on the root tmpfs). An observe lease gets the kernel's read-only
   * flag on the bind, so nothing it runs can change the workspace. */
  ensure_dir(NEWROOT LH_WORKSPACE, 0755);
  bind_fd(cfg->workdir_fd, NEWROOT LH_WORKSPACE,
          MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (cfg->workdir_ro ? MOUNT_ATTR_RDONLY : 0) |
              (exec_allowed_under(cfg, LH_WORKSPACE) ? 0 : MOUNT_ATTR_NOEXEC));

  /* pivot_root(".", ".") stacks the old root on top of the new one; the
   * detach below then removes every host mount from our view, so nothing of
   * the host stays reachable through "..", fds or mount propagation. */
  if (chdir(NEWROOT) < 0) fail("pivot", errno, "chdir(newroot)");
  if (syscall(SYS_pivot_root, ".", ".") < 0) fail("pivot", errno, "pivot_root");
  if (umount2(".", MNT_DETACH) < 0) fail("pivot", errno, "detach old root");
  if (chdir("/") < 0) fail("pivot", errno, "chdir(/)");
  struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
  if (syscall(SYS_mount_setattr, AT_FDCWD, "/", 0, &ro, sizeof ro) < 0) fail("mount", errno, "root read-only");
}
