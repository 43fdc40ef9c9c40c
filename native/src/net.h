/* SPDX-License-Identifier: UNLICENSED */
/* The lease's network namespace: policy "none" (loopback only) or "egress"
 * (loopback plus one veth pair to the host, see net.c for the address plan). */
#ifndef LEASEHOLD_NET_H
#define LEASEHOLD_NET_H
#include <netinet/in.h>
#include <net/if.h>

/* Lease pool (native/README.md "Network path"): slot N of LH_EGRESS_SLOTS
 * gets 100.127.0.0 + 4N as a /30 (host end +1, sandbox +2) and
 * fda6:8807:ab0f:N::/126 (host end ::1, sandbox ::2); the host end is named
 * lh<N>. The ULA global ID is the first 40 bits of
 * SHA-256("leasehold egress pool v1") (test/egress-pool.test.ts recomputes it). */
#define LH_EGRESS_POOL4 0x647f0000u /* 100.127.0.0/16 */
#define LH_EGRESS_POOL4_PREFIX 16
#define LH_EGRESS_POOL6 {0xfd, 0xa6, 0x88, 0x07, 0xab, 0x0f} /* fda6:8807:ab0f::/48 */
#define LH_EGRESS_SLOTS 16384u
#define LH_EGRESS_IF_PREFIX "lh"
#define LH_EGRESS_INSIDE_IF "eth0"

struct lh_egress {
  unsigned slot;
  char host_if[IFNAMSIZ];
  int host_ifindex;
  struct in_addr host4, inside4;
  struct in6_addr host6, inside6;
  int ipv6;          /* 0: the host has no usable IPv6 (addresses not added on either end) */
  int forwarding4;   /* read back from the host end's sysctl */
  int forwarding6;   /* 1: per-interface IPv6 forwarding (force_forwarding, Linux >= 6.17) read back as 1 */
};

/* As host root in the helper: joins a new network namespace owned by a new,
 * root-mapped user namespace of its own (not the initial one), so no host
 * uevent is broadcast into it. */
void enter_private_netns(void);
/* The same namespace, returned as a descriptor without joining it. */
int open_private_netns(void);
/* Egress, host half, called in the HOST network namespace: allocates a
 * slot, creates lh<N> here with eth0 inside `netns_fd`, addresses the host
 * end, enables IPv4 (and, where the kernel has it, IPv6) forwarding on lh<N>
 * only, and brings it up. Fails the launch (fail()) on any error. */
void egress_setup_host(int netns_fd, struct lh_egress *e);
/* Egress, inside half, called after joining the lease's namespace: eth0 up,
 * its addresses, default routes via the host end. */
void egress_setup_inside(const struct lh_egress *e);
/* 1 when our network namespace is owned by the user namespace we are in
 * (for the helper's PID 1: the host's), 0 when not, -1 when unmeasured. */
int netns_owned_by_own_userns(void);
/* Inside the new network namespace: brings up loopback. */
void setup_loopback(void);
#endif
