/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "init.h"
#include "util.h"
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

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
