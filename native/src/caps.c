/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "caps.h"
#include "util.h"
#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

void drop_all_caps(void) {
  /* Bounding set first: dropping it needs CAP_SETPCAP, which capset below
   * removes. Without this, a file with capabilities could regain them. */
  for (int cap = 0; cap < 64; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL) fail("caps", errno, "PR_CAPBSET_DROP");
  }
  if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                   SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                   SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
            0, 0, 0) < 0)
    fail("caps", errno, "PR_SET_SECUREBITS");
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0) fail("caps", errno, "clear ambient");
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2] = {{0, 0, 0}, {0, 0, 0}};
  if (syscall(SYS_capset, &hdr, data) < 0) fail("caps", errno, "capset(0)");
}
