/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Tier B, for kernels that refuse LSM programs: cgroup-BPF socket hooks
 * attached to each egress lease's cgroup v2 directory (so they run for every
 * socket created in the lease or below it), and one exec tracepoint for the
 * whole host that kills a process whose new image is not on its lease's
 * allow-list. Returning 0 from a cgroup socket program makes the syscall
 * fail with EPERM. */
#include "lib/lease.bpf.h"

/* The programs below run only for sockets of a lease subtree (that is where
 * they are attached); the lease is found from the calling task. A task that
 * is in no lease while using a lease's socket (passed out over a unix
 * socket) is refused: the socket belongs to a lease, so its rules apply,
 * and without the lease they cannot be read. */
static __always_inline int sock_addr_verdict(struct bpf_sock_addr *ctx, __u32 kind, int v6) {
  __u64 cgid = 0;
  struct lh_lease_value *lease = lease_of_current(&cgid);
  if (!lease) return 0;
  if (!(lease->flags & LH_LEASE_NET)) return 1;
  __u16 port_be = (__u16)ctx->user_port;
  __u8 proto = (__u8)ctx->protocol;
  if (!v6) {
    __u32 ip = ctx->user_ip4;
    if (egress_allowed4(cgid, ip, port_be)) return 1;
    emit_net(lease, cgid, kind, 4, &ip, port_be, proto);
    return 0;
  }
  __u32 ip6[4];
  ip6[0] = ctx->user_ip6[0];
  ip6[1] = ctx->user_ip6[1];
  ip6[2] = ctx->user_ip6[2];
  ip6[3] = ctx->user_ip6[3];
  if (egress_allowed6(cgid, ip6, port_be)) return 1;
  if (v4_mapped(ip6)) emit_net(lease, cgid, kind, 4, &ip6[3], port_be, proto);
  else emit_net(lease, cgid, kind, 6, ip6, port_be, proto);
  return 0;
}

SEC("cgroup/connect4")
int lh_connect4(struct bpf_sock_addr *ctx) { return sock_addr_verdict(ctx, LH_EV_CONNECT, 0); }

SEC("cgroup/connect6")
int lh_connect6(struct bpf_sock_addr *ctx) { return sock_addr_verdict(ctx, LH_EV_CONNECT, 1); }

/* UDP sendto/sendmsg with an address (the only sends that name one; a
 * connected socket's peer went through connect4/6). */
SEC("cgroup/sendmsg4")
int lh_sendmsg4(struct bpf_sock_addr *ctx) { return sock_addr_verdict(ctx, LH_EV_SENDMSG, 0); }

SEC("cgroup/sendmsg6")
int lh_sendmsg6(struct bpf_sock_addr *ctx) { return sock_addr_verdict(ctx, LH_EV_SENDMSG, 1); }

/* Runs for inet/inet6 sockets only (the kernel calls it from inet_create and
 * inet6_create): packet sockets never reach it — inside the sandbox seccomp's
 * family allow-list and the dropped CAP_NET_RAW refuse those. */
SEC("cgroup/sock_create")
int lh_sock_create(struct bpf_sock *ctx) {
  __u64 cgid = 0;
  struct lh_lease_value *lease = lease_of_current(&cgid);
  if (!lease) return 0;
  if (!(lease->flags & LH_LEASE_NET)) return 1;
  int family = ctx->family, type = ctx->type, protocol = ctx->protocol;
  if (!socket_refused(family, type, protocol)) return 1;
  emit_socket(lease, cgid, family, type, protocol);
  return 0;
}

/* After the new image is committed and before it runs its first
 * instruction: the pending SIGKILL is delivered on the way back to user
 * space. bprm->file is the final image (for a script: its interpreter). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(lh_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm) {
  __u64 cgid = 0;
  struct lh_lease_value *lease = lease_of_current(&cgid);
  if (!lease || !(lease->flags & LH_LEASE_EXEC)) return 0;
  __u32 dev;
  __u64 ino;
  if (file_in(&exec_allow, cgid, bprm->file, &dev, &ino)) return 0;
  bpf_send_signal(LH_SIGKILL);
  emit_file(lease, cgid, LH_EV_EXEC, dev, ino);
  return 0;
}
