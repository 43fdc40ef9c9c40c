/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The one definition of everything the lease programs share with the host:
 * map keys and values, the ring-buffer event, flag bits and bounds. Read by
 * the BPF programs (bpf/NAME.bpf.c, with vmlinux.h), by the loader
 * (native/src/bpf_guard.c) and, as offsets, by TypeScript (native/bpf-abi.ts);
 * bpf/lease_abi.test.ts checks all three against each other and against the
 * BTF of the built objects.
 *
 * Layout rules: fixed-width types only, every hole written out as a named
 * `_pad` field that must be zero (hash and LPM keys are compared byte by
 * byte, so an uninitialised hole would make two equal keys differ), and
 * sizes/offsets asserted below so a change that moves a field fails the
 * build on every side at once.
 *
 * Which lease a task belongs to: every map is keyed by the lease's cgroup id
 * (the inode of its cgroup v2 directory). A program never trusts the task's
 * own cgroup alone: a workload that managed to create a child cgroup would
 * otherwise fall out of its lease. It asks for the task's ancestor at each
 * level where some lease lives (bpf_get_current_ancestor_cgroup_id, levels
 * 1..LH_MAX_LEVEL, the set of levels in use published by the loader in the
 * `lease_levels` global) and takes the first ancestor that is a lease. A
 * lease deeper than LH_MAX_LEVEL is refused by the loader, never run
 * unguarded. No lease found: the task is not ours and is left alone. */
#ifndef LEASEHOLD_LEASE_ABI_H
#define LEASEHOLD_LEASE_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#include <stddef.h>
#define LH_OFFSETOF(t, f) offsetof(t, f)
#else
#define LH_OFFSETOF(t, f) __builtin_offsetof(t, f)
#endif

/* Cgroup v2 levels searched for a lease (root = 0 is never a lease). */
#define LH_MAX_LEVEL 16

/* Bounds of the maps (hash and LPM maps are allocated on demand). */
#define LH_MAX_LEASES 1024
#define LH_MAX_EXEC_ENTRIES 262144  /* all leases together; one lease may hold at most 65,536 */
#define LH_MAX_FILE_ENTRIES 65536
#define LH_MAX_EGRESS_RULES 16384   /* per family, all leases together */
#define LH_RINGBUF_BYTES (256 * 1024)

/* lh_lease_value.flags */
#define LH_LEASE_EXEC 0x1u   /* exec only what exec_allow holds for this lease */
#define LH_LEASE_NET 0x2u    /* connect/sendmsg only to egress rules; only TCP/UDP inet sockets */
#define LH_LEASE_FILE 0x4u   /* tier A: file_open refused for what file_deny holds */

/* lh_event.kind: the same numbers as LH_DENY_* in native/src/bpf_guard.h. */
#define LH_EV_EXEC 1
#define LH_EV_CONNECT 2
#define LH_EV_SENDMSG 3
#define LH_EV_SOCKET 4
#define LH_EV_FILE 5

/* Map `leases`: cgroup id -> this value. `drops` counts this lease's events
 * the ring buffer had no room for (atomically incremented by the programs,
 * read by the loader at withdrawal). */
struct lh_lease_value {
  __u32 flags;
  __u32 _pad;
  __u64 drops;
};

/* Maps `exec_allow` (allow-list) and `file_deny` (tier A deny-list): one file
 * of one lease. `dev` is the KERNEL's s_dev (MAJOR << 20 | MINOR), not
 * stat()'s st_dev: the loader converts. */
struct lh_file_key {
  __u64 cgid;
  __u64 ino;
  __u32 dev;
  __u32 _pad;
};

/* Maps `egress4` / `egress6` (LPM tries, one per family, same key layout):
 * the prefix covers port and cgroup id exactly (32 + 64 bits) and then the
 * address prefix, so one lookup with prefixlen = 32 + 64 + 32 (or 128) finds
 * a rule of this lease, for this port, whose network holds the address.
 * Port first: the trie's data begins right after `prefixlen`, and putting
 * the 8-byte cgroup id at offset 8 leaves no hole. IPv4 uses addr[0..3]. */
struct lh_egress_key {
  __u32 prefixlen;
  __u16 port_be;   /* network byte order */
  __u16 _pad;      /* zero; part of the exact-match prefix */
  __u64 cgid;
  __u8 addr[16];   /* network byte order */
};
#define LH_EGRESS_FIXED_BITS (32 + 64)

/* Ring buffer `events`: one denial. */
struct lh_event {
  __u32 kind;      /* LH_EV_* */
  __u32 pid;       /* host tgid */
  __u64 cgid;      /* the lease it was filed under */
  __u64 ino;       /* exec/file */
  __u32 dev;       /* exec/file: kernel s_dev encoding */
  __u8 family;     /* connect/sendmsg: 4 or 6; socket: the AF_* number */
  __u8 proto;      /* IPPROTO_* ; socket: the SOCK_* type */
  __u16 port;      /* host byte order; socket: the protocol number */
  __u8 addr[16];   /* network byte order; IPv4 in addr[0..3] */
  char comm[16];
};

_Static_assert(sizeof(struct lh_lease_value) == 16, "lh_lease_value size");
_Static_assert(LH_OFFSETOF(struct lh_lease_value, drops) == 8, "lh_lease_value.drops");
_Static_assert(sizeof(struct lh_file_key) == 24, "lh_file_key size");
_Static_assert(LH_OFFSETOF(struct lh_file_key, ino) == 8, "lh_file_key.ino");
_Static_assert(LH_OFFSETOF(struct lh_file_key, dev) == 16, "lh_file_key.dev");
_Static_assert(sizeof(struct lh_egress_key) == 32, "lh_egress_key size");
_Static_assert(LH_OFFSETOF(struct lh_egress_key, port_be) == 4, "lh_egress_key.port_be");
_Static_assert(LH_OFFSETOF(struct lh_egress_key, cgid) == 8, "lh_egress_key.cgid");
_Static_assert(LH_OFFSETOF(struct lh_egress_key, addr) == 16, "lh_egress_key.addr");
_Static_assert(sizeof(struct lh_event) == 64, "lh_event size");
_Static_assert(LH_OFFSETOF(struct lh_event, cgid) == 8, "lh_event.cgid");
_Static_assert(LH_OFFSETOF(struct lh_event, ino) == 16, "lh_event.ino");
_Static_assert(LH_OFFSETOF(struct lh_event, dev) == 24, "lh_event.dev");
_Static_assert(LH_OFFSETOF(struct lh_event, family) == 28, "lh_event.family");
_Static_assert(LH_OFFSETOF(struct lh_event, proto) == 29, "lh_event.proto");
_Static_assert(LH_OFFSETOF(struct lh_event, port) == 30, "lh_event.port");
_Static_assert(LH_OFFSETOF(struct lh_event, addr) == 32, "lh_event.addr");
_Static_assert(LH_OFFSETOF(struct lh_event, comm) == 48, "lh_event.comm");

#endif
