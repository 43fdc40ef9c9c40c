/* SPDX-License-Identifier: UNLICENSED */
/* What the workload sees on disk: a tmpfs root, read-only system binds, the
 * workspace at /work (read-write, or read-only for an observe lease), a capped
 * /tmp, a new /proc with host-revealing entries masked, a minimal /dev, no
 * /sys, no /usr/local. */
#ifndef LEASEHOLD_MOUNT_H
#define LEASEHOLD_MOUNT_H
#include "config.h"
/* As host root, before the identity drop: open bind sources as O_PATH fds so
 * that paths only root may traverse can still be bound later. */
void open_bind_sources(struct sandbox_config *cfg);
/* Inside the new user+mount namespace (PID 1 of the new pid namespace):
 * builds the new root, pivots into it and detaches the old one. */
void setup_newroot(const struct sandbox_config *cfg);
/* Path of the ELF interpreter (e.g. /usr/lib64/ld-linux-x86-64.so.2), for
 * the Landlock execute rule; empty if unknown. Valid after setup_newroot. */
const char *elf_interpreter_path(void);
#endif
