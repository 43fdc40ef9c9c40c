/* SPDX-License-Identifier: UNLICENSED */
/* The lease allow-list programs (bpf/), host side: loaded once per process,
 * tier detection by functional self-test, a per-lease add / withdraw API
 * keyed by the lease's cgroup v2 id, and the denial events of each lease.
 * Thread-safe: lh_launch calls it from launch threads. Nothing is pinned:
 * every attachment is a bpf_link owned by this process, so a crashed agent
 * leaves nothing attached. See bpf/README.md and
 * docs/design.md#enforcement. */
#ifndef LEASEHOLD_BPF_GUARD_H
#define LEASEHOLD_BPF_GUARD_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* 'A' BPF-LSM, 'B' cgroup-BPF + exec kill, 'C' neither (Landlock + seccomp + empty netns). */
struct lh_bpf_status {
  char tier;
  char object_sha256[65];   /* hex SHA-256 of the BPF object that enforces the tier ("" for C) */
  char detail[1024];        /* what was tried and why a stronger tier was refused */
};

/* Loads, attaches the global programs and runs the self-tests once per
 * process (later calls return the first answer). Never fails: a host where
 * nothing loads is tier C with the reason in detail. `LEASEHOLD_BPF_TIER`
 * is not read here; callers may only ask for a WEAKER tier via max_tier
 * ('A', 'B' or 'C'; 0 = strongest available). */
void lh_bpf_init(char max_tier, struct lh_bpf_status *st);

/* One egress rule: family 4 or 6, address in network byte order (first 4
 * bytes for IPv4), prefix length, port (host byte order). TCP and UDP alike. */
struct lh_bpf_rule {
  uint8_t family;
  uint8_t prefix;
  uint16_t port;
  uint8_t addr[16];
};

/* Exec allow-list entry as stat() reports it (st_dev in glibc encoding);
 * the loader converts to the kernel's s_dev encoding. */
struct lh_bpf_file { uint64_t dev, ino; };

struct lh_bpf_lease_spec {
  uint64_t cgroup_id;                 /* inode of the lease's cgroup v2 directory */
  const char *cgroup_path;            /* that directory (tier B attaches cgroup programs to it) */
  int exec_enforced;                  /* 1: only the files below may be exec'd */
  const struct lh_bpf_file *exec; size_t n_exec;
  int net_enforced;                   /* 1: only the rules below may be connected/sent to; raw/packet sockets refused */
  const struct lh_bpf_rule *egress; size_t n_egress;
};

/* A denial, as the ring buffer reported it. */
enum { LH_DENY_EXEC = 1, LH_DENY_CONNECT = 2, LH_DENY_SENDMSG = 3, LH_DENY_SOCKET = 4, LH_DENY_FILE = 5 };
struct lh_bpf_denial {
  uint32_t kind;          /* LH_DENY_* */
  uint32_t pid;           /* host pid */
  uint8_t family;         /* connect/sendmsg: 4 or 6; socket: the AF_* number */
  uint8_t proto;          /* IPPROTO_TCP / IPPROTO_UDP / socket type for LH_DENY_SOCKET */
  uint16_t port;          /* host byte order */
  uint8_t addr[16];       /* network byte order */
  uint64_t dev, ino;      /* exec/file: stat() encoding */
  char comm[16];
};

struct lh_bpf_lease;      /* opaque */

/* 0, or -errno with err filled. On a tier C process it fails with
 * -EOPNOTSUPP: the caller must refuse the launch (UNENFORCEABLE), never run it. */
int lh_bpf_lease_add(const struct lh_bpf_lease_spec *spec, struct lh_bpf_lease **out, char *err, size_t errlen);

/* After the workload is dead (cgroup verified empty): detaches the lease's
 * programs, deletes its map entries, returns its denials (at most max; the
 * rest counted in *dropped with the ring buffer's own losses) and frees it. */
void lh_bpf_lease_withdraw(struct lh_bpf_lease *lease, struct lh_bpf_denial *denials, size_t max, size_t *n,
                           uint64_t *dropped);
/* Run statistics of the enforcing object's programs (kernel.bpf_stats_enabled
 * must be 1 for run_cnt/run_time_ns to grow). Returns how many were filled
 * (0 on tier C). Read through this process's own program fds. */
struct lh_bpf_prog_stat { char name[32]; uint64_t run_cnt, run_time_ns; };
int lh_bpf_prog_stats(struct lh_bpf_prog_stat *out, int max);
#ifdef __cplusplus
}
#endif
#endif
