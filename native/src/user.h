/* SPDX-License-Identifier: UNLICENSED */
/* Workload identity: per-lease host uid/gid and the user namespace. */
#ifndef LEASEHOLD_USER_H
#define LEASEHOLD_USER_H
#include <sys/types.h>
/* As host root: drop supplementary groups, become lease uid/gid, then enter a
 * new user namespace mapping LH_INNER_UID/GID to them. Fails closed. */
void drop_privs_enter_userns(uid_t lease_uid, gid_t lease_gid);
#endif
