/* SPDX-License-Identifier: UNLICENSED */
#define _GNU_SOURCE
#include "launch.h"
#include "protocol.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void set_failure(struct lh_launch_result *res, const char *stage, int err, const char *msg) {
  if (res->failed) return; /* keep the first cause */
  res->failed = 1;
  snprintf(res->fail_stage, sizeof res->fail_stage, "%s", stage);
  res->fail_errno = err;
  snprintf(res->fail_message, sizeof res->fail_message, "%s", msg);
}

struct capture {
  int fd;
  char *buf;
  size_t len, max;
  uint64_t total;
};

/* Reads what is available; bytes beyond `max` are counted and dropped so a
 * chatty workload can neither exhaust agent memory nor block on a full pipe. */
static int drain(struct capture *c) {
  char chunk[65536];
  for (;;) {
    ssize_t n = read(c->fd, chunk, sizeof chunk);
    if (n < 0) return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
    if (n == 0) return -1;
    c->total += (uint64_t)n;
    size_t room = c->max - c->len;
    size_t take = (size_t)n < room ? (size_t)n : room;
    if (take) {
      memcpy(c->buf + c->len, chunk, take);
      c->len += take;
    }
  }
}

/* Once "R" arrived the workload exists and, in principle, could forge lines
 * (it cannot reach PID 1's fd, which is not dumpable, but we do not rely on
 * that): only the exit report and exec errors are accepted after it, once. */
static void handle_status_line(struct lh_launch_result *res, char *line, int *ready) {
  /* PID 1's throwaway-write measurement (init.c) comes after R, before X. */
  int late_k = line[0] == 'K' && !res->reported_exit && !strncmp(line + 1, " tmp_", 5);
  if (*ready && line[0] != 'X' && line[0] != 'F' && !late_k) return;
  if ((line[0] == 'X' && res->reported_exit) || (line[0] == 'F' && res->exec_errno)) return;
  switch (line[0]) {
    case 'P': res->sandbox_pid = atoi(line + 2); break;
    case 'K': {
      size_t n = strlen(line + 2);
      if (res->readback_len + n + 2 < sizeof res->readback) {
        memcpy(res->readback + res->readback_len, line + 2, n);
        res->readback_len += n;
        res->readback[res->readback_len++] = '\n';
        res->readback[res->readback_len] = 0;
      }
      break;
    }
    case 'R': *ready = 1; break;
    case 'F': res->exec_errno = atoi(line + 2); break;
    case 'X':
      res->reported_exit = 1;
      sscanf(line + 2, "%d %d", &res->exit_code, &res->term_signal);
      break;
    case 'E': {
      char stage[64] = "", msg[400] = "";
      int e = 0;
      sscanf(line + 2, "%63s %d %399[^\n]", stage, &e, msg);
      set_failure(res, stage, e, msg);
      break;
    }
    default: break;
  }
}

void lh_launch_free(struct lh_launch_result *res) {
  free(res->out);
  free(res->err);
  free(res->bpf_denials);
  res->out = res->err = NULL;
  res->bpf_denials = NULL;
}

/* posix_spawn applies the dup2s in order: a source that is itself one of
 * the targets 0..4 would be overwritten before use (fd numbers that low are
 * free whenever another thread just closed them). Keep every source above. */
static int lift_fd(int *fd) {
  if (*fd > LH_FD_STATUS) return 0;
  int hi = fcntl(*fd, F_DUPFD_CLOEXEC, LH_FD_STATUS + 1);
  if (hi < 0) return -1;
  close(*fd);
  *fd = hi;
  return 0;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* What one launch holds between its phases; withdraw_lease releases all of
 * it whichever phase stopped. A descriptor has one owner at a time (-1 once
 * closed or handed on). */
struct launch_state {
  const struct lh_launch_request *req;
  struct lh_launch_result *res;
  double t0;
  char err[512];
  int cfg_pipe[2], st_pipe[2], in_pipe[2], out_pipe[2], err_pipe[2];
  char *config;
  size_t clen;
  int status_eof;
  pid_t helper;
  struct lh_bpf_lease *bpf_lease;
  struct capture out, errc;
};

/* Capture buffers, the lease's cgroups and (when asked) its BPF programs.
 * 0, or -1 with the failure recorded. */
static int prepare_lease(struct launch_state *s) {
  const struct lh_launch_request *req = s->req;
  struct lh_launch_result *res = s->res;
  s->out.buf = malloc(req->stdout_max ? req->stdout_max : 1);
  s->errc.buf = malloc(req->stderr_max ? req->stderr_max : 1);
  if (!s->out.buf || !s->errc.buf) { set_failure(res, "agent", ENOMEM, "capture buffers"); return -1; }

  int rc = lh_cgroup_create(&res->cgroup, req->lease_id, &req->limits, s->err, sizeof s->err);
  if (rc < 0) { set_failure(res, "cgroup", -rc, s->err); return -1; }

  /* The lease's programs guard its cgroup before the helper joins it, so
   * the workload's first instruction already runs under them. */
  if (req->bpf) {
    struct lh_bpf_status bst;
    lh_bpf_init(0, &bst);
    struct lh_bpf_lease_spec spec = {
        .cgroup_id = res->cgroup.v2_id, .cgroup_path = res->cgroup.v2,
        .exec_enforced = req->bpf_exec_enforced, .exec = req->bpf_exec, .n_exec = req->bpf_n_exec,
        .net_enforced = req->bpf_net_enforced, .egress = req->bpf_egress, .n_egress = req->bpf_n_egress};
    rc = lh_bpf_lease_add(&spec, &s->bpf_lease, s->err, sizeof s->err);
    if (rc < 0) { set_failure(res, "bpf", -rc, s->err); return -1; }
    res->bpf_enforced = 1;
  }
  return 0;
}

/* The caller's config plus the records only this side can add: the cgroups
 * to join and, for an egress lease, its net_guard. 0, or -1 with the
 * failure recorded. */
static int build_config(struct launch_state *s) {
  const struct lh_launch_request *req = s->req;
  struct lh_launch_result *res = s->res;
  /* The helper joins these before it drops root, so everything it starts is
   * accounted and can be killed as a unit. */
  size_t extra = 4 * (sizeof res->cgroup.memory + 32) + 64;
  char *config = s->config = malloc(req->config_len + extra);
  if (!config) { set_failure(res, "agent", ENOMEM, "config"); return -1; }
  memcpy(config, req->config, req->config_len);
  size_t clen = req->config_len;
  const char *dirs[3] = {res->cgroup.memory, res->cgroup.pids, res->cgroup.cpu};
  if (res->cgroup.mode == LH_CG_V2) {
    /* One v2 directory holds the limits; PID 1 is cloned into it. */
    clen += (size_t)sprintf(config + clen, "cgmode") + 1;
    clen += (size_t)sprintf(config + clen, "v2") + 1;
  } else {
    for (int i = 0; i < 3; i++) {
      clen += (size_t)sprintf(config + clen, "cg") + 1;
      clen += (size_t)sprintf(config + clen, "%s/tasks", dirs[i]) + 1;
    }
  }
  clen += (size_t)sprintf(config + clen, "cg2") + 1;
  clen += (size_t)sprintf(config + clen, "%s", res->cgroup.v2) + 1;
  s->clen = clen;
  /* Egress is fail-closed: the helper refuses an egress config without a
   * net_guard record, and only this point adds one — after the lease's
   * egress allow-list was attached in the kernel (prepare_lease). */
  if (req->net_egress) {
    if (!(s->bpf_lease && res->bpf_enforced && req->bpf_net_enforced)) {
      set_failure(res, "network", EPERM, "egress lease without its BPF allow-list attached: refused");
      return -1;
    }
    clen += (size_t)sprintf(config + clen, "net_guard") + 1;
    clen += (size_t)sprintf(config + clen, "bpf") + 1;
    s->clen = clen;
  }
  return 0;
}

/* The five pipes, the helper started with posix_spawn and its config
 * written; the read ends handed to the captures. 0, or -1 with the failure
 * recorded (a config that could not be written is recorded and the helper,
 * which then refuses to start, still supervised). */
static int spawn_helper(struct launch_state *s) {
  const struct lh_launch_request *req = s->req;
  struct lh_launch_result *res = s->res;
  if (pipe2(s->cfg_pipe, O_CLOEXEC) < 0 || pipe2(s->st_pipe, O_CLOEXEC) < 0 || pipe2(s->in_pipe, O_CLOEXEC) < 0 ||
      pipe2(s->out_pipe, O_CLOEXEC) < 0 || pipe2(s->err_pipe, O_CLOEXEC) < 0) {
    set_failure(res, "agent", errno, "pipe2");
    return -1;
  }
  if (lift_fd(&s->cfg_pipe[0]) || lift_fd(&s->cfg_pipe[1]) || lift_fd(&s->st_pipe[0]) || lift_fd(&s->st_pipe[1]) ||
      lift_fd(&s->in_pipe[0]) || lift_fd(&s->in_pipe[1]) || lift_fd(&s->out_pipe[0]) || lift_fd(&s->out_pipe[1]) ||
      lift_fd(&s->err_pipe[0]) || lift_fd(&s->err_pipe[1])) {
    set_failure(res, "agent", errno, "F_DUPFD_CLOEXEC");
    return -1;
  }
  /* The config must fit the pipe so the write below never waits on a helper
   * that died early. */
  if (fcntl(s->cfg_pipe[1], F_SETPIPE_SZ, (int)(s->clen + 4096 > 65536 ? s->clen + 4096 : 65536)) < 0) {
    set_failure(res, "agent", errno, "config larger than the pipe can hold");
    return -1;
  }

  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  /* dup2 onto a different number clears close-on-exec on the target, which
   * is how only these five descriptors reach the helper. */
  posix_spawn_file_actions_adddup2(&fa, s->in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&fa, s->out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, s->err_pipe[1], 2);
  posix_spawn_file_actions_adddup2(&fa, s->cfg_pipe[0], LH_FD_CONFIG);
  posix_spawn_file_actions_adddup2(&fa, s->st_pipe[1], LH_FD_STATUS);
  posix_spawn_file_actions_addclosefrom_np(&fa, LH_FD_STATUS + 1);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  /* A new session: the sandbox must have no controlling terminal, or
   * /dev/tty + TIOCSTI could type into the operator's shell. */
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
  char *argv[] = {(char *)"leasehold-sandbox", NULL};
  char *envp[] = {NULL};
  /* glibc's posix_spawn is clone(CLONE_VM|CLONE_VFORK): cost independent
   * of the agent's RSS and safe from a thread of a multi-threaded process. */
  int rc = posix_spawn(&s->helper, req->helper_path, &fa, &attr, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close_fd(&s->cfg_pipe[0]);
  close_fd(&s->st_pipe[1]);
  close_fd(&s->in_pipe[0]);
  close_fd(&s->out_pipe[1]);
  close_fd(&s->err_pipe[1]);
  if (rc != 0) {
    s->helper = -1;
    set_failure(res, "spawn", rc, req->helper_path);
    return -1;
  }
  if (write(s->cfg_pipe[1], s->config, s->clen) != (ssize_t)s->clen) set_failure(res, "config", errno, "writing config");
  close_fd(&s->cfg_pipe[1]);

  fcntl(s->st_pipe[0], F_SETFL, O_NONBLOCK);
  fcntl(s->out_pipe[0], F_SETFL, O_NONBLOCK);
  fcntl(s->err_pipe[0], F_SETFL, O_NONBLOCK);
  fcntl(s->in_pipe[1], F_SETFL, O_NONBLOCK);
  /* Ownership moves to the captures: one owner per fd, or a double close
   * would close another launch thread's freshly opened descriptor. */
  s->out.fd = s->out_pipe[0];
  s->out_pipe[0] = -1;
  s->errc.fd = s->err_pipe[0];
  s->err_pipe[0] = -1;
  if (req->stdin_len == 0) close_fd(&s->in_pipe[1]);
  return 0;
}

/* One loop over the helper's status pipe, the workload's stdout/stderr and
 * stdin, and the deadline, until every read end is closed (or the hard stop
 * after a kill). Kept as one function: every branch reads and writes the
 * same handful of loop variables (ready, killed, deadline, hard_stop, the
 * progress marks), and splitting it would pass them all by pointer. */
static void supervise(struct launch_state *s) {
  const struct lh_launch_request *req = s->req;
  struct lh_launch_result *res = s->res;
  struct capture *out = &s->out, *errc = &s->errc;
  size_t in_off = 0;
  char stbuf[4096];
  size_t stlen = 0;
  int ready = 0, killed = 0;
  double deadline = s->t0 + (double)req->timeout_ms;
  double hard_stop = 0;
  uint64_t told_out = 0, told_err = 0;
  double told_at = 0;
  double every = req->progress_every_ms > 0 ? (double)req->progress_every_ms : 1000;
  while (s->st_pipe[0] >= 0 || out->fd >= 0 || errc->fd >= 0) {
    struct pollfd p[5];
    int n = 0, i_st = -1, i_out = -1, i_err = -1, i_in = -1, i_cancel = -1;
    if (s->st_pipe[0] >= 0) { p[n] = (struct pollfd){s->st_pipe[0], POLLIN, 0}; i_st = n++; }
    if (out->fd >= 0) { p[n] = (struct pollfd){out->fd, POLLIN, 0}; i_out = n++; }
    if (errc->fd >= 0) { p[n] = (struct pollfd){errc->fd, POLLIN, 0}; i_err = n++; }
    if (s->in_pipe[1] >= 0 && ready) { p[n] = (struct pollfd){s->in_pipe[1], POLLOUT, 0}; i_in = n++; }
    if (req->cancel_fd >= 0 && !killed) { p[n] = (struct pollfd){req->cancel_fd, POLLIN, 0}; i_cancel = n++; }
    double now = now_ms();
    if (!killed && now >= deadline) {
      res->timed_out = 1;
      killed = 1;
      lh_cgroup_kill(&res->cgroup);
      hard_stop = now + 5000;
    }
    if (killed && now >= hard_stop) break; /* withdrawal verifies */
    double until = killed ? hard_stop : deadline;
    /* Output not yet reported wakes us when its report is due, not later. */
    int pending = req->progress && (out->total != told_out || errc->total != told_err);
    if (pending && told_at + every < until) until = told_at + every;
    int timeout = until > now ? (int)(until - now) + 1 : 0;
    int r = poll(p, (nfds_t)n, timeout);
    if (r < 0) {
      if (errno == EINTR) continue;
      set_failure(res, "agent", errno, "poll");
      break;
    }
    if (i_st >= 0 && p[i_st].revents) {
      ssize_t k = read(s->st_pipe[0], stbuf + stlen, sizeof stbuf - 1 - stlen);
      if (k > 0) {
        stlen += (size_t)k;
        stbuf[stlen] = 0;
        char *nl;
        while ((nl = memchr(stbuf, '\n', stlen))) {
          *nl = 0;
          handle_status_line(res, stbuf, &ready);
          size_t used = (size_t)(nl - stbuf) + 1;
          memmove(stbuf, stbuf + used, stlen - used);
          stlen -= used;
        }
        if (ready && res->setup_ms == 0) res->setup_ms = now_ms() - s->t0;
        if (stlen == sizeof stbuf - 1) stlen = 0; /* a line that long is not ours */
      } else if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
        close_fd(&s->st_pipe[0]);
        s->status_eof = 1;
        /* PID 1 is gone, so is its pid namespace: the pipes close soon. A
         * workload that passed its write end elsewhere cannot hold us. */
        if (!killed) { hard_stop = now_ms() + 2000; killed = 1; deadline = 0; }
      }
    }
    if (i_cancel >= 0 && p[i_cancel].revents && !killed) {
      /* The hub asked to stop this run: the same kill as at the deadline, so
       * every process of the lease (a fork bomb's children included) ends
       * together and the withdrawal below verifies the cgroup empty. */
      res->cancelled = 1;
      killed = 1;
      lh_cgroup_kill(&res->cgroup);
      hard_stop = now_ms() + 5000;
    }
    if (i_out >= 0 && p[i_out].revents && drain(out) < 0) close_fd(&out->fd);
    if (i_err >= 0 && p[i_err].revents && drain(errc) < 0) close_fd(&errc->fd);
    if (req->progress && (out->total != told_out || errc->total != told_err)) {
      double t = now_ms();
      if (t >= told_at + every) {
        told_out = out->total;
        told_err = errc->total;
        told_at = t;
        req->progress(req->progress_ctx, told_out, told_err);
      }
    }
    if (i_in >= 0 && p[i_in].revents) {
      if (p[i_in].revents & (POLLERR | POLLHUP)) close_fd(&s->in_pipe[1]);
      else {
        ssize_t w = write(s->in_pipe[1], req->stdin_buf + in_off, req->stdin_len - in_off);
        if (w > 0) in_off += (size_t)w;
        if ((w < 0 && errno != EAGAIN) || in_off >= req->stdin_len) close_fd(&s->in_pipe[1]);
      }
    }
  }
  res->wall_ms = now_ms() - s->t0;
}

/* Whatever phase stopped: every descriptor closed, the helper reaped, the
 * counters read, the lease killed, verified empty and removed, its BPF
 * programs detached and their denials collected, the exit worked out and the
 * captures handed to the result. */
static void withdraw_lease(struct launch_state *s) {
  const struct lh_launch_request *req = s->req;
  struct lh_launch_result *res = s->res;
  close_fd(&s->cfg_pipe[0]); close_fd(&s->cfg_pipe[1]);
  close_fd(&s->st_pipe[0]); close_fd(&s->st_pipe[1]);
  close_fd(&s->in_pipe[0]); close_fd(&s->in_pipe[1]);
  close_fd(&s->out_pipe[0]); close_fd(&s->out_pipe[1]);
  close_fd(&s->err_pipe[0]); close_fd(&s->err_pipe[1]);
  close_fd(&s->out.fd); close_fd(&s->errc.fd);
  if (s->helper > 0) {
    struct rusage ru;
    int status = 0;
    /* Status EOF means PID 1 is gone and the helper is about to exit; wait
     * for it so its rusage includes the sandbox. Otherwise kill first. */
    if (!s->status_eof) lh_cgroup_kill(&res->cgroup);
    while (wait4(s->helper, &status, 0, &ru) < 0 && errno == EINTR) {}
    res->helper_status = status;
    res->cpu_user_ms = (double)ru.ru_utime.tv_sec * 1e3 + (double)ru.ru_utime.tv_usec / 1e3;
    res->cpu_sys_ms = (double)ru.ru_stime.tv_sec * 1e3 + (double)ru.ru_stime.tv_usec / 1e3;
  }
  if (res->cgroup.created) {
    lh_cgroup_read_stats(&res->cgroup, &res->stats, req->fault_unreadable);
    lh_cgroup_withdraw(&res->cgroup, &res->withdrawn_empty, &res->withdrawn_removed);
  }
  /* After the kill and the empty check: nothing of the lease can act any
   * more, so every denial is in the ring buffer. A cgroup that could not be
   * verified empty keeps its programs (deliberately leaked) rather than let
   * what may still run in it go unguarded. */
  if (s->bpf_lease && res->withdrawn_empty) {
    res->bpf_denials = calloc(LH_LAUNCH_MAX_DENIALS, sizeof *res->bpf_denials);
    lh_bpf_lease_withdraw(s->bpf_lease, res->bpf_denials, res->bpf_denials ? LH_LAUNCH_MAX_DENIALS : 0, &res->bpf_n_denials,
                          &res->bpf_dropped);
    res->bpf_withdrawn = 1;
  }
  lh_cgroup_forget(&res->cgroup); /* not live any more: a leftover is the sweep's */
  if (!res->failed && !res->reported_exit && !res->timed_out && !res->cancelled && s->helper > 0 && !res->exec_errno) {
    /* Neither an exit report nor a timeout: PID 1 itself was killed (e.g. the
     * memory cgroup's OOM killer chose it). Report what the kernel says. */
    if (WIFSIGNALED(res->helper_status)) res->term_signal = WTERMSIG(res->helper_status);
    else if (WIFEXITED(res->helper_status) && WEXITSTATUS(res->helper_status) > 128)
      res->term_signal = WEXITSTATUS(res->helper_status) - 128;
  }
  /* At the deadline we killed the cgroup: the workload ended by our SIGKILL. */
  if ((res->timed_out || res->cancelled) && !res->reported_exit) res->term_signal = SIGKILL;
  free(s->config);
  res->out = s->out.buf; res->out_len = s->out.len; res->out_total = s->out.total;
  res->err = s->errc.buf; res->err_len = s->errc.len; res->err_total = s->errc.total;
  if (res->wall_ms == 0) res->wall_ms = now_ms() - s->t0;
}

void lh_launch(const struct lh_launch_request *req, struct lh_launch_result *res) {
  memset(res, 0, sizeof *res);
  res->exit_code = -1;
  /* Until lh_cgroup_read_stats runs, no counter has been read: a zeroed
   * counter must not pass for a measured one. */
  for (int i = 0; i < LH_STAT_COUNT; i++) res->stats.err[i] = ENOENT;
  struct launch_state s = {
      .req = req, .res = res, .t0 = now_ms(), .err = "",
      .cfg_pipe = {-1, -1}, .st_pipe = {-1, -1}, .in_pipe = {-1, -1}, .out_pipe = {-1, -1}, .err_pipe = {-1, -1},
      .config = NULL, .clen = 0, .status_eof = 0, .helper = -1, .bpf_lease = NULL,
      .out = {-1, NULL, 0, req->stdout_max, 0}, .errc = {-1, NULL, 0, req->stderr_max, 0}};
  if (prepare_lease(&s) == 0 && build_config(&s) == 0 && spawn_helper(&s) == 0) supervise(&s);
  withdraw_lease(&s);
}
