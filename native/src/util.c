/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "util.h"
#include "protocol.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

int write_file_str(const char *path, const char *s) {
  int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return -errno;
  int rc = write_all(fd, s, strlen(s));
  if (close(fd) < 0 && rc == 0) rc = -errno;
  return rc;
}

ssize_t read_file_buf(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return -errno;
  size_t got = 0;
  while (got + 1 < cap) {
    ssize_t n = read(fd, buf + got, cap - 1 - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      return -e;
    }
    if (n == 0) break;
    got += (size_t)n;
  }
  buf[got] = 0;
  close(fd);
  return (ssize_t)got;
}

void report(const char *fmt, ...) {
  char line[480];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n > sizeof line - 2) n = sizeof line - 2;
  line[n++] = '\n';
  (void)write_all(LH_FD_STATUS, line, (size_t)n);
}

_Noreturn void fail(const char *stage, int err, const char *what) {
  char safe[300];
  size_t i = 0;
  /* The record is one line: keep the reason on it. */
  for (; what && what[i] && i < sizeof safe - 1; i++) safe[i] = (what[i] == '\n') ? ' ' : what[i];
  safe[i] = 0;
  report("E %s %d %s", stage, err, safe);
  _exit(125);
}
