/* SPDX-License-Identifier: UNLICENSED */
/* Static test driver run as the last step of a VM's init (see run.mjs): it
 * drives the real host side (launch.c + cgroup.c) and the real static
 * helper on a pure cgroup2 host with memory/pids/cpu enabled, and prints one
 * "LH-VM <check> PASS|FAIL ..." line per check and a final
 * "LH-VM-RESULT PASS|FAIL <passed>/<total>" line on the console. */
#define _GNU_SOURCE
#include "../../src/launch.h"
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HELPER "/usr/libexec/leasehold-sandbox"
#define PROBE "/usr/bin/lh-probe"
#define WORKDIR "/work-host"

static int passed, total;
static char cfgbuf[8192];
static size_t cfglen;

static void check(const char *name, int ok, const char *fmt, ...) {
  char detail[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  total++;
  if (ok) passed++;
  printf("LH-VM %s %s %s\n", name, ok ? "PASS" : "FAIL", detail);
  fflush(stdout);
}

static void put(const char *k, const char *v) {
  size_t kl = strlen(k) + 1, vl = strlen(v) + 1;
  if (cfglen + kl + vl > sizeof cfgbuf) abort();
  memcpy(cfgbuf + cfglen, k, kl);
  cfglen += kl;
  memcpy(cfgbuf + cfglen, v, vl);
  cfglen += vl;
}

static int seq;
static const char *faults = ""; /* lh_launch_request.fault_unreadable for the next run */
static const struct lh_bpf_file *bpf_exec; /* non-NULL: the next run is a BPF lease with this exec allow-list */
static size_t bpf_n_exec;

/* Counters not read, as "name:errno" list, for the detail line. */
static const char *unread_list(const struct lh_cgroup_stats *st, int *n) {
  static char buf[512];
  size_t len = 0;
  *n = 0;
  buf[0] = 0;
  for (int i = 0; i < LH_STAT_COUNT; i++) {
    if (!st->err[i]) continue;
    (*n)++;
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s%s%s:%d", len ? "," : "", st->file[i] ? st->file[i] : "?",
                            st->key[i] ? "/" : "", st->key[i] ? st->key[i] : "", st->err[i]);
    if (len >= sizeof buf) break;
  }
  return *n ? buf : "none";
}
/* argv: NULL-terminated. Limits as the JS layer would pass them. */
static void run(struct lh_launch_result *res, const char *const *argv, uint64_t mem, uint64_t pids, uint64_t quota_us,
                uint64_t timeout_ms) {
  static struct lh_launch_request req;
  memset(&req, 0, sizeof req);
  cfglen = 0;
  char uid[32];
  snprintf(uid, sizeof uid, "%u", 0x60000000u + (unsigned)++seq);
  chown(WORKDIR, (uid_t)strtoul(uid, NULL, 10), (gid_t)strtoul(uid, NULL, 10));
  put("uid", uid);
  put("gid", uid);
  put("workdir", WORKDIR);
  put("cwd", "/work");
  put("net", "none");
  put("tmp_bytes", "1048576");
  put("tmp_inodes", "64");
  put("nofile", "1024"); /* the JS layer's share of fs/file-max; any positive value serves here */
  put("landlock_abi", "0"); /* the guest kernel's Landlock is not what this test is about */
  put("landlock_scope", "0");
  for (int i = 0; argv[i]; i++) put("arg", argv[i]);
  put("env", "PATH=/usr/bin:/bin");
  snprintf(req.helper_path, sizeof req.helper_path, HELPER);
  snprintf(req.lease_id, sizeof req.lease_id, "vm%d", seq);
  req.config = cfgbuf;
  req.config_len = cfglen;
  req.stdout_max = req.stderr_max = 4096;
  req.timeout_ms = timeout_ms;
  req.limits.memory_bytes = mem;
  req.limits.pids_max = pids;
  req.limits.cpu_quota_us = quota_us;
  req.limits.cpu_period_us = 100000;
  snprintf(req.fault_unreadable, sizeof req.fault_unreadable, "%s", faults);
  req.cancel_fd = -1;
  if (bpf_exec) {
    req.bpf = 1;
    req.bpf_exec_enforced = 1;
    req.bpf_exec = bpf_exec;
    req.bpf_n_exec = bpf_n_exec;
  }
  lh_launch(&req, res);
  if (res->out_len < 4096) res->out[res->out_len] = 0; else res->out[4095] = 0;
  if (res->err_len < 4096) res->err[res->err_len] = 0; else res->err[4095] = 0;
  for (size_t i = 0; res->out[i]; i++) if (res->out[i] == '\n') res->out[i] = '|';
  for (size_t i = 0; res->err[i]; i++) if (res->err[i] == '\n') res->err[i] = '|';
}

static int write_str(const char *path, const char *v) {
  FILE *f = fopen(path, "w");
  if (!f) return -errno;
  int ok = fputs(v, f) >= 0;
  return fclose(f) == 0 && ok ? 0 : -errno;
}

static int write_pid(const char *path) {
  char v[32];
  snprintf(v, sizeof v, "%d\n", (int)getpid());
  return write_str(path, v) == 0;
}

static int gone(const char *path) {
  struct stat st;
  return stat(path, &st) < 0 && errno == ENOENT;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  mkdir(WORKDIR, 0755);
  char why[512] = "";
  int mode = lh_cgroup_mode(why, sizeof why);
  check("mode", mode == LH_CG_V2, "lh_cgroup_mode=%d (want %d=v2) %s", mode, LH_CG_V2, why);

  static struct lh_launch_result r;
  {
    const char *const argv[] = {"/usr/bin/busybox", "sh", "-c", "cat /proc/self/cgroup; echo hi", NULL};
    run(&r, argv, 64ull << 20, 16, 50000, 10000);
    char cgdir[PATH_MAX];
    snprintf(cgdir, sizeof cgdir, "%s", r.cgroup.v2);
    check("limits", !r.failed && r.cgroup.mode == LH_CG_V2 && r.cgroup.readback.memory_bytes == (64ull << 20) &&
                        r.cgroup.memsw_readback == (64ull << 20) && r.cgroup.readback.pids_max == 16 &&
                        r.cgroup.readback.cpu_quota_us == 50000 && r.cgroup.readback.cpu_period_us == 100000 &&
                        r.cgroup.v2_id > 1 && !strcmp(r.cgroup.memory, r.cgroup.v2),
          "failed=%d(%s %d %s) hierarchy=v%d memory.max=%llu memsw=%llu pids.max=%llu cpu.max=%llu/%llu cgroup_id=%llu dir=%s",
          r.failed, r.fail_stage, r.fail_errno, r.fail_message, r.cgroup.mode,
          (unsigned long long)r.cgroup.readback.memory_bytes, (unsigned long long)r.cgroup.memsw_readback,
          (unsigned long long)r.cgroup.readback.pids_max, (unsigned long long)r.cgroup.readback.cpu_quota_us,
          (unsigned long long)r.cgroup.readback.cpu_period_us, (unsigned long long)r.cgroup.v2_id, cgdir);
    check("run", r.reported_exit && r.exit_code == 0 && !strcmp(r.out, "0::/|hi|"),
          "exit=%d sig=%d stdout=%s stderr=%s", r.exit_code, r.term_signal, r.out, r.err);
    check("withdraw", r.withdrawn_empty && r.withdrawn_removed && gone(cgdir), "verified_empty=%d removed=%d gone=%d",
          r.withdrawn_empty, r.withdrawn_removed, gone(cgdir));
    lh_launch_free(&r);
  }
  {
    const char *const argv[] = {PROBE, "mem_bomb", NULL};
    run(&r, argv, 32ull << 20, 16, 100000, 20000);
    check("oom", !r.failed && r.stats.value[LH_STAT_OOM_KILL] > 0 && !r.timed_out && r.withdrawn_empty && r.withdrawn_removed,
          "memory.events oom_kill=%llu oom=%llu max=%llu memory.peak=%llu exit=%d sig=%d reported=%d stdout=%s",
          (unsigned long long)r.stats.value[LH_STAT_OOM_KILL], (unsigned long long)r.stats.value[LH_STAT_UNDER_OOM],
          (unsigned long long)r.stats.value[LH_STAT_MEMORY_FAILCNT], (unsigned long long)r.stats.value[LH_STAT_MEMORY_MAX_USAGE], r.exit_code,
          r.term_signal, r.reported_exit, r.out);
    lh_launch_free(&r);
  }
  {
    /* Every counter of the v2 path exists on this kernel (memory.peak 5.19+,
     * pids.peak 6.1+) and is read: none is reported unknown. */
    const char *const argv[] = {"/usr/bin/busybox", "true", NULL};
    run(&r, argv, 64ull << 20, 16, 100000, 10000);
    int n;
    const char *list = unread_list(&r.stats, &n);
    check("counters", !r.failed && n == 0 && r.stats.value[LH_STAT_OOM_KILL] == 0 &&
                          r.stats.value[LH_STAT_PIDS_EVENTS_MAX] == 0 && r.stats.value[LH_STAT_MEMORY_MAX_USAGE] > 0,
          "unread=%s oom_kill=%llu pids.events max=%llu memory.peak=%llu", list,
          (unsigned long long)r.stats.value[LH_STAT_OOM_KILL], (unsigned long long)r.stats.value[LH_STAT_PIDS_EVENTS_MAX],
          (unsigned long long)r.stats.value[LH_STAT_MEMORY_MAX_USAGE]);
    lh_launch_free(&r);
  }
  {
    /* The fault seam: memory.events and pids.events fail to read. The
     * OOM-killed run's counters must come back unread (err set), not 0. */
    const char *const argv[] = {PROBE, "mem_bomb", NULL};
    faults = "memory.events pids.events";
    run(&r, argv, 32ull << 20, 16, 100000, 20000);
    faults = "";
    int n;
    const char *list = unread_list(&r.stats, &n);
    check("unread", !r.failed && r.stats.err[LH_STAT_OOM_KILL] == EIO && r.stats.err[LH_STAT_MEMORY_FAILCNT] == EIO &&
                        r.stats.err[LH_STAT_PIDS_EVENTS_MAX] == EIO && !strcmp(r.stats.file[LH_STAT_OOM_KILL], "memory.events") &&
                        r.stats.err[LH_STAT_MEMORY_MAX_USAGE] == 0 && r.stats.err[LH_STAT_CPU_NR_PERIODS] == 0 && n == 4,
          "unread=%s sig=%d", list, r.term_signal);
    lh_launch_free(&r);
  }
  {
    const char *const argv[] = {PROBE, "fork_bomb", NULL};
    run(&r, argv, 64ull << 20, 8, 100000, 20000);
    check("pids", !r.failed && r.stats.value[LH_STAT_PIDS_EVENTS_MAX] > 0 && strstr(r.out, "ERR EAGAIN") && r.withdrawn_empty &&
                      r.withdrawn_removed,
          "pids.events max=%llu stdout=%s exit=%d", (unsigned long long)r.stats.value[LH_STAT_PIDS_EVENTS_MAX], r.out, r.exit_code);
    lh_launch_free(&r);
  }
  {
    const char *const argv[] = {PROBE, "cpu_hog", "1000", NULL};
    run(&r, argv, 64ull << 20, 8, 20000, 20000);
    check("cpu", !r.failed && r.stats.value[LH_STAT_CPU_NR_THROTTLED] > 0 && r.exit_code == 0,
          "cpu.stat nr_periods=%llu nr_throttled=%llu throttled_ms=%llu cpu_ms=%.0f wall_ms=%.0f",
          (unsigned long long)r.stats.value[LH_STAT_CPU_NR_PERIODS], (unsigned long long)r.stats.value[LH_STAT_CPU_NR_THROTTLED],
          (unsigned long long)(r.stats.value[LH_STAT_CPU_THROTTLED_NS] / 1000000), r.cpu_user_ms + r.cpu_sys_ms, r.wall_ms);
    lh_launch_free(&r);
  }
  {
    /* The deadline kills the whole cgroup (cgroup.kill), daemonised children included. */
    const char *const argv[] = {"/usr/bin/busybox", "sh", "-c", "(sleep 60 &); sleep 60", NULL};
    run(&r, argv, 64ull << 20, 8, 100000, 500);
    check("deadline", r.timed_out && r.withdrawn_empty && r.withdrawn_removed, "timed_out=%d wall_ms=%.0f empty=%d removed=%d",
          r.timed_out, r.wall_ms, r.withdrawn_empty, r.withdrawn_removed);
    lh_launch_free(&r);
  }
  {
    /* The launcher's BPF lease on a kernel that enforces LSM programs (this
     * boot's lsm= ends in bpf): the lease's programs guard the cgroup before
     * the helper's PID 1 is cloned into it, so inside the full sandbox (user
     * namespace, pivot_root, seccomp) an exec off the allow-list fails with
     * EPERM (sh reports 126), the allowed busybox runs, and the denial comes
     * back in the result after the cgroup was verified empty. */
    struct stat bb, pr;
    int st_ok = stat("/usr/bin/busybox", &bb) == 0 && stat(PROBE, &pr) == 0;
    struct lh_bpf_file allow[1] = {{bb.st_dev, bb.st_ino}};
    struct lh_bpf_status bst;
    lh_bpf_init(0, &bst);
    bpf_exec = allow;
    bpf_n_exec = 1;
    const char *const argv[] = {"/usr/bin/busybox", "sh", "-c", PROBE "; echo rc=$?", NULL};
    run(&r, argv, 64ull << 20, 16, 100000, 10000);
    bpf_exec = NULL;
    const struct lh_bpf_denial *d = r.bpf_n_denials ? &r.bpf_denials[0] : NULL;
    check("bpf_launch", st_ok && bst.tier == 'A' && !r.failed && r.bpf_enforced && r.bpf_withdrawn && r.withdrawn_removed &&
                            strstr(r.out, "rc=126") && r.bpf_n_denials == 1 && d->kind == LH_DENY_EXEC && d->ino == pr.st_ino &&
                            d->dev == pr.st_dev && r.bpf_dropped == 0,
          "tier=%c failed=%d(%s %s) enforced=%d withdrawn=%d removed=%d stdout=%s stderr=%s denials=%zu first=[kind=%u dev=%llx ino=%llu comm=%.16s] (want %s %llx:%llu) dropped=%llu",
          bst.tier, r.failed, r.fail_stage, r.fail_message, r.bpf_enforced, r.bpf_withdrawn, r.withdrawn_removed, r.out, r.err,
          r.bpf_n_denials, d ? d->kind : 0, d ? (unsigned long long)d->dev : 0, d ? (unsigned long long)d->ino : 0, d ? d->comm : "",
          PROBE, (unsigned long long)pr.st_dev, (unsigned long long)pr.st_ino, (unsigned long long)r.bpf_dropped);
    lh_launch_free(&r);
  }
  {
    /* A stale lease of a dead owner with a live process inside: swept via cgroup.kill. */
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, NULL, 0);
    const char *prefix = lh_cgroup_owner_prefix(); /* "lh.<ns>.<pid>.<start>." */
    unsigned long long ns = strtoull(prefix + 3, NULL, 10);
    char stale[PATH_MAX], procs[PATH_MAX + 32];
    snprintf(stale, sizeof stale, "/sys/fs/cgroup/leasehold/lh.%llu.%d.1.stale", ns, (int)dead);
    mkdir("/sys/fs/cgroup/leasehold", 0755);
    int mk = mkdir(stale, 0755);
    pid_t victim = fork();
    if (victim == 0) { execl("/usr/bin/busybox", "sleep", "600", (char *)NULL); _exit(127); }
    snprintf(procs, sizeof procs, "%s/cgroup.procs", stale);
    FILE *f = fopen(procs, "w");
    int moved = f && fprintf(f, "%d\n", (int)victim) > 0;
    if (f) fclose(f);
    struct lh_sweep_report rep;
    lh_cgroup_sweep(&rep);
    int st = 0;
    pid_t w = waitpid(victim, &st, 0);
    check("sweep", mk == 0 && moved && rep.killed >= 1 && rep.removed >= 1 && rep.n_failures == 0 && gone(stale) &&
                       w == victim && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
          "removed=%u killed=%u live_own=%u live_other=%u foreign=%u failures=%u%s%s victim_signal=%d", rep.removed,
          rep.killed, rep.live_own, rep.live_other, rep.foreign, rep.n_failures,
          rep.n_failures ? " first=" : "", rep.n_failures ? rep.failures[0].reason : "",
          WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  }
  {
    /* The agent in a non-root cgroup that holds processes (systemd
     * Delegate=yes + DelegateSubgroup= layout): its own cgroup cannot give
     * children controllers ("no internal processes"), so leases go to
     * <parent>/leasehold, with the same limits. */
    mkdir("/sys/fs/cgroup/svc", 0755);
    int en = write_str("/sys/fs/cgroup/svc/cgroup.subtree_control", "+memory +pids +cpu");
    mkdir("/sys/fs/cgroup/svc/agent", 0755);
    int moved = write_pid("/sys/fs/cgroup/svc/agent/cgroup.procs");
    const char *const argv[] = {"/usr/bin/busybox", "sh", "-c", "echo ran", NULL};
    run(&r, argv, 48ull << 20, 8, 30000, 5000);
    check("sibling", en == 0 && moved && !r.failed && r.cgroup.mode == LH_CG_V2 &&
                         !strncmp(r.cgroup.v2, "/sys/fs/cgroup/svc/leasehold/lh.", 32) &&
                         r.cgroup.readback.memory_bytes == (48ull << 20) && r.cgroup.readback.pids_max == 8 &&
                         r.cgroup.readback.cpu_quota_us == 30000 && !strcmp(r.out, "ran|") && r.withdrawn_removed,
          "failed=%d(%s %s) dir=%s memory.max=%llu pids.max=%llu cpu.max=%llu stdout=%s removed=%d", r.failed,
          r.fail_stage, r.fail_message, r.cgroup.v2, (unsigned long long)r.cgroup.readback.memory_bytes,
          (unsigned long long)r.cgroup.readback.pids_max, (unsigned long long)r.cgroup.readback.cpu_quota_us, r.out,
          r.withdrawn_removed);
    lh_launch_free(&r);
  }
  {
    /* Fail closed: pids not delegated to our cgroup (and no v1 hierarchy):
     * refused at the cgroup stage, nothing runs, nothing is created. */
    mkdir("/sys/fs/cgroup/x", 0755);
    int en = write_str("/sys/fs/cgroup/x/cgroup.subtree_control", "+memory +cpu");
    mkdir("/sys/fs/cgroup/x/y", 0755);
    int moved = write_pid("/sys/fs/cgroup/x/y/cgroup.procs");
    const char *const argv[] = {"/usr/bin/busybox", "sh", "-c", "echo ran", NULL};
    run(&r, argv, 64ull << 20, 8, 100000, 5000);
    check("refuse", en == 0 && moved && r.failed && !strcmp(r.fail_stage, "cgroup") && r.fail_errno == EOPNOTSUPP &&
                        !r.reported_exit && r.out_len == 0 && r.cgroup.created == 0,
          "failed=%d stage=%s errno=%d message=%s stdout=%s", r.failed, r.fail_stage, r.fail_errno, r.fail_message, r.out);
    lh_launch_free(&r);
  }
  printf("LH-VM-RESULT %s %d/%d\n", passed == total ? "PASS" : "FAIL", passed, total);
  fflush(stdout);
  return passed == total ? 0 : 1;
}
