/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "seccomp.h"
#include "util.h"
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>

/* Each entry: an escape or a large slice of kernel attack surface that a
 * workload never needs. Namespaces and mounts would let it rebuild its view
 * of the host; ptrace/process_vm_* read other processes; bpf, perf, io_uring,
 * userfaultfd, keyctl are the usual kernel-exploit primitives;
 * open_by_handle_at is the "shocker" container escape. */
static const char *const denied[] = {
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "unshare", "setns", "ptrace", "process_vm_readv",
    "process_vm_writev", "pidfd_getfd", "kcmp", "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
    "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff", "open_by_handle_at",
    "name_to_handle_at", "acct", "quotactl", "quotactl_fd", "syslog", "lookup_dcookie", "vhangup",
    "iopl", "ioperm", "uselib", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "fanotify_init", "nfsservctl", NULL};

int apply_seccomp(void) {
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
  if ((rc = seccomp_load(ctx)) < 0) fail("seccomp", -rc, "seccomp_load");
  seccomp_release(ctx);
  return n;
}
