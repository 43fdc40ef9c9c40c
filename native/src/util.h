/* SPDX-License-Identifier: UNLICENSED */
/* Small helpers shared by the helper process: status reporting and files. */
#ifndef LEASEHOLD_UTIL_H
#define LEASEHOLD_UTIL_H
#include <stddef.h>
#include <sys/types.h>

int write_all(int fd, const void *buf, size_t len);
/* Returns 0 or -errno. */
int write_file_str(const char *path, const char *s);
/* Reads up to cap-1 bytes, NUL-terminates. Returns length or -errno. */
ssize_t read_file_buf(const char *path, char *buf, size_t cap);

/* Writes one status record line to LH_FD_STATUS (atomic: < PIPE_BUF). */
void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reports "E stage errno what" and exits 125. Nothing of the workload runs. */
_Noreturn void fail(const char *stage, int err, const char *what);
#endif
