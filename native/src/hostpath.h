/* SPDX-License-Identifier: UNLICENSED */
/* Host paths a ceiling lists, bound into the lease at /host/<label>
 * (native/README.md "Host paths"). */
#ifndef LEASEHOLD_HOSTPATH_H
#define LEASEHOLD_HOSTPATH_H
#include "config.h"

/* Parses one "hp" record, "<ro|rw> <owner uid> <owner gid> <label> <path>",
 * into cfg (the path is the rest of the record). Refuses a malformed one. */
void hostpath_parse(struct sandbox_config *cfg, char *record);
/* As host root, after the helper's unshare(CLONE_NEWNS) and before PID 1 is
 * forked: opens every path by descriptor without following any symlink and,
 * for an "rw" path, makes the user namespace its idmapped mount maps the
 * lease uid/gid to the owner with. Both are inherited by PID 1. */
void hostpath_open_all(struct sandbox_config *cfg);
/* In PID 1, before pivot_root: attaches each opened path as a detached
 * clone at <newroot>/host/<label> with its flags. */
void hostpath_attach_all(const struct sandbox_config *cfg, const char *newroot);
/* After pivot_root, still host root: reads each mount's options back from
 * /proc/self/mountinfo and reports "K hp <label> <options>"; refuses a mount
 * whose options lack what its mode needs. */
void hostpath_readback(const struct sandbox_config *cfg);
void hostpath_close_all(struct sandbox_config *cfg);
/* `leasehold-sandbox --probe-idmap <dir>`: whether this kernel and the file
 * system holding <dir> take an idmapped bind of it (exit 0 and "ok"), or why
 * not ("E <stage> <errno> <text>"). Nothing is attached anywhere. */
_Noreturn void hostpath_probe_idmap(const char *dir);
#endif
