/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "user.h"
#include "protocol.h"
#include "util.h"
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

static void write_id_map(const char *file, unsigned inner, unsigned outer) {
  char map[64];
  snprintf(map, sizeof map, "%u %u 1\n", inner, outer);
  int rc = write_file_str(file, map);
  if (rc < 0) fail("userns-map", -rc, file);
}

void drop_privs_enter_userns(uid_t lease_uid, gid_t lease_gid) {
  if (lease_uid == 0 || lease_gid == 0) fail("identity", EINVAL, "lease uid/gid must not be 0");
  /* Root's supplementary groups would survive setresuid and open every
   * group-readable file on the host (e.g. group "shadow", "disk"): clear them
   * while we still may. */
  if (setgroups(0, NULL) < 0) fail("identity", errno, "setgroups([])");
  if (setresgid(lease_gid, lease_gid, lease_gid) < 0) fail("identity", errno, "setresgid(lease gid)");
  if (setresuid(lease_uid, lease_uid, lease_uid) < 0) fail("identity", errno, "setresuid(lease uid)");
  /* Changing credentials cleared "dumpable", which makes /proc/self/uid_map and gid_map
   * root-owned and unwritable by us; we need them for the one-line maps. */
  if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0) fail("identity", errno, "PR_SET_DUMPABLE");
  if (unshare(CLONE_NEWUSER) < 0) fail("userns", errno, "unshare(CLONE_NEWUSER): are user namespaces enabled (user.max_user_namespaces)?");
  /* Without "deny", an unprivileged gid_map would let the workload drop
   * groups with setgroups() and escape negative group permissions
   * (CVE-2014-8989); the kernel requires it for a single-line map anyway. */
  int rc = write_file_str("/proc/self/setgroups", "deny");
  if (rc < 0) fail("userns-map", -rc, "/proc/self/setgroups");
  write_id_map("/proc/self/uid_map", LH_INNER_UID, (unsigned)lease_uid);
  write_id_map("/proc/self/gid_map", LH_INNER_GID, (unsigned)lease_gid);
  if (setresgid(LH_INNER_GID, LH_INNER_GID, LH_INNER_GID) < 0) fail("identity", errno, "setresgid(inner)");
  if (setresuid(LH_INNER_UID, LH_INNER_UID, LH_INNER_UID) < 0) fail("identity", errno, "setresuid(inner)");
}
