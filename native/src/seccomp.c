/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "seccomp.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

/* Each entry: an escape, a large slice of kernel attack surface, or a
 * host-wide quota that a workload never needs. Namespaces and mounts would
 * let it rebuild its view of the host; ptrace/process_vm_* read other
 * processes; bpf, perf, io_uring, userfaultfd, keyctl are the usual
 * kernel-exploit primitives; open_by_handle_at is the "shocker" container
 * escape. io_setup reserves events from fs/aio-nr, one counter for the whole
 * host with no namespace or per-user share: a lease taking all of
 * fs/aio-max-nr makes io_setup fail with EAGAIN for every other process on
 * the host until it exits (glibc's POSIX AIO uses threads, not io_setup). */
static const char *const denied[] = {
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "unshare", "setns", "ptrace", "process_vm_readv",
    "process_vm_writev", "pidfd_getfd", "kcmp", "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
    "userfaultfd", "io_setup", "io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff", "open_by_handle_at",
    "name_to_handle_at", "acct", "quotactl", "quotactl_fd", "syslog", "lookup_dcookie", "vhangup",
    "iopl", "ioperm", "uselib", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "fanotify_init", "nfsservctl", NULL};

static void add_rule(scmp_filter_ctx ctx, int *n, uint32_t action, int nr, const char *what, unsigned count,
                     const struct scmp_arg_cmp *cmp) {
  int rc = seccomp_rule_add_array(ctx, action, nr, count, cmp);
  if (rc < 0 && rc != -EEXIST) fail("seccomp", -rc, what);
  (*n)++;
}

/* Socket families. A lease needs AF_UNIX; AF_INET/AF_INET6 only when its
 * policy lets it use TCP (today: Landlock ports on its own loopback).
 * Everything else is EAFNOSUPPORT, what a kernel without the family says,
 * so programs fall back cleanly. The reasons, family by family:
 * AF_VSOCK shares the VM's vsock port space (a bind collides with a host
 * listener) and connects to the hypervisor's transport, past every network
 * namespace; AF_NETLINK's NETLINK_KOBJECT_UEVENT hears the host's device
 * events and the other netlink protocols are large kernel surfaces;
 * AF_PACKET, AF_XDP, raw sockets, AF_ALG, AF_KEY, AF_TIPC, AF_RDS, AF_CAN,
 * Bluetooth... are where most socket CVEs of the last decade were found.
 * The domain is an int: the kernel ignores the upper 32 bits of the
 * register, so the rules are written so that any upper bit means "refuse"
 * (GT on the full 64-bit value) rather than "not equal, so allowed". */
static void add_socket_families(scmp_filter_ctx ctx, int *n, int inet) {
  static const int calls[2] = {SCMP_SYS(socket), SCMP_SYS(socketpair)};
  const uint32_t refuse = SCMP_ACT_ERRNO(EAFNOSUPPORT);
  for (int c = 0; c < 2; c++) {
    struct scmp_arg_cmp unspec = SCMP_A0(SCMP_CMP_EQ, AF_UNSPEC);
    add_rule(ctx, n, refuse, calls[c], "socket family 0", 1, &unspec);
    if (!inet) {
      struct scmp_arg_cmp above_unix = SCMP_A0(SCMP_CMP_GT, AF_UNIX);
      add_rule(ctx, n, refuse, calls[c], "socket families > AF_UNIX", 1, &above_unix);
      continue;
    }
    /* AF_UNIX=1, AF_INET=2, AF_INET6=10: refuse 3..9 and everything above 10 */
    for (int fam = AF_INET + 1; fam < AF_INET6; fam++) {
      struct scmp_arg_cmp eq = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fam);
      add_rule(ctx, n, refuse, calls[c], "socket family", 1, &eq);
    }
    struct scmp_arg_cmp above_inet6 = SCMP_A0(SCMP_CMP_GT, AF_INET6);
    add_rule(ctx, n, refuse, calls[c], "socket families > AF_INET6", 1, &above_inet6);
  }
}

int lock_memfd_noexec(void) {
  /* Since Linux 6.3 this sysctl belongs to the writer's pid namespace
   * (task_active_pid_ns(current), kernel/pid_sysctl.h): we are PID 1 of the
   * lease's new pid namespace and still host root, owner of that namespace.
   * 2 = every memfd is created MFD_NOEXEC_SEAL (mode 0666, F_SEAL_EXEC) and
   * MFD_EXEC is refused, so code staged in memory cannot be executed by
   * execve(/proc/self/fd/N), execveat or fexecve. The workload cannot lower
   * it: a write needs CAP_SYS_ADMIN over the pid namespace's owner (the
   * host's user namespace) and the kernel refuses values below the parent's. */
  char buf[16];
  int rc = write_file_str("/proc/sys/vm/memfd_noexec", "2");
  ssize_t n = read_file_buf("/proc/sys/vm/memfd_noexec", buf, sizeof buf);
  int value = n > 0 ? atoi(buf) : -1;
  report("K memfd_noexec %d", value);
  if (rc < 0 && rc != -ENOENT) report("K memfd_noexec_error %d", -rc);
  return value == 2;
}

/* A setuid/setgid file a lease leaves in the workdir would outlive it on the
 * host file system. Refuse every call that sets a mode with either bit:
 * `mode_arg` is the argument index of the mode, `flags_arg` (or -1) of the
 * open flags, where the mode only counts with O_CREAT or O_TMPFILE (the
 * kernel ignores it otherwise, and a caller may leave garbage there). */
static void add_no_special_bits(scmp_filter_ctx ctx, int *n, int nr, const char *what, unsigned mode_arg,
                                int flags_arg) {
  static const scmp_datum_t bits[2] = {S_ISUID, S_ISGID};
  /* 020000000 is the kernel's __O_TMPFILE bit alone (glibc's includes
   * O_DIRECTORY): the kernel takes the mode whenever this bit is set. */
  static const scmp_datum_t creating[2] = {O_CREAT, 020000000};
  for (int b = 0; b < 2; b++) {
    struct scmp_arg_cmp mode = {mode_arg, SCMP_CMP_MASKED_EQ, bits[b], bits[b]};
    if (flags_arg < 0) {
      add_rule(ctx, n, SCMP_ACT_ERRNO(EPERM), nr, what, 1, &mode);
      continue;
    }
    for (int f = 0; f < 2; f++) {
      struct scmp_arg_cmp cmp[2] = {{(unsigned)flags_arg, SCMP_CMP_MASKED_EQ, creating[f], creating[f]}, mode};
      add_rule(ctx, n, SCMP_ACT_ERRNO(EPERM), nr, what, 2, cmp);
    }
  }
}

/* fchmodat2 is 452 on every architecture (Linux 6.6); libseccomp 2.5.4 does
 * not know its name yet. */
#define LH_NR_FCHMODAT2 452

int apply_seccomp(const struct sandbox_config *cfg, int memfd_locked) {
  int n = 0, rc;
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) fail("seccomp", ENOMEM, "seccomp_init");
  /* Syscall numbers mean different things per ABI: a foreign arch (i386 via
   * int 0x80, x32) is killed rather than matched against x86_64 numbers. */
  if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0)
    fail("seccomp", -rc, "badarch action");
  for (int i = 0; denied[i]; i++) {
    int nr = seccomp_syscall_resolve_name(denied[i]);
    if (nr == __NR_SCMP_ERROR) continue; /* not a syscall on this arch */
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0)) < 0 && rc != -EEXIST)
      fail("seccomp", -rc, denied[i]);
    n++;
  }
  /* clone3 passes its flags in memory that seccomp cannot inspect: ENOSYS
   * makes libc fall back to clone(), whose flags we can filter below. */
  if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0) fail("seccomp", -rc, "clone3");
  n++;
  static const unsigned long ns_flags[] = {CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET,
                                           CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP};
  for (unsigned i = 0; i < sizeof ns_flags / sizeof ns_flags[0]; i++) {
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                               SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]))) < 0)
      fail("seccomp", -rc, "clone namespace flag");
    n++;
  }
  /* TIOCSTI pushes keystrokes into a terminal's input (CVE-2017-5226 in
   * bubblewrap); TIOCLINUX can read the console. Compare only the low 32
   * bits: the kernel does, and the upper half is caller-controlled. */
  static const unsigned long bad_ioctls[] = {TIOCSTI, TIOCLINUX};
  for (unsigned i = 0; i < 2; i++) {
    if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                               SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, bad_ioctls[i]))) < 0)
      fail("seccomp", -rc, "ioctl rule");
    n++;
  }
  add_socket_families(ctx, &n, cfg->sock_inet);

  /* Exec from memory. execveat(fd, "", AT_EMPTY_PATH) (and fexecve, which
   * uses it) executes a descriptor rather than a path, so neither the mount's
   * noexec nor Landlock's path rules see a memfd or an unlinked file there.
   * Refused whatever the fd is; glibc's fexecve then reports EPERM. Executing
   * a path (including /proc/self/fd/N) stays possible and is covered by the
   * memfd seal below and by noexec/Landlock for real files. */
  struct scmp_arg_cmp empty_path = SCMP_A4(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH);
  add_rule(ctx, &n, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(execveat), "execveat AT_EMPTY_PATH", 1, &empty_path);
  /* Without vm.memfd_noexec (kernels < 6.3) a memfd is always executable:
   * refuse memfd_create itself (programs using it for shared memory fall
   * back to files in /tmp, which is noexec or outside exec_allow). */
  if (!memfd_locked) add_rule(ctx, &n, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(memfd_create), "memfd_create", 0, NULL);

  add_no_special_bits(ctx, &n, SCMP_SYS(chmod), "chmod", 1, -1);
  add_no_special_bits(ctx, &n, SCMP_SYS(fchmod), "fchmod", 1, -1);
  add_no_special_bits(ctx, &n, SCMP_SYS(fchmodat), "fchmodat", 2, -1);
  add_no_special_bits(ctx, &n, LH_NR_FCHMODAT2, "fchmodat2", 2, -1);
  add_no_special_bits(ctx, &n, SCMP_SYS(creat), "creat", 1, -1);
  add_no_special_bits(ctx, &n, SCMP_SYS(mkdir), "mkdir", 1, -1);
  add_no_special_bits(ctx, &n, SCMP_SYS(mkdirat), "mkdirat", 2, -1);
  add_no_special_bits(ctx, &n, SCMP_SYS(mknod), "mknod", 1, -1);
  add_no_special_bits(ctx, &n, SCMP_SYS(mknodat), "mknodat", 2, -1);
  add_no_special_bits(ctx, &n, SCMP_SYS(open), "open", 2, 1);
  add_no_special_bits(ctx, &n, SCMP_SYS(openat), "openat", 3, 2);
  /* openat2 carries its mode in a struct in memory that seccomp cannot read:
   * ENOSYS, like clone3, so callers fall back to openat (filtered above). */
  add_rule(ctx, &n, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), "openat2", 0, NULL);

  if ((rc = seccomp_load(ctx)) < 0) fail("seccomp", -rc, "seccomp_load");
  seccomp_release(ctx);
  return n;
}
