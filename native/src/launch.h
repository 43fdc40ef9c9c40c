/* SPDX-License-Identifier: UNLICENSED */
/* One launch, host side: cgroups, spawning the helper, stdio, deadline,
 * withdrawal. Runs on a thread of its own, never on Node's JS thread. */
#ifndef LEASEHOLD_LAUNCH_H
#define LEASEHOLD_LAUNCH_H
#include "bpf_guard.h"
#include "cgroup.h"
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

struct lh_launch_request {
  char helper_path[PATH_MAX];
  char lease_id[64];
  char *config; size_t config_len;   /* protocol.h records; "cg" added here */
  char *stdin_buf; size_t stdin_len;
  size_t stdout_max, stderr_max;
  uint64_t timeout_ms;
  struct lh_cgroup_limits limits;
  /* Optional: called on the launch thread while the workload's output grows,
   * at most once per `progress_every_ms`, with the byte totals so far (counted
   * before the capture caps). Never called after lh_launch returns. */
  void (*progress)(void *ctx, uint64_t out_total, uint64_t err_total);
  void *progress_ctx;
  uint64_t progress_every_ms;
  /* Test seam, empty in production: space-separated cgroup file names
   * ("memory.events pids.events") whose post-run counter reads fail with EIO.
   * The addon fills it only when LEASEHOLD_NATIVE_FAULT_INJECTION=1 was in
   * its environment at load time (native/SECURITY.md). It can only make a
   * counter unknown, never make one look measured. */
  char fault_unreadable[256];
  /* The policy has network egress (index.ts): the helper builds the lease's
   * veth path only when this launch appends a `net_guard` record, which it
   * does only once the lease's egress allow-list is attached in the kernel
   * (bpf_net_enforced below, added without error). Otherwise the launch is
   * refused before anything is spawned. */
  int net_egress;
  /* BPF lease (bpf_guard.h): 1 puts the lease's cgroup under the lease
   * programs before anything runs in it; a failure refuses the launch
   * (stage "bpf"). The arrays stay owned by the caller. */
  int bpf;
  int bpf_exec_enforced;
  const struct lh_bpf_file *bpf_exec; size_t bpf_n_exec;
  int bpf_net_enforced;
  const struct lh_bpf_rule *bpf_egress; size_t bpf_n_egress;
  /* Readable (an eventfd the caller owns, or -1 for none) when the caller
   * cancels the run: the lease's cgroup is killed at once, as at the deadline,
   * and the result says `cancelled`. Polled with the workload's pipes, so a
   * cancel is acted on within one poll wake-up. */
  int cancel_fd;
};

#define LH_LAUNCH_MAX_DENIALS 1024

struct lh_launch_result {
  int failed;                 /* containment could not be applied: nothing ran */
  char fail_stage[64];
  int fail_errno;
  char fail_message[512];
  int exec_errno;             /* execve of the workload failed (after containment) */
  int reported_exit;          /* PID 1 reported the workload's end */
  int exit_code, term_signal;
  int timed_out;
  int cancelled;              /* the caller's cancel_fd fired and the lease was killed */
  int helper_status;          /* raw wait status of the helper */
  char *out; size_t out_len; uint64_t out_total;
  char *err; size_t err_len; uint64_t err_total;
  char readback[8192]; size_t readback_len; /* "key value\n" lines from inside */
  int sandbox_pid;            /* host pid of the sandbox's PID 1 */
  double wall_ms, setup_ms;
  double cpu_user_ms, cpu_sys_ms;
  struct lh_cgroup cgroup;
  struct lh_cgroup_stats stats;
  int withdrawn_empty, withdrawn_removed;
  /* BPF lease: enforced = its programs guarded the whole run; withdrawn = its
   * entries are gone (only after the cgroup was verified empty: a lease whose
   * processes may still live keeps its programs). Denials malloc'd. */
  int bpf_enforced, bpf_withdrawn;
  struct lh_bpf_denial *bpf_denials; size_t bpf_n_denials;
  uint64_t bpf_dropped;
};

/* Fills `res` (allocations: res->out, res->err; free with lh_launch_free). */
void lh_launch(const struct lh_launch_request *req, struct lh_launch_result *res);
void lh_launch_free(struct lh_launch_result *res);
#ifdef __cplusplus
}
#endif
#endif
