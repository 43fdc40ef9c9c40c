/* SPDX-License-Identifier: UNLICENSED */
/* Network policy "none": an empty network namespace with only loopback. */
#ifndef LEASEHOLD_NET_H
#define LEASEHOLD_NET_H
/* As host root in the helper: joins a new network namespace owned by a new,
 * root-mapped user namespace of its own (not the initial one), so no host
 * uevent is broadcast into it. */
void enter_private_netns(void);
/* 1 when our network namespace is owned by the user namespace we are in
 * (for the helper's PID 1: the host's), 0 when not, -1 when unmeasured. */
int netns_owned_by_own_userns(void);
/* Inside the new network namespace: brings up loopback (the only interface). */
void setup_loopback(void);
#endif
