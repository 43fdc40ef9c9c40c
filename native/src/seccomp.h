/* SPDX-License-Identifier: UNLICENSED */
/* seccomp filter: kernel attack surface and namespace/mount escapes, the
 * socket-family allow-list, exec from memory, setuid/setgid modes. */
#ifndef LEASEHOLD_SECCOMP_H
#define LEASEHOLD_SECCOMP_H
#include "config.h"
/* In the sandbox's PID 1 while it is still host root: sets vm.memfd_noexec=2
 * for the lease's pid namespace and reports the value read back
 * ("K memfd_noexec N", -1 when the kernel has no such sysctl). Returns 1 when
 * the kernel now seals every memfd of the lease non-executable. */
int lock_memfd_noexec(void);
/* Loads the filter into the calling process (needs no_new_privs). Fails
 * closed. `memfd_locked`: lock_memfd_noexec() succeeded; otherwise
 * memfd_create itself is refused. Returns the number of rules installed. */
int apply_seccomp(const struct sandbox_config *cfg, int memfd_locked);
#endif
