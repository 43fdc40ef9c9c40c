/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "net.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The kernel broadcasts device uevents only to network namespaces owned by
 * the initial user namespace (lib/kobject_uevent.c, uevent_net_init: "Restrict
 * uevents to initial user namespace"). A network namespace created by host
 * root would hear every host uevent on a NETLINK_KOBJECT_UEVENT socket. So the
 * owner is an intermediate user namespace made for this purpose alone: a
 * short-lived child is cloned into a new user + network namespace, gets a
 * full root map (so root inside it is host root, nothing more), and we join
 * its network namespace. The workload's own user namespace, created later by
 * PID 1 as a sibling of this one, still owns nothing of its network. */
void enter_private_netns(void) {
  int hold[2];
  if (pipe2(hold, O_CLOEXEC) < 0) fail("net", errno, "pipe2");
  /* Raw clone with no new stack behaves like fork: the child only waits
   * for the pipe to close (our exit closes it too, so it never lingers). */
  long child = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | CLONE_NEWNET | SIGCHLD), 0, 0, 0, 0);
  if (child < 0) fail("net", errno, "clone(CLONE_NEWUSER|CLONE_NEWNET) for the netns owner");
  if (child == 0) {
    char b;
    close(hold[1]);
    while (read(hold[0], &b, 1) < 0 && errno == EINTR) {}
    _exit(0);
  }
  close(hold[0]);
  char path[64];
  static const char *const maps[] = {"uid_map", "gid_map", NULL};
  for (int i = 0; maps[i]; i++) {
    snprintf(path, sizeof path, "/proc/%ld/%s", child, maps[i]);
    int rc = write_file_str(path, "0 0 4294967295\n");
    if (rc < 0) fail("net", -rc, path);
  }
  snprintf(path, sizeof path, "/proc/%ld/ns/net", child);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("net", errno, path);
  if (setns(fd, CLONE_NEWNET) < 0) fail("net", errno, "setns(netns owned by its own user namespace)");
  close(fd);
  close(hold[1]);
  while (waitpid((pid_t)child, NULL, 0) < 0 && errno == EINTR) {}
}

int netns_owned_by_own_userns(void) {
  int net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (net < 0) return -1;
  int owner = ioctl(net, NS_GET_USERNS);
  close(net);
  if (owner < 0) return -1;
  struct stat a, b;
  int ok = fstat(owner, &a) == 0 && stat("/proc/self/ns/user", &b) == 0;
  close(owner);
  if (!ok) return -1;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void setup_loopback(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) fail("net", errno, "socket for loopback");
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) fail("net", errno, "SIOCGIFFLAGS lo");
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) fail("net", errno, "SIOCSIFFLAGS lo");
  close(s);
}
