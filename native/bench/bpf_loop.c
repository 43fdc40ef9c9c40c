/* SPDX-License-Identifier: UNLICENSED */
/* Tight loops of the operations the lease programs judge, for
 * bpf.bench.ts: `bpf_loop exec|open|connect|sendto N [port]`. Prints the
 * mean nanoseconds per operation. Run once inside a lease cgroup and once
 * outside, in the same run, the difference is the programs' cost. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  const char *op = argv[1];
  long n = atol(argv[2]);
  int port = argc > 3 ? atoi(argv[3]) : 0;
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int lfd = -1;
  if (!strcmp(op, "connect")) {
    /* Our own listener: the connect completes in the kernel, accept drains it. */
    struct sockaddr_in a = to;
    a.sin_port = 0;
    socklen_t al = sizeof a;
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 128) || getsockname(lfd, (struct sockaddr *)&a, &al)) return 3;
    if (port && ntohs(a.sin_port) != port) { /* the caller's rule names a port: listen there */
      close(lfd);
      lfd = socket(AF_INET, SOCK_STREAM, 0);
      int one = 1;
      setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (bind(lfd, (struct sockaddr *)&to, sizeof to) || listen(lfd, 128)) return 3;
    }
  }
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    if (!strcmp(op, "exec")) {
      pid_t p = fork();
      if (p == 0) { execl("/bin/true", "true", (char *)NULL); _exit(127); }
      int st;
      waitpid(p, &st, 0);
      if (!WIFEXITED(st) || WEXITSTATUS(st)) return 4;
    } else if (!strcmp(op, "open")) {
      int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
      if (fd < 0) return 4;
      close(fd);
    } else if (!strcmp(op, "connect")) {
      int s = socket(AF_INET, SOCK_STREAM, 0);
      if (connect(s, (struct sockaddr *)&to, sizeof to)) return 4;
      int c = accept(lfd, NULL, NULL);
      close(c);
      close(s);
    } else if (!strcmp(op, "sendto")) {
      static int s = -1;
      if (s < 0) s = socket(AF_INET, SOCK_DGRAM, 0);
      if (sendto(s, "x", 1, 0, (struct sockaddr *)&to, sizeof to) != 1) return 4;
    } else {
      return 2;
    }
  }
  printf("%.0f\n", (now_ns() - t0) / (double)n);
  return 0;
}
