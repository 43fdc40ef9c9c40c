/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Maps and helpers shared by both tiers' programs. Each object gets its own
 * instance of these maps; the loader fills the ones of the object that
 * enforces (only one tier is ever active in a process). */
#ifndef LEASEHOLD_LEASE_BPF_H
#define LEASEHOLD_LEASE_BPF_H
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "../lease_abi.h"

/* uapi macros vmlinux.h cannot carry */
#define LH_AF_UNIX 1
#define LH_AF_INET 2
#define LH_AF_INET6 10
#define LH_AF_NETLINK 16
#define LH_AF_PACKET 17
#define LH_SOCK_STREAM 1
#define LH_SOCK_DGRAM 2
#define LH_SOCK_RAW 3
#define LH_IPPROTO_TCP 6
#define LH_IPPROTO_UDP 17
#define LH_EPERM 1
#define LH_SIGKILL 9

/* Must agree with the SPDX line above (bpf/README.md "Licence"): the kernel
 * loads LSM programs and lets any program call GPL-only helpers such as
 * bpf_probe_read_kernel only when this string is GPL-compatible, and
 * "Dual BSD/GPL" is one of the strings it accepts. */
char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, LH_MAX_LEASES);
  __type(key, __u64);
  __type(value, struct lh_lease_value);
} leases SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, LH_MAX_EXEC_ENTRIES);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct lh_file_key);
  __type(value, __u8);
} exec_allow SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LPM_TRIE);
  __uint(max_entries, LH_MAX_EGRESS_RULES);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct lh_egress_key);
  __type(value, __u8);
} egress4 SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LPM_TRIE);
  __uint(max_entries, LH_MAX_EGRESS_RULES);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct lh_egress_key);
  __type(value, __u8);
} egress6 SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, LH_RINGBUF_BYTES);
} events SEC(".maps");

/* Written by the loader through the skeleton's mmapped .bss: bit L set while
 * some lease lives at cgroup level L. Lets a process outside every lease
 * pay one load instead of LH_MAX_LEVEL map lookups. */
__u32 lease_levels = 0;
/* Events lost to a full ring buffer, all leases together (each lease also
 * counts its own in lh_lease_value.drops). */
__u64 drops_total = 0;

/* Never used at run time: puts struct lh_event into each object's BTF (a
 * local's type would not be), so bpf/lease_abi.test.ts can check the event
 * layout against what the kernel side was compiled with. */
struct lh_event *lh_event_btf __attribute__((unused));

/* The lease the current task belongs to, through its ancestors (see
 * lease_abi.h): a task in a child cgroup of a lease is still in the lease. */
static __always_inline struct lh_lease_value *lease_of_current(__u64 *cgid) {
  __u32 levels = lease_levels;
  if (!levels) return 0;
  for (int l = 1; l <= LH_MAX_LEVEL; l++) {
    if (!(levels & (1u << l))) continue;
    __u64 id = bpf_get_current_ancestor_cgroup_id(l);
    if (!id) break; /* the task's cgroup is shallower than l */
    struct lh_lease_value *v = bpf_map_lookup_elem(&leases, &id);
    if (v) {
      *cgid = id;
      return v;
    }
  }
  return 0;
}

/* A zeroed event with the common fields, or NULL (counted) when the ring
 * buffer is full: a denial still happens, only its record is lost, and the
 * loss is visible in the lease's evidence. */
static __always_inline struct lh_event *event_new(struct lh_lease_value *lease, __u64 cgid, __u32 kind) {
  struct lh_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e) {
    __sync_fetch_and_add(&lease->drops, 1);
    __sync_fetch_and_add(&drops_total, 1);
    return 0;
  }
  __builtin_memset(e, 0, sizeof(*e));
  e->kind = kind;
  e->pid = (__u32)(bpf_get_current_pid_tgid() >> 32);
  e->cgid = cgid;
  bpf_get_current_comm(e->comm, sizeof(e->comm));
  return e;
}

static __always_inline int file_in(void *map, __u64 cgid, struct file *f, __u32 *dev, __u64 *ino) {
  struct lh_file_key k = {};
  k.cgid = cgid;
  k.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
  k.ino = BPF_CORE_READ(f, f_inode, i_ino);
  *dev = k.dev;
  *ino = k.ino;
  return bpf_map_lookup_elem(map, &k) != 0;
}

static __always_inline void emit_file(struct lh_lease_value *lease, __u64 cgid, __u32 kind, __u32 dev, __u64 ino) {
  struct lh_event *e = event_new(lease, cgid, kind);
  if (!e) return;
  e->dev = dev;
  e->ino = ino;
  bpf_ringbuf_submit(e, 0);
}

static __always_inline int egress_allowed4(__u64 cgid, __u32 ip_be, __u16 port_be) {
  struct lh_egress_key k = {};
  k.prefixlen = LH_EGRESS_FIXED_BITS + 32;
  k.port_be = port_be;
  k.cgid = cgid;
  __builtin_memcpy(k.addr, &ip_be, 4);
  return bpf_map_lookup_elem(&egress4, &k) != 0;
}

/* An IPv4-mapped IPv6 destination (::ffff:a.b.c.d) on a dual-stack socket
 * reaches the IPv4 address: it is judged by the IPv4 rules, so an IPv6
 * allow-list can never be used to reach an IPv4 host that is not listed. */
static __always_inline int v4_mapped(const __u32 *ip6) {
  return ip6[0] == 0 && ip6[1] == 0 && ip6[2] == bpf_htonl(0x0000ffff);
}

static __always_inline int egress_allowed6(__u64 cgid, const __u32 *ip6, __u16 port_be) {
  if (v4_mapped(ip6)) return egress_allowed4(cgid, ip6[3], port_be);
  struct lh_egress_key k = {};
  k.prefixlen = LH_EGRESS_FIXED_BITS + 128;
  k.port_be = port_be;
  k.cgid = cgid;
  __builtin_memcpy(k.addr, ip6, 16);
  return bpf_map_lookup_elem(&egress6, &k) != 0;
}

static __always_inline void emit_net(struct lh_lease_value *lease, __u64 cgid, __u32 kind, __u8 family,
                                     const __u32 *ip, __u16 port_be, __u8 proto) {
  struct lh_event *e = event_new(lease, cgid, kind);
  if (!e) return;
  e->family = family;
  e->proto = proto;
  e->port = bpf_ntohs(port_be);
  if (family == 4) __builtin_memcpy(e->addr, ip, 4);
  else __builtin_memcpy(e->addr, ip, 16);
  bpf_ringbuf_submit(e, 0);
}

/* Only TCP and UDP over IPv4/IPv6 have connect/sendmsg hooks that see every
 * destination: a lease under an egress list gets nothing else (no raw, no
 * packet, no ICMP "ping" sockets, no SCTP, no MPTCP). Protocol 0 is the
 * family's default for the type (TCP for stream, UDP for datagram). */
static __always_inline int socket_refused(int family, int type, int protocol) {
  if (family == LH_AF_PACKET || type == LH_SOCK_RAW) return 1;
  if (family != LH_AF_INET && family != LH_AF_INET6) return 0;
  if (type == LH_SOCK_STREAM && (protocol == 0 || protocol == LH_IPPROTO_TCP)) return 0;
  if (type == LH_SOCK_DGRAM && (protocol == 0 || protocol == LH_IPPROTO_UDP)) return 0;
  return 1;
}

static __always_inline void emit_socket(struct lh_lease_value *lease, __u64 cgid, int family, int type, int protocol) {
  struct lh_event *e = event_new(lease, cgid, LH_EV_SOCKET);
  if (!e) return;
  e->family = (__u8)family;
  e->proto = (__u8)type;
  e->port = (__u16)protocol;
  bpf_ringbuf_submit(e, 0);
}
#endif
