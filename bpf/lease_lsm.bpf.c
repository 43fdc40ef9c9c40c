/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Tier A: BPF-LSM hooks, attached once for the whole host, acting only on
 * tasks inside a lease (lease_abi.h). Denials return -EPERM from the hook,
 * so nothing happens: the exec never starts, the packet never leaves. */
#include "lib/lease.bpf.h"

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, LH_MAX_FILE_ENTRIES);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct lh_file_key);
  __type(value, __u8);
} file_deny SEC(".maps");

/* Runs for every image of one execve: a script, then its interpreter (and
 * binfmt_misc's handler), so each must be on the list — unlike tier B, which
 * sees only the final image. */
SEC("lsm/bprm_check_security")
int BPF_PROG(lh_bprm_check, struct linux_binprm *bprm, int ret) {
  if (ret) return ret;
  __u64 cgid = 0;
  struct lh_lease_value *lease = lease_of_current(&cgid);
  if (!lease || !(lease->flags & LH_LEASE_EXEC)) return 0;
  __u32 dev;
  __u64 ino;
  if (file_in(&exec_allow, cgid, bprm->file, &dev, &ino)) return 0;
  emit_file(lease, cgid, LH_EV_EXEC, dev, ino);
  return -LH_EPERM;
}

SEC("lsm/file_open")
int BPF_PROG(lh_file_open, struct file *file, int ret) {
  if (ret) return ret;
  __u64 cgid = 0;
  struct lh_lease_value *lease = lease_of_current(&cgid);
  if (!lease || !(lease->flags & LH_LEASE_FILE)) return 0;
  __u32 dev;
  __u64 ino;
  if (!file_in(&file_deny, cgid, file, &dev, &ino)) return 0;
  emit_file(lease, cgid, LH_EV_FILE, dev, ino);
  return -LH_EPERM;
}

static __always_inline int inet_sock(struct socket *sock) {
  __u16 f = BPF_CORE_READ(sock, sk, __sk_common.skc_family);
  return f == LH_AF_INET || f == LH_AF_INET6;
}

/* One destination of a TCP/UDP socket: the address family of the sockaddr
 * decides (an IPv6 UDP socket may be given an AF_INET address). */
static __always_inline int check_dest(struct lh_lease_value *lease, __u64 cgid, struct socket *sock,
                                      struct sockaddr *addr, int addrlen, __u32 kind) {
  __u8 proto = (__u8)BPF_CORE_READ(sock, sk, sk_protocol);
  __u16 sa_family = 0;
  if (addrlen < (int)sizeof(sa_family) || bpf_probe_read_kernel(&sa_family, sizeof(sa_family), addr)) return -LH_EPERM;
  if (sa_family == LH_AF_INET) {
    struct sockaddr_in sin = {};
    if (addrlen < (int)sizeof(sin) || bpf_probe_read_kernel(&sin, sizeof(sin), addr)) return -LH_EPERM;
    if (egress_allowed4(cgid, sin.sin_addr.s_addr, sin.sin_port)) return 0;
    emit_net(lease, cgid, kind, 4, &sin.sin_addr.s_addr, sin.sin_port, proto);
    return -LH_EPERM;
  }
  if (sa_family == LH_AF_INET6) {
    struct sockaddr_in6 sin6 = {};
    if (addrlen < (int)sizeof(sin6) || bpf_probe_read_kernel(&sin6, sizeof(sin6), addr)) return -LH_EPERM;
    __u32 ip[4];
    __builtin_memcpy(ip, &sin6.sin6_addr, 16);
    if (egress_allowed6(cgid, ip, sin6.sin6_port)) return 0;
    emit_net(lease, cgid, kind, 6, ip, sin6.sin6_port, proto);
    return -LH_EPERM;
  }
  /* AF_UNSPEC dissolves a datagram association: no destination. */
  if (sa_family == 0 && kind == LH_EV_CONNECT) return 0;
  return -LH_EPERM;
}

SEC("lsm/socket_connect")
int BPF_PROG(lh_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen, int ret) {
  if (ret) return ret;
  __u64 cgid = 0;
  struct lh_lease_value *lease = lease_of_current(&cgid);
  if (!lease || !(lease->flags & LH_LEASE_NET) || !inet_sock(sock)) return 0;
  return check_dest(lease, cgid, sock, address, addrlen, LH_EV_CONNECT);
}

/* A message without an address goes to the connected peer, which
 * socket_connect already judged. */
SEC("lsm/socket_sendmsg")
int BPF_PROG(lh_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size, int ret) {
  if (ret) return ret;
  __u64 cgid = 0;
  struct lh_lease_value *lease = lease_of_current(&cgid);
  if (!lease || !(lease->flags & LH_LEASE_NET) || !inet_sock(sock)) return 0;
  struct sockaddr *name = BPF_CORE_READ(msg, msg_name);
  if (!name) return 0;
  int namelen = BPF_CORE_READ(msg, msg_namelen);
  return check_dest(lease, cgid, sock, name, namelen, LH_EV_SENDMSG);
}

SEC("lsm/socket_create")
int BPF_PROG(lh_socket_create, int family, int type, int protocol, int kern, int ret) {
  if (ret || kern) return ret;
  __u64 cgid = 0;
  struct lh_lease_value *lease = lease_of_current(&cgid);
  if (!lease || !(lease->flags & LH_LEASE_NET)) return 0;
  /* Beyond the inet rules: a lease with an egress list gets only unix,
   * inet/inet6 and netlink sockets (no vsock, no packet, no bluetooth...). */
  int other = family != LH_AF_UNIX && family != LH_AF_INET && family != LH_AF_INET6 && family != LH_AF_NETLINK;
  if (!other && !socket_refused(family, type, protocol)) return 0;
  emit_socket(lease, cgid, family, type, protocol);
  return -LH_EPERM;
}
