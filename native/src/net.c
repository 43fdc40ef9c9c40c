/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "net.h"
#include "netlink.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/nsfs.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
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
int open_private_netns(void) {
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
  close(hold[1]);
  while (waitpid((pid_t)child, NULL, 0) < 0 && errno == EINTR) {}
  return fd;
}

void enter_private_netns(void) {
  int fd = open_private_netns();
  if (setns(fd, CLONE_NEWNET) < 0) fail("net", errno, "setns(netns owned by its own user namespace)");
  close(fd);
}

/* ---- egress: one veth pair per lease ----------------------------------
 *
 * Why the helper does this and not launch.c (a thread of the agent): the
 * helper is already host root in the initial user namespace, single-
 * threaded, and holds the lease's network namespace as a descriptor right
 * here, before anything of the workload exists; a failure is an "E" record
 * and nothing runs. launch.c would need the namespace from the sandbox
 * (a pid to resolve, a round trip to hold the helper until the host side is
 * configured) and would keep per-lease netlink state in the agent process.
 * The helper does the host half while still in the host network namespace
 * (its rtnetlink socket and the /proc/sys/net files it opens answer for the
 * namespace they were opened in: the host's), then joins the lease's
 * namespace and does the inside half with a socket opened there.
 *
 * Allocation: the host end's name lh<N> is the lock. RTM_NEWLINK with
 * NLM_F_EXCL fails with EEXIST when any process already holds that name,
 * atomically in the kernel, so concurrent launches in one agent or in
 * several never share a slot; the addresses are a function of N. A random
 * starting slot keeps concurrent launches from probing the same names; on
 * EEXIST the next slot is tried. The pair lives exactly as long as the
 * lease's network namespace (deleting one end deletes the other, and a
 * namespace's devices go with it), which only the helper, the sandbox's
 * processes and the owner child ever hold: a crashed launch leaves no lh*
 * interface once its processes are dead (the cgroup sweep kills survivors).
 * Freeing a namespace is asynchronous, so a just-ended lease's name may
 * still be taken for a moment: EEXIST, next slot. */

static void egress_fail(int rc, const char *msg) { fail("network", rc < 0 ? -rc : EIO, msg); }

/* Writes `value` to /proc/sys/net/<proto>/conf/<ifname>/<key> and reads the
 * value back through the same descriptor. /proc/sys/net resolves to the
 * network namespace of the process that opens the file: called only while
 * the helper is still in the host namespace, on the interface it just
 * created (a name it chose, in the host's procfs; no workload exists yet).
 * Returns the value read back, or -errno. */
static int sysctl_if(const char *proto, const char *ifname, const char *key, const char *value) {
  char path[128], back[32];
  snprintf(path, sizeof path, "/proc/sys/net/%s/conf/%s/%s", proto, ifname, key);
  int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0) return -errno;
  int rc = write_all(fd, value, strlen(value));
  ssize_t n = rc < 0 ? -1 : pread(fd, back, sizeof back - 1, 0);
  int e = errno;
  close(fd);
  if (rc < 0) return rc;
  if (n <= 0) return n < 0 ? -e : -EIO;
  back[n] = 0;
  return atoi(back);
}

static void slot_addresses(unsigned slot, struct lh_egress *e) {
  static const unsigned char pool6[6] = LH_EGRESS_POOL6;
  uint32_t base = LH_EGRESS_POOL4 + slot * 4u;
  e->host4.s_addr = htonl(base + 1);
  e->inside4.s_addr = htonl(base + 2);
  memset(&e->host6, 0, sizeof e->host6);
  memcpy(e->host6.s6_addr, pool6, sizeof pool6);
  e->host6.s6_addr[6] = (unsigned char)(slot >> 8); /* subnet id = slot */
  e->host6.s6_addr[7] = (unsigned char)(slot & 0xff);
  e->inside6 = e->host6;
  e->host6.s6_addr[15] = 1;
  e->inside6.s6_addr[15] = 2;
}

void egress_setup_host(int netns_fd, struct lh_egress *e) {
  char err[512];
  struct lh_nl nl;
  memset(e, 0, sizeof *e);
  int rc = lh_nl_open(&nl, err, sizeof err);
  if (rc < 0) egress_fail(rc, err);
  unsigned start;
  if (getrandom(&start, sizeof start, 0) != sizeof start) fail("network", errno, "getrandom");
  rc = -EEXIST;
  for (unsigned i = 0; i < LH_EGRESS_SLOTS && rc == -EEXIST; i++) {
    e->slot = (start + i) % LH_EGRESS_SLOTS;
    snprintf(e->host_if, sizeof e->host_if, LH_EGRESS_IF_PREFIX "%u", e->slot);
    rc = lh_nl_veth_create(&nl, e->host_if, LH_EGRESS_INSIDE_IF, netns_fd, err, sizeof err);
  }
  if (rc == -EEXIST) egress_fail(-EADDRINUSE, "every lease network slot (lh0..lh16383) is taken");
  if (rc < 0) egress_fail(rc, err);
  slot_addresses(e->slot, e);
  e->host_ifindex = lh_nl_ifindex(&nl, e->host_if, err, sizeof err);
  if (e->host_ifindex < 0) egress_fail(e->host_ifindex, err);
  rc = lh_nl_addr_add(&nl, e->host_ifindex, AF_INET, &e->host4, 30, 0, err, sizeof err);
  if (rc < 0) egress_fail(rc, err);
  /* DAD would hold the address tentative for a second on a link whose only
   * other end is ours. A host without IPv6 (disabled, or not built) gets an
   * IPv4-only lease, reported as such. */
  rc = lh_nl_addr_add(&nl, e->host_ifindex, AF_INET6, &e->host6, 126, IFA_F_NODAD, err, sizeof err);
  if (rc == -EAFNOSUPPORT || rc == -EACCES) e->ipv6 = 0;
  else if (rc < 0) egress_fail(rc, err);
  else e->ipv6 = 1;
  /* Forwarding on this interface only: packets the lease sends arrive on
   * lh<N> and are routed on only if lh<N> forwards (IN_DEV_FORWARD of the
   * input device); the host's global setting, other interfaces, NAT and
   * firewall are left as they are. */
  e->forwarding4 = sysctl_if("ipv4", e->host_if, "forwarding", "1");
  if (e->forwarding4 < 0) egress_fail(e->forwarding4, "/proc/sys/net/ipv4/conf/<lease if>/forwarding");
  if (e->forwarding4 != 1) egress_fail(-EIO, "IPv4 forwarding on the lease interface did not read back as 1");
  if (e->ipv6) {
    /* The host takes no router advertisement from a lease. */
    rc = sysctl_if("ipv6", e->host_if, "accept_ra", "0");
    if (rc != 0) egress_fail(rc < 0 ? rc : -EIO, "/proc/sys/net/ipv6/conf/<lease if>/accept_ra");
    /* IPv6 forwards per input interface only through force_forwarding
     * (Linux 6.17); older kernels forward IPv6 only with the global
     * net.ipv6.conf.all.forwarding, which is the operator's to set. */
    rc = sysctl_if("ipv6", e->host_if, "force_forwarding", "1");
    if (rc < 0 && rc != -ENOENT) egress_fail(rc, "/proc/sys/net/ipv6/conf/<lease if>/force_forwarding");
    e->forwarding6 = rc == 1;
  }
  rc = lh_nl_link_up(&nl, e->host_ifindex, err, sizeof err);
  if (rc < 0) egress_fail(rc, err);
  lh_nl_close(&nl);
}

void egress_setup_inside(const struct lh_egress *e) {
  char err[512];
  struct lh_nl nl;
  int rc = lh_nl_open(&nl, err, sizeof err);
  if (rc < 0) egress_fail(rc, err);
  int idx = lh_nl_ifindex(&nl, LH_EGRESS_INSIDE_IF, err, sizeof err);
  if (idx < 0) egress_fail(idx, err);
  /* Up first: a gateway route needs its link up (and carrier, which the
   * pair has once both ends are up). */
  if ((rc = lh_nl_link_up(&nl, idx, err, sizeof err)) < 0) egress_fail(rc, err);
  if ((rc = lh_nl_addr_add(&nl, idx, AF_INET, &e->inside4, 30, 0, err, sizeof err)) < 0) egress_fail(rc, err);
  if ((rc = lh_nl_default_route(&nl, idx, AF_INET, &e->host4, err, sizeof err)) < 0) egress_fail(rc, err);
  if (e->ipv6) {
    if ((rc = lh_nl_addr_add(&nl, idx, AF_INET6, &e->inside6, 126, IFA_F_NODAD, err, sizeof err)) < 0)
      egress_fail(rc, err);
    if ((rc = lh_nl_default_route(&nl, idx, AF_INET6, &e->host6, err, sizeof err)) < 0) egress_fail(rc, err);
  }
  lh_nl_close(&nl);
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
