/* SPDX-License-Identifier: UNLICENSED */
/*
 * The few rtnetlink requests the egress network path needs, written out by
 * hand (no libnl, no `ip`): create a veth pair whose peer lands in another
 * network namespace, set a link up, add an address, add a default route.
 * Each request is acknowledged by the kernel or fails with its errno; a
 * socket answers for the network namespace it was opened in, whatever
 * namespace the caller has joined since.
 * Returns are 0 or -errno; `err` gets a one-line reason (with the kernel's
 * extended-ack text when it sent one).
 */
#ifndef LEASEHOLD_NETLINK_H
#define LEASEHOLD_NETLINK_H
#include <stddef.h>
#include <stdint.h>

struct lh_nl {
  int fd;
  uint32_t seq;
};

/* A NETLINK_ROUTE socket in the caller's current network namespace. */
int lh_nl_open(struct lh_nl *nl, char *err, size_t len);
void lh_nl_close(struct lh_nl *nl);
/* veth pair: `name` in the socket's namespace, `peer` created directly in the
 * namespace `peer_netns_fd` refers to. Both created down. -EEXIST when `name`
 * is taken in the socket's namespace (the kernel decides atomically). */
int lh_nl_veth_create(struct lh_nl *nl, const char *name, const char *peer, int peer_netns_fd, char *err, size_t len);
/* ifindex of `name` in the socket's namespace, or -errno. */
int lh_nl_ifindex(struct lh_nl *nl, const char *name, char *err, size_t len);
int lh_nl_link_up(struct lh_nl *nl, int ifindex, char *err, size_t len);
/* family AF_INET (addr: 4 bytes) or AF_INET6 (16 bytes); flags: IFA_F_*. */
int lh_nl_addr_add(struct lh_nl *nl, int ifindex, int family, const void *addr, unsigned prefixlen, uint32_t flags,
                   char *err, size_t len);
/* Default route (0.0.0.0/0 or ::/0) via `gateway` out of `ifindex`, main table. */
int lh_nl_default_route(struct lh_nl *nl, int ifindex, int family, const void *gateway, char *err, size_t len);
#endif
