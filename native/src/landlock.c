/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "landlock.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef __cplusplus
#include "util.h"
#endif

/* Debian 12's uapi headers stop at Landlock ABI 3; the kernel here offers 7.
 * The values below are the kernel's uapi (include/uapi/linux/landlock.h) and
 * never change once released. */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));
struct ll_net_port_attr {
  uint64_t allowed_access;
  uint64_t port;
};

int landlock_probe_abi(void) {
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : (int)abi;
}

#ifndef __cplusplus
static uint64_t fs_handled_for_abi(int abi) {
  uint64_t all = LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_REMOVE_DIR |
                 LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK |
                 LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM;
  if (abi >= 2) all |= LL_FS_REFER;
  if (abi >= 3) all |= LL_FS_TRUNCATE;
  if (abi >= 5) all |= LL_FS_IOCTL_DEV;
  return all;
}

#define FILE_ONLY_ACCESS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

/* required: a missing path fails the launch (policy rule); otherwise a
 * system default that does not exist on this host is skipped. */
static void add_path_rule(int ruleset, const char *path, uint64_t access, uint64_t handled, int required) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (!required && errno == ENOENT) return;
    fail("landlock", errno, path);
  }
  struct stat st;
  if (fstat(fd, &st) < 0) fail("landlock", errno, path);
  access &= handled;
  if (!S_ISDIR(st.st_mode)) access &= FILE_ONLY_ACCESS;
  struct ll_path_beneath_attr attr = {.allowed_access = access, .parent_fd = fd};
  if (access && syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &attr, 0) < 0)
    fail("landlock", errno, path);
  close(fd);
}

int apply_landlock(const struct sandbox_config *cfg, const char *interpreter) {
  int abi = landlock_probe_abi();
  if (abi < cfg->landlock_abi_min) fail("landlock", ENOSYS, "kernel Landlock ABI below the policy's minimum");
  uint64_t handled = fs_handled_for_abi(abi);
  struct ll_ruleset_attr attr = {.handled_access_fs = handled};
  size_t attr_size = sizeof(uint64_t);
  if (abi >= 4) {
    /* An egress lease's connects (TCP and UDP, by address and port) are the
     * BPF allow-list's to decide, which records every denial for the
     * evidence; Landlock refusing first (port only, EACCES, unrecorded)
     * would hide them. Binding stays Landlock's. */
    attr.handled_access_net = LL_NET_BIND_TCP | (cfg->net_egress ? 0 : LL_NET_CONNECT_TCP);
    attr_size = 2 * sizeof(uint64_t);
  } else if (cfg->n_tcp_bind || cfg->n_tcp_connect) {
    fail("landlock", ENOSYS, "TCP rules need Landlock ABI 4");
  }
  if (abi >= 6) {
    if (cfg->landlock_scope) attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
    attr_size = sizeof attr;
  } else if (cfg->landlock_scope) {
    fail("landlock", ENOSYS, "signal/socket scoping needs Landlock ABI 6");
  }
  int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
  if (ruleset < 0) fail("landlock", errno, "landlock_create_ruleset");

  const uint64_t ro = LL_FS_READ_FILE | LL_FS_READ_DIR;
  const uint64_t rw = ro | LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_DIR | LL_FS_MAKE_REG |
                      LL_FS_MAKE_SYM | LL_FS_MAKE_FIFO | LL_FS_MAKE_SOCK | LL_FS_REFER | LL_FS_TRUNCATE;
  static const char *const system_ro[] = {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
                                          "/etc", "/proc", NULL};
  for (int i = 0; system_ro[i]; i++) add_path_rule(ruleset, system_ro[i], ro, handled, 0);
  /* Listing the (synthetic) root is harmless; reading files still needs a
   * rule for their own directory. */
  add_path_rule(ruleset, "/", LL_FS_READ_DIR, handled, 1);
  /* /dev nodes: read/write (null, zero, tty...) and their ioctls; seccomp
   * separately refuses TIOCSTI/TIOCLINUX. */
  add_path_rule(ruleset, "/dev", ro | LL_FS_WRITE_FILE | LL_FS_IOCTL_DEV, handled, 0);
  add_path_rule(ruleset, "/tmp", rw, handled, 1);
  /* The workspace may be shared by concurrent leases: a socket or FIFO file
   * there would be a rendezvous between them (a unix socket even passes
   * descriptors). /tmp is per lease and keeps both. An observe lease
   * (workdir_ro) also gets no write right at all, under the read-only bind. */
  const uint64_t rw_shared = rw & ~(LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO);
  add_path_rule(ruleset, LH_WORKSPACE, cfg->workdir_ro ? ro : rw_shared, handled, 1);
  for (int i = 0; i < cfg->n_ro_binds; i++) add_path_rule(ruleset, cfg->ro_binds[i], ro, handled, 1);
  /* Host paths get their mode's rule (never a socket or FIFO: the host's
   * own services would share it). The mount's own flags hold the same. */
  for (int i = 0; i < cfg->n_host_paths; i++) {
    char inside[64];
    snprintf(inside, sizeof inside, LH_HOST_DIR "/%s", cfg->host_paths[i].label);
    add_path_rule(ruleset, inside, cfg->host_paths[i].rw ? rw_shared : ro, handled, 1);
  }
  for (int i = 0; i < cfg->n_ll_ro; i++) add_path_rule(ruleset, cfg->ll_ro[i], ro, handled, 1);
  for (int i = 0; i < cfg->n_ll_rw; i++) add_path_rule(ruleset, cfg->ll_rw[i], rw_shared, handled, 1);
  for (int i = 0; i < cfg->n_ll_exec; i++) add_path_rule(ruleset, cfg->ll_exec[i], ro | LL_FS_EXECUTE, handled, 1);
  /* The kernel opens a dynamic binary's interpreter for execution too, so it
   * needs EXECUTE; this is the documented hole: `ld.so /any/readable/elf`
   * runs binaries outside exec_allow. */
  if (cfg->n_ll_exec && interpreter && interpreter[0])
    add_path_rule(ruleset, interpreter, LL_FS_EXECUTE | LL_FS_READ_FILE, handled, 1);

  for (int i = 0; i < cfg->n_tcp_connect && !cfg->net_egress; i++) {
    struct ll_net_port_attr p = {.allowed_access = LL_NET_CONNECT_TCP, .port = cfg->tcp_connect[i]};
    if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &p, 0) < 0) fail("landlock", errno, "tcp connect rule");
  }
  for (int i = 0; i < cfg->n_tcp_bind; i++) {
    struct ll_net_port_attr p = {.allowed_access = LL_NET_BIND_TCP, .port = cfg->tcp_bind[i]};
    if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &p, 0) < 0) fail("landlock", errno, "tcp bind rule");
  }
  if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0) fail("landlock", errno, "landlock_restrict_self");
  close(ruleset);
  return abi;
}
#endif
