/* SPDX-License-Identifier: UNLICENSED */
/*
 * Wire format between the addon (host side, a thread of the guest agent) and
 * the single-threaded helper `leasehold-sandbox` it spawns.
 *
 * fd 3 (helper reads): "key\0value\0" pairs until EOF (keys: helper.c
 * read_config; an unknown key is refused). Network: `net` none|egress;
 * for egress, `host` "<canonical address> <RFC 1123 name>" per /etc/hosts
 * line, and `net_guard` bpf — appended by launch.c only, as the last
 * record, once the lease's BPF egress allow-list is attached.
 * fd 4 (helper writes): one record per line, each shorter than PIPE_BUF so
 * concurrent writers (helper, its PID 1, the workload before exec) never
 * interleave:
 *   P <host pid of sandbox PID 1>
 *   K <key> <value>           a value read back from the kernel inside
 *                             (egress: net_guard, net_if lh<N>, net_ipv4 and
 *                             net_ipv6 "<inside>/<len> <gateway>",
 *                             net_forwarding4|6 0|1 — before P)
 *   R                         containment complete, workload about to start
 *   K tmp_bytes|tmp_inodes N  (after R, before X) what the workload left in
 *                             the throwaway /tmp
 *   E <stage> <errno> <text>  setup failed: nothing of the workload ran
 *   F <errno>                 execve of the workload failed (after R)
 *   X <exit code> <signal>    workload ended (reported by PID 1)
 */
#ifndef LEASEHOLD_PROTOCOL_H
#define LEASEHOLD_PROTOCOL_H

#define LH_FD_CONFIG 3
#define LH_FD_STATUS 4

/* Identity inside the user namespace (mapped to the per-lease host uid/gid). */
#define LH_INNER_UID 1000
#define LH_INNER_GID 1000

#define LH_MAX_CONFIG (1u << 20)
#define LH_MAX_ITEMS 256

#endif
