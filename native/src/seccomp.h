/* SPDX-License-Identifier: UNLICENSED */
/* seccomp deny-list: kernel attack surface and namespace/mount escapes. */
#ifndef LEASEHOLD_SECCOMP_H
#define LEASEHOLD_SECCOMP_H
/* Loads the filter into the calling process (needs no_new_privs). Fails
 * closed. Returns the number of deny rules installed. */
int apply_seccomp(void);
#endif
