/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "init.h"
#include "util.h"
#include <errno.h>
#include <stdint.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

/* Bytes and inodes in use on the lease's /tmp when the workload started. */
static int64_t tmp_bytes0 = -1, tmp_inodes0 = -1;

static int tmp_usage(int64_t *bytes, int64_t *inodes) {
  struct statfs s;
  if (statfs("/tmp", &s) < 0) return -1;
  *bytes = (int64_t)(s.f_blocks - s.f_bfree) * (int64_t)s.f_bsize;
  *inodes = (int64_t)(s.f_files - s.f_ffree);
  return 0;
}

void throwaway_mark(void) {
  if (tmp_usage(&tmp_bytes0, &tmp_inodes0) < 0) tmp_bytes0 = tmp_inodes0 = -1;
}

/* The root is a read-only tmpfs and /dev read-only, so /tmp is the only
 * throwaway place a workload can write to. Unmeasured: nothing reported (the
 * launcher then says so under limitations rather than claiming zero). */
static void report_throwaway(void) {
  int64_t b, i;
  if (tmp_bytes0 < 0 || tmp_usage(&b, &i) < 0) return;
  report("K tmp_bytes %lld", (long long)(b > tmp_bytes0 ? b - tmp_bytes0 : 0));
  report("K tmp_inodes %lld", (long long)(i > tmp_inodes0 ? i - tmp_inodes0 : 0));
}

void init_forward_set(sigset_t *set) {
  sigemptyset(set);
  static const int sigs[] = {SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT, SIGWINCH, SIGALRM};
  for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaddset(set, sigs[i]);
}

_Noreturn void run_init(pid_t workload, const sigset_t *set) {
  for (;;) {
    siginfo_t info;
    int sig = sigwaitinfo(set, &info);
    if (sig < 0) {
      if (errno == EINTR) continue;
      fail("init", errno, "sigwaitinfo");
    }
    if (sig != SIGCHLD) {
      (void)kill(workload, sig);
      continue;
    }
    for (;;) {
      int status;
      pid_t p = waitpid(-1, &status, WNOHANG);
      if (p <= 0) break;
      if (p != workload) continue; /* an orphan re-parented to us: reaped */
      if (WIFEXITED(status) || WIFSIGNALED(status)) report_throwaway();
      if (WIFEXITED(status)) {
        report("X %d 0", WEXITSTATUS(status));
        _exit(WEXITSTATUS(status));
      }
      if (WIFSIGNALED(status)) {
        report("X -1 %d", WTERMSIG(status));
        _exit(128 + WTERMSIG(status));
      }
    }
  }
}
