/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "netlink.h"
#include <errno.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* Every request here is a few hundred bytes; the buffer is checked on each
 * append, so an oversized request is an error, never an overflow. */
#define REQ_MAX 1024

struct req {
  union {
    struct nlmsghdr h;
    char buf[REQ_MAX];
  } u;
  int overflow;
};

static int setf(char *err, size_t len, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int setf(char *err, size_t len, int rc, const char *fmt, ...) {
  if (err && len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
  }
  return rc;
}

static void req_init(struct req *r, uint16_t type, uint16_t flags, const void *body, size_t body_len) {
  memset(r, 0, sizeof *r);
  r->u.h.nlmsg_type = type;
  r->u.h.nlmsg_flags = (uint16_t)(NLM_F_REQUEST | NLM_F_ACK | flags);
  r->u.h.nlmsg_len = (uint32_t)NLMSG_LENGTH(body_len);
  memcpy(NLMSG_DATA(&r->u.h), body, body_len);
}

/* Appends one attribute at the (aligned) end of the message; returns it so
 * nested attributes can have their length fixed up by attr_end. */
static struct rtattr *attr_put(struct req *r, uint16_t type, const void *data, size_t data_len) {
  size_t at = NLMSG_ALIGN(r->u.h.nlmsg_len);
  size_t need = RTA_LENGTH(data_len);
  if (at + RTA_ALIGN(need) > sizeof r->u.buf) {
    r->overflow = 1;
    return NULL;
  }
  struct rtattr *a = (struct rtattr *)(r->u.buf + at);
  a->rta_type = type;
  a->rta_len = (uint16_t)need;
  if (data_len) memcpy(RTA_DATA(a), data, data_len);
  r->u.h.nlmsg_len = (uint32_t)(at + RTA_ALIGN(need));
  return a;
}

static struct rtattr *nest_begin(struct req *r, uint16_t type) { return attr_put(r, type, NULL, 0); }

static void nest_end(struct req *r, struct rtattr *a) {
  if (a) a->rta_len = (uint16_t)(r->u.buf + r->u.h.nlmsg_len - (char *)a);
}

int lh_nl_open(struct lh_nl *nl, char *err, size_t len) {
  nl->seq = 0;
  nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (nl->fd < 0) return setf(err, len, -errno, "socket(NETLINK_ROUTE): %s", strerror(errno));
  /* Error text from the kernel ("Invalid prefix for given prefix length"...)
   * is worth more than a bare errno; a kernel without it still answers. */
  int one = 1;
  (void)setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one);
  /* A kernel that never answers must not hang the launch. */
  struct timeval tv = {.tv_sec = 5, .tv_usec = 0};
  (void)setsockopt(nl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  struct sockaddr_nl local = {.nl_family = AF_NETLINK};
  if (bind(nl->fd, (struct sockaddr *)&local, sizeof local) < 0) {
    int e = errno;
    close(nl->fd);
    nl->fd = -1;
    return setf(err, len, -e, "bind(NETLINK_ROUTE): %s", strerror(e));
  }
  return 0;
}

void lh_nl_close(struct lh_nl *nl) {
  if (nl->fd >= 0) close(nl->fd);
  nl->fd = -1;
}

/* The kernel's extended-ack message text, if the error carries one. */
static const char *ext_ack_msg(const struct nlmsghdr *h) {
  if (!(h->nlmsg_flags & NLM_F_ACK_TLVS)) return NULL;
  const struct nlmsgerr *e = NLMSG_DATA(h);
  size_t off = sizeof *e;
  /* Without NLM_F_CAPPED the original request is echoed after the header. */
  if (!(h->nlmsg_flags & NLM_F_CAPPED)) off += e->msg.nlmsg_len - NLMSG_HDRLEN;
  size_t total = h->nlmsg_len - NLMSG_HDRLEN;
  const char *p = (const char *)NLMSG_DATA(h);
  while (off + sizeof(struct nlattr) <= total) {
    const struct nlattr *a = (const struct nlattr *)(p + off);
    if (a->nla_len < sizeof *a || off + a->nla_len > total) break;
    if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG) {
      const char *s = (const char *)a + NLA_HDRLEN;
      size_t n = a->nla_len - NLA_HDRLEN;
      if (n > 0 && s[n - 1] == 0) return s;
      break;
    }
    off += NLA_ALIGN(a->nla_len);
  }
  return NULL;
}

/* Sends `r` and waits for its acknowledgement. A reply of `want_type` (a
 * GET's answer) before the ack is passed to `on_reply`. Only messages from
 * the kernel (port 0) with our sequence number count. */
static int transact(struct lh_nl *nl, struct req *r, const char *what, uint16_t want_type,
                    void (*on_reply)(const struct nlmsghdr *, void *), void *ctx, char *err, size_t len) {
  if (r->overflow) return setf(err, len, -E2BIG, "%s: netlink request too large", what);
  r->u.h.nlmsg_seq = ++nl->seq;
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  ssize_t sent;
  do sent = sendto(nl->fd, r->u.buf, r->u.h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel);
  while (sent < 0 && errno == EINTR);
  if (sent < 0) return setf(err, len, -errno, "%s: sendto(netlink): %s", what, strerror(errno));
  if ((size_t)sent != r->u.h.nlmsg_len) return setf(err, len, -EIO, "%s: short netlink send", what);
  /* An error reply echoes the request (up to REQ_MAX) plus ack attributes. */
  union {
    struct nlmsghdr h;
    char buf[8192];
  } in;
  for (;;) {
    struct sockaddr_nl from;
    socklen_t fl = sizeof from;
    ssize_t n = recvfrom(nl->fd, in.buf, sizeof in.buf, 0, (struct sockaddr *)&from, &fl);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return setf(err, len, -errno, "%s: recv(netlink): %s", what, strerror(errno));
    if (fl != sizeof from || from.nl_pid != 0) continue; /* not the kernel */
    size_t left = (size_t)n;
    for (struct nlmsghdr *h = &in.h; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_seq != nl->seq) continue;
      if (h->nlmsg_type == NLMSG_ERROR) {
        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
          return setf(err, len, -EIO, "%s: truncated netlink ack", what);
        const struct nlmsgerr *e = NLMSG_DATA(h);
        if (e->error == 0) return 0;
        int code = e->error < 0 ? e->error : -EIO;
        const char *m = ext_ack_msg(h);
        return setf(err, len, code, "%s: %s%s%s", what, strerror(-code), m ? " — " : "", m ? m : "");
      }
      if (want_type && h->nlmsg_type == want_type && on_reply) on_reply(h, ctx);
    }
  }
}

int lh_nl_veth_create(struct lh_nl *nl, const char *name, const char *peer, int peer_netns_fd, char *err,
                      size_t len) {
  if (strlen(name) >= IFNAMSIZ || strlen(peer) >= IFNAMSIZ) return setf(err, len, -EINVAL, "interface name too long");
  struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC};
  struct req r;
  /* EXCL: a name someone already holds (another lease, any process) is an
   * error, never a device we would then configure as ours. */
  req_init(&r, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi, sizeof ifi);
  attr_put(&r, IFLA_IFNAME, name, strlen(name) + 1);
  struct rtattr *linkinfo = nest_begin(&r, IFLA_LINKINFO);
  attr_put(&r, IFLA_INFO_KIND, "veth", 5);
  struct rtattr *data = nest_begin(&r, IFLA_INFO_DATA);
  /* VETH_INFO_PEER carries a struct ifinfomsg followed by the peer's own
   * attributes: its name and the namespace it is created in. */
  struct rtattr *peer_info = attr_put(&r, VETH_INFO_PEER, &ifi, sizeof ifi);
  attr_put(&r, IFLA_IFNAME, peer, strlen(peer) + 1);
  uint32_t nsfd = (uint32_t)peer_netns_fd;
  attr_put(&r, IFLA_NET_NS_FD, &nsfd, sizeof nsfd);
  nest_end(&r, peer_info);
  nest_end(&r, data);
  nest_end(&r, linkinfo);
  char what[64];
  snprintf(what, sizeof what, "create veth %s", name);
  return transact(nl, &r, what, 0, NULL, NULL, err, len);
}

static void take_ifindex(const struct nlmsghdr *h, void *ctx) {
  if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg))) return;
  const struct ifinfomsg *ifi = NLMSG_DATA(h);
  *(int *)ctx = ifi->ifi_index;
}

int lh_nl_ifindex(struct lh_nl *nl, const char *name, char *err, size_t len) {
  if (strlen(name) >= IFNAMSIZ) return setf(err, len, -EINVAL, "interface name too long");
  struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC};
  struct req r;
  req_init(&r, RTM_GETLINK, 0, &ifi, sizeof ifi);
  attr_put(&r, IFLA_IFNAME, name, strlen(name) + 1);
  /* No statistics in the answer: smaller, and nothing here needs them. */
  uint32_t filter = RTEXT_FILTER_SKIP_STATS;
  attr_put(&r, IFLA_EXT_MASK, &filter, sizeof filter);
  int index = 0;
  char what[64];
  snprintf(what, sizeof what, "look up %s", name);
  int rc = transact(nl, &r, what, RTM_NEWLINK, take_ifindex, &index, err, len);
  if (rc < 0) return rc;
  if (index <= 0) return setf(err, len, -ENODEV, "%s: no interface index in the answer", what);
  return index;
}

int lh_nl_link_up(struct lh_nl *nl, int ifindex, char *err, size_t len) {
  struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC, .ifi_index = ifindex, .ifi_flags = IFF_UP, .ifi_change = IFF_UP};
  struct req r;
  req_init(&r, RTM_NEWLINK, 0, &ifi, sizeof ifi);
  char what[64];
  snprintf(what, sizeof what, "set link %d up", ifindex);
  return transact(nl, &r, what, 0, NULL, NULL, err, len);
}

int lh_nl_addr_add(struct lh_nl *nl, int ifindex, int family, const void *addr, unsigned prefixlen, uint32_t flags,
                   char *err, size_t len) {
  size_t alen = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
  if (!alen || prefixlen > alen * 8) return setf(err, len, -EINVAL, "bad address family or prefix");
  struct ifaddrmsg ifa = {.ifa_family = (uint8_t)family, .ifa_prefixlen = (uint8_t)prefixlen,
                          .ifa_flags = (uint8_t)(flags & 0xff), .ifa_scope = RT_SCOPE_UNIVERSE,
                          .ifa_index = (uint32_t)ifindex};
  struct req r;
  req_init(&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &ifa, sizeof ifa);
  /* IPv4: IFA_LOCAL is the interface's address, IFA_ADDRESS the peer's (the
   * same on a broadcast link). IPv6 uses IFA_ADDRESS alone. */
  if (family == AF_INET) attr_put(&r, IFA_LOCAL, addr, alen);
  attr_put(&r, IFA_ADDRESS, addr, alen);
  /* IFA_F_NODAD does not fit the 8-bit ifa_flags: the 32-bit attribute. */
  if (flags) attr_put(&r, IFA_FLAGS, &flags, sizeof flags);
  char what[64];
  snprintf(what, sizeof what, "add IPv%d address on link %d", family == AF_INET ? 4 : 6, ifindex);
  return transact(nl, &r, what, 0, NULL, NULL, err, len);
}

int lh_nl_default_route(struct lh_nl *nl, int ifindex, int family, const void *gateway, char *err, size_t len) {
  size_t alen = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
  if (!alen) return setf(err, len, -EINVAL, "bad address family");
  struct rtmsg rtm = {.rtm_family = (uint8_t)family, .rtm_dst_len = 0, .rtm_table = RT_TABLE_MAIN,
                      .rtm_protocol = RTPROT_STATIC, .rtm_scope = RT_SCOPE_UNIVERSE, .rtm_type = RTN_UNICAST};
  struct req r;
  req_init(&r, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, &rtm, sizeof rtm);
  attr_put(&r, RTA_GATEWAY, gateway, alen);
  uint32_t oif = (uint32_t)ifindex;
  attr_put(&r, RTA_OIF, &oif, sizeof oif);
  char what[64];
  snprintf(what, sizeof what, "add IPv%d default route via link %d", family == AF_INET ? 4 : 6, ifindex);
  return transact(nl, &r, what, 0, NULL, NULL, err, len);
}
