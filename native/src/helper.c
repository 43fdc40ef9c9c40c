/* SPDX-License-Identifier: UNLICENSED */
/*
 * leasehold-sandbox: the single-threaded helper the addon spawns (vfork-style
 * posix_spawn) for one workload. It runs as host root only long enough to
 * join the lease's cgroups and enter fresh namespaces; it forks the sandbox's
 * PID 1, which builds the root as root, then becomes the per-lease uid in a
 * user namespace of its own, drops everything and starts the workload.
 * Protocol: protocol.h. Any failure before "R" means nothing ran.
 */
#define _GNU_SOURCE
#include "caps.h"
#include "hostpath.h"
#include "config.h"
#include "init.h"
#include "landlock.h"
#include "mount.h"
#include "net.h"
#include "protocol.h"
#include "seccomp.h"
#include "user.h"
#include "util.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static struct sandbox_config cfg;
static char config_buf[LH_MAX_CONFIG];
/* 1/0: the sandbox's network namespace is owned by the helper's user
 * namespace, measured by PID 1 while still host root; -1 unmeasured. */
static int netns_owner_init = -1;
/* Read end of a pipe whose write end only the helper holds: PID 1 sees it
 * hang up once the helper is gone (see sandbox_pid1). */
static int helper_alive_fd = -1;

int path_within(const char *path, const char *dir) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  if (n == 1 && dir[0] == '/') return 1;
  return strncmp(path, dir, n) == 0 && (path[n] == 0 || path[n] == '/');
}

int exec_allowed_under(const struct sandbox_config *c, const char *dir) {
  for (int i = 0; i < c->n_ll_exec; i++) {
    if (path_within(c->ll_exec[i], dir) || path_within(dir, c->ll_exec[i])) return 1;
  }
  return 0;
}

static unsigned long long parse_u64(const char *key, const char *v) {
  char *end;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 10);
  if (errno || *end || end == v) fail("config", EINVAL, key);
  return x;
}

/* RFC 1123 host name: dot-separated labels of 1-63 letters, digits and
 * hyphens, not starting or ending with a hyphen, 253 characters at most. */
static int valid_hostname(const char *n, size_t len) {
  if (len == 0 || len > 253) return 0;
  size_t label = 0;
  for (size_t i = 0; i < len; i++) {
    char c = n[i];
    if (c == '.') {
      if (label == 0 || n[i - 1] == '-') return 0;
      label = 0;
      continue;
    }
    int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && !(c == '-' && label > 0)) return 0;
    if (++label > 63) return 0;
  }
  return label > 0 && n[len - 1] != '-';
}

/* "<address> <name>": one address the kernel's parser accepts, written only
 * with lower-case hex digits, dots and colons (index.ts sends the canonical
 * text of server/trust/egress.ts, which the file then repeats verbatim, as
 * the evidence does), one space, one RFC 1123 name. Nothing else can reach
 * /etc/hosts: no second line, no option, no alias list. */
static int valid_hosts_line(const char *v) {
  const char *sp = strchr(v, ' ');
  if (!sp || sp == v || (size_t)(sp - v) >= INET6_ADDRSTRLEN) return 0;
  char addr[INET6_ADDRSTRLEN];
  memcpy(addr, v, (size_t)(sp - v));
  addr[sp - v] = 0;
  if (strspn(addr, "0123456789abcdef.:") != strlen(addr)) return 0;
  unsigned char bin[16];
  int fam = strchr(addr, ':') ? AF_INET6 : AF_INET;
  if (inet_pton(fam, addr, bin) != 1) return 0;
  return valid_hostname(sp + 1, strlen(sp + 1));
}

#define PUSH(arr, n, v)                                             \
  do {                                                              \
    if ((n) >= LH_MAX_ITEMS) fail("config", E2BIG, "too many items"); \
    (arr)[(n)++] = (v);                                             \
  } while (0)

/* The whole config from LH_FD_CONFIG into config_buf (NUL-terminated); its length. */
static size_t read_config_bytes(void) {
  size_t len = 0;
  for (;;) {
    ssize_t n = read(LH_FD_CONFIG, config_buf + len, sizeof config_buf - 1 - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("config", errno, "read config fd");
    if (n == 0) break;
    len += (size_t)n;
    if (len >= sizeof config_buf - 1) fail("config", E2BIG, "config too large");
  }
  close(LH_FD_CONFIG);
  config_buf[len] = 0;
  return len;
}

/* One "key\0value\0" record into cfg; `last`: no record follows it. */
static void apply_record(const char *k, char *v, int last) {
  if (!strcmp(k, "uid")) cfg.lease_uid = (uid_t)parse_u64(k, v);
  else if (!strcmp(k, "gid")) cfg.lease_gid = (gid_t)parse_u64(k, v);
  else if (!strcmp(k, "workdir")) cfg.workdir_host = v;
  else if (!strcmp(k, "cwd")) cfg.cwd = v;
  else if (!strcmp(k, "workdir_access")) {
    if (strcmp(v, "rw") && strcmp(v, "ro")) fail("config", EINVAL, "workdir_access");
    cfg.workdir_ro = !strcmp(v, "ro");
  }
  else if (!strcmp(k, "hostname")) cfg.hostname = v;
  else if (!strcmp(k, "net")) {
    /* Anything but these two is refused: an unknown value must never
     * leave the workload in the host's network namespace. */
    if (strcmp(v, "none") && strcmp(v, "egress")) fail("config", EINVAL, "net");
    cfg.net_egress = !strcmp(v, "egress");
  }
  else if (!strcmp(k, "net_guard")) {
    /* launch.c appends it as the very last record, after the cgroup
     * records it adds itself: one anywhere else did not come from there. */
    if (cfg.net_guard || !last) fail("config", EINVAL, "net_guard: only launch.c's, as the last record");
    cfg.net_guard = v;
  }
  else if (!strcmp(k, "host")) {
    if (!valid_hosts_line(v)) fail("config", EINVAL, "host: want '<canonical address> <RFC 1123 name>'");
    PUSH(cfg.hosts, cfg.n_hosts, v);
  }
  else if (!strcmp(k, "sock_inet")) cfg.sock_inet = parse_u64(k, v) != 0;
  else if (!strcmp(k, "tmp_bytes")) cfg.tmp_bytes = parse_u64(k, v);
  else if (!strcmp(k, "tmp_inodes")) cfg.tmp_inodes = parse_u64(k, v);
  else if (!strcmp(k, "nofile")) cfg.nofile = parse_u64(k, v);
  else if (!strcmp(k, "landlock_abi")) cfg.landlock_abi_min = (int)parse_u64(k, v);
  else if (!strcmp(k, "landlock_scope")) cfg.landlock_scope = (int)parse_u64(k, v);
  else if (!strcmp(k, "cg2")) cfg.cgroup_v2 = v;
  else if (!strcmp(k, "cgmode")) {
    if (strcmp(v, "v2")) fail("config", EINVAL, "cgmode");
    cfg.cgroup_v2_limits = 1;
  }
  else if (!strcmp(k, "cg")) {
    if (cfg.n_cgroup_procs >= 8) fail("config", E2BIG, "too many cgroups");
    cfg.cgroup_procs[cfg.n_cgroup_procs++] = v;
  } else if (!strcmp(k, "ro")) PUSH(cfg.ro_binds, cfg.n_ro_binds, v);
  else if (!strcmp(k, "hp")) hostpath_parse(&cfg, v);
  else if (!strcmp(k, "ll_ro")) PUSH(cfg.ll_ro, cfg.n_ll_ro, v);
  else if (!strcmp(k, "ll_rw")) PUSH(cfg.ll_rw, cfg.n_ll_rw, v);
  else if (!strcmp(k, "ll_exec")) PUSH(cfg.ll_exec, cfg.n_ll_exec, v);
  else if (!strcmp(k, "tcp_connect")) PUSH(cfg.tcp_connect, cfg.n_tcp_connect, (uint16_t)parse_u64(k, v));
  else if (!strcmp(k, "tcp_bind")) PUSH(cfg.tcp_bind, cfg.n_tcp_bind, (uint16_t)parse_u64(k, v));
  else if (!strcmp(k, "arg")) PUSH(cfg.argv, cfg.argc, v);
  else if (!strcmp(k, "env")) PUSH(cfg.envp, cfg.envc, v);
  else fail("config", EINVAL, k); /* unknown key: refuse rather than ignore */
}

/* What must hold once every record is in: each refusal keeps the workload
 * from running weaker than its policy. */
static void check_config(void) {
  /* net_guard is appended by launch.c (host side) only once the lease's
   * egress allow-list is attached in the kernel; without it an egress lease
   * would reach whatever the host routes to. */
  if (cfg.net_egress && (!cfg.net_guard || !*cfg.net_guard))
    fail("network", EPERM, "egress lease without its kernel allow-list (no net_guard from the launcher): refused");
  if (!cfg.net_egress && (cfg.net_guard || cfg.n_hosts))
    fail("config", EINVAL, "net_guard/host records need net egress");
  if (cfg.nofile == 0) fail("config", EINVAL, "no nofile: refusing to run with the agent's open-file limit");
  if (cfg.argc == 0) fail("config", EINVAL, "empty argv");
  if (!cfg.workdir_host) fail("config", EINVAL, "no workdir");
  /* cwd is only chdir'ed to: the workspace itself is always at /work. */
  if (cfg.cwd[0] != '/' || strstr(cfg.cwd, "..") || !path_within(cfg.cwd, LH_WORKSPACE))
    fail("config", EINVAL, "cwd must be " LH_WORKSPACE " or below it");
  /* v1: the three v1 `tasks` files and the identity dir; v2: the lease's v2
   * directory carries the limits itself and must be the only cgroup given. */
  if (!cfg.cgroup_v2 || (cfg.cgroup_v2_limits ? cfg.n_cgroup_procs != 0 : cfg.n_cgroup_procs == 0))
    fail("config", EINVAL, "no cgroups: refusing to run unlimited");
}

static void read_config(void) {
  size_t len = read_config_bytes();
  cfg.cwd = "/work";
  cfg.hostname = "leasehold";
  cfg.tmp_bytes = 64ull << 20;
  cfg.tmp_inodes = 16384;
  size_t off = 0;
  while (off < len) {
    char *k = config_buf + off;
    off += strlen(k) + 1;
    if (off >= len + 1) fail("config", EINVAL, "truncated record");
    char *v = config_buf + off;
    off += strlen(v) + 1;
    apply_record(k, v, off == len);
  }
  cfg.argv[cfg.argc] = NULL;
  cfg.envp[cfg.envc] = NULL;
  check_config();
}

static void reset_signals(void) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (int s = 1; s < _NSIG; s++) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    signal(s, SIG_DFL); /* Node ignores SIGPIPE; the workload must not inherit that */
  }
}

/* v1 hierarchies: write "0" to `tasks`. A single-threaded process moving
 * itself is the one migration the kernel does without the global
 * cgroup_threadgroup_rwsem write lock, whose RCU grace period otherwise costs
 * ~25 ms per launch here. Every later process of the lease inherits these. */
static void join_v1_cgroups(void) {
  for (int i = 0; i < cfg.n_cgroup_procs; i++) {
    int rc = write_file_str(cfg.cgroup_procs[i], "0");
    if (rc < 0) fail("cgroup", -rc, cfg.cgroup_procs[i]);
  }
}

/* PID 1 is created directly inside the lease's v2 directory
 * (clone3 + CLONE_INTO_CGROUP), for the same reason. */
static pid_t fork_into_v2_cgroup(void) {
  int dfd = open(cfg.cgroup_v2, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) fail("cgroup", errno, cfg.cgroup_v2);
  struct clone_args args;
  memset(&args, 0, sizeof args);
  args.flags = CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = (uint64_t)dfd;
  long p = syscall(SYS_clone3, &args, sizeof args);
  if (p < 0) fail("cgroup", errno, "clone3(CLONE_INTO_CGROUP) into the lease's v2 directory");
  if (p > 0) close(dfd);
  else close(dfd);
  return (pid_t)p;
}

/* fs/file-max is one open-file table for the whole host, and a full one
 * answers ENFILE to every process without CAP_SYS_ADMIN. The launcher sizes
 * `nofile` so that RLIMIT_NOFILE × pids_max stays within the lease's share;
 * soft and hard alike, and never above what we were given. Read back. */
static void limit_open_files(void) {
  struct rlimit have;
  if (getrlimit(RLIMIT_NOFILE, &have) < 0) fail("rlimit", errno, "getrlimit(RLIMIT_NOFILE)");
  rlim_t n = cfg.nofile < have.rlim_max ? (rlim_t)cfg.nofile : have.rlim_max;
  struct rlimit lim = {.rlim_cur = n, .rlim_max = n};
  if (setrlimit(RLIMIT_NOFILE, &lim) < 0) fail("rlimit", errno, "setrlimit(RLIMIT_NOFILE)");
  if (getrlimit(RLIMIT_NOFILE, &have) < 0) fail("rlimit", errno, "getrlimit(RLIMIT_NOFILE)");
  report("K nofile %llu %llu", (unsigned long long)have.rlim_cur, (unsigned long long)have.rlim_max);
}

/* Values read back from the kernel after containment, for the evidence
 * envelope: what /proc says about us, not what the policy asked for. */
static void report_readback(int landlock_abi, int seccomp_rules) {
  static char status[4096];
  if (read_file_buf("/proc/self/status", status, sizeof status) < 0) fail("readback", errno, "/proc/self/status");
  static const char *const fields[] = {"Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:", "CapEff:", "CapBnd:",
                                       "CapAmb:", "NoNewPrivs:", "Seccomp:", "Seccomp_filters:", NULL};
  for (char *line = strtok(status, "\n"); line; line = strtok(NULL, "\n")) {
    for (int i = 0; fields[i]; i++) {
      size_t n = strlen(fields[i]);
      if (!strncmp(line, fields[i], n)) {
        char *v = line + n;
        while (*v == ' ' || *v == '\t') v++;
        for (char *t = v; *t; t++) if (*t == '\t') *t = ' ';
        report("K %.*s %s", (int)(n - 1), fields[i], v);
      }
    }
  }
  char map[128];
  if (read_file_buf("/proc/self/uid_map", map, sizeof map) > 0) report("K uid_map %s", strtok(map, "\n"));
  if (read_file_buf("/proc/self/gid_map", map, sizeof map) > 0) report("K gid_map %s", strtok(map, "\n"));
  static const char *const ns[] = {"user", "mnt", "pid", "net", "ipc", "uts", "cgroup", NULL};
  for (int i = 0; ns[i]; i++) {
    char path[64], link[64];
    snprintf(path, sizeof path, "/proc/self/ns/%s", ns[i]);
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n > 0) { link[n] = 0; report("K ns_%s %s", ns[i], link); }
  }
  if (netns_owner_init >= 0) report("K netns_owner_init %d", netns_owner_init);
  report("K landlock_abi %d", landlock_abi);
  report("K seccomp_rules %d", seccomp_rules);
  report("K pid_in_sandbox %d", (int)getpid());
}

/* What the lease's network is, for the evidence: the host end's name and
 * both ends' addresses, and the forwarding values read back. */
static void report_egress(const struct lh_egress *e) {
  char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
  report("K net_guard %s", cfg.net_guard);
  report("K net_if %s", e->host_if);
  inet_ntop(AF_INET, &e->host4, a, sizeof a);
  inet_ntop(AF_INET, &e->inside4, b, sizeof b);
  report("K net_ipv4 %s/30 %s", b, a);
  if (e->ipv6) {
    inet_ntop(AF_INET6, &e->host6, a, sizeof a);
    inet_ntop(AF_INET6, &e->inside6, b, sizeof b);
    report("K net_ipv6 %s/126 %s", b, a);
  }
  report("K net_forwarding4 %d", e->forwarding4);
  report("K net_forwarding6 %d", e->forwarding6);
}

static _Noreturn void exec_workload(void) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  /* stdio arrived without close-on-exec (dup2 in posix_spawn clears it);
   * everything else is closed, the status fd closes at a successful exec. */
  if (syscall(SYS_close_range, LH_FD_STATUS + 1, ~0U, 0) < 0) fail("exec", errno, "close_range");
  if (fcntl(LH_FD_STATUS, F_SETFD, FD_CLOEXEC) < 0) fail("exec", errno, "status fd cloexec");
  if (chdir(cfg.cwd) < 0) { report("F %d", errno); _exit(127); }
  /* execvpe resolves argv[0] against the policy's PATH, not ours. */
  extern char **environ;
  environ = cfg.envp;
  execvpe(cfg.argv[0], cfg.argv, cfg.envp);
  report("F %d", errno);
  _exit(127);
}

static _Noreturn void sandbox_pid1(void) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) fail("init", errno, "PR_SET_PDEATHSIG");
  /* The helper's cgroup namespace is rooted where the helper was when it
   * unshared; PID 1 was cloned into the lease's v2 directory after that.
   * Root a cgroup namespace at the lease itself, so the workload sees "/"
   * and not the lease's path (which names the agent's pid). */
  if (unshare(CLONE_NEWCGROUP) < 0) fail("namespaces", errno, "unshare(CLONE_NEWCGROUP) in pid 1");
  /* Still host root here, in namespaces owned by the initial user
   * namespace: the workload's later user namespace owns none of them, so
   * even capabilities regained there would not reach its mounts or network. */
  open_bind_sources(&cfg);
  setup_newroot(&cfg);
  close(cfg.workdir_fd);
  for (int i = 0; i < cfg.n_ro_binds; i++) close(cfg.ro_bind_fds[i]);
  hostpath_close_all(&cfg);
  hostpath_readback(&cfg);
  if (sethostname(cfg.hostname, strlen(cfg.hostname)) < 0) fail("uts", errno, "sethostname");
  setup_loopback();
  int memfd_locked = lock_memfd_noexec(); /* needs host root: before the identity drop */
  netns_owner_init = netns_owned_by_own_userns();
  drop_privs_enter_userns(cfg.lease_uid, cfg.lease_gid);
  /* The kernel clears the parent-death signal when credentials change, so
   * the one set above is gone now: set it again, then check the helper did
   * not die in between (its pipe end would have hung up). Without this a
   * killed agent left PID 1 and the workload running until the cgroup
   * sweep, and with them the lease's network namespace and its lh<N>. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) fail("init", errno, "PR_SET_PDEATHSIG after the identity drop");
  struct pollfd hp = {.fd = helper_alive_fd, .events = POLLIN};
  if (poll(&hp, 1, 0) != 0) _exit(125); /* hung up (or readable: never written) — the helper is gone */
  close(helper_alive_fd);
  /* Not dumpable: the workload (same uid) must not reach PID 1 through
   * /proc/1/mem or /proc/1/fd (the status pipe). */
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) fail("identity", errno, "PR_SET_DUMPABLE 0");
  /* stdio of PID 1 itself: only the workload writes to the capture pipes. */
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) fail("init", errno, "/dev/null");

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) fail("nnp", errno, "PR_SET_NO_NEW_PRIVS");
  int abi = 0;
  if (cfg.landlock_abi_min > 0) abi = apply_landlock(&cfg, elf_interpreter_path());
  drop_all_caps();
  int rules = apply_seccomp(&cfg, memfd_locked);
  limit_open_files();
  report_readback(abi, rules);
  throwaway_mark();

  sigset_t fwd;
  init_forward_set(&fwd);
  sigprocmask(SIG_BLOCK, &fwd, NULL);
  report("R");
  pid_t w = fork();
  if (w < 0) fail("init", errno, "fork workload");
  if (w == 0) exec_workload();
  if (dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0) fail("init", errno, "dup2 /dev/null");
  close(devnull);
  run_init(w, &fwd);
}

int main(int argc, char **argv) {
  reset_signals();
  if (argc == 3 && !strcmp(argv[1], "--probe-idmap")) {
    if (getuid() != 0 || geteuid() != 0) _exit(125);
    hostpath_probe_idmap(argv[2]);
  }
  if (getuid() != 0 || geteuid() != 0) fail("helper", EPERM, "leasehold-sandbox must start as root");
  read_config();
  join_v1_cgroups();
  /* If the agent thread that spawned us dies, so does the sandbox. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) fail("helper", errno, "PR_SET_PDEATHSIG");
  if (getppid() == 1) fail("helper", ESRCH, "agent went away");
  /* The network namespace belongs to a user namespace of its own (see
   * net.c), so the kernel never broadcasts host uevents into it. An egress
   * lease also gets its veth pair: the host half is set up from here, still
   * in the host's network namespace, then the helper joins the lease's. */
  if (cfg.net_egress) {
    struct lh_egress eg;
    int nsfd = open_private_netns();
    egress_setup_host(nsfd, &eg);
    if (setns(nsfd, CLONE_NEWNET) < 0) fail("net", errno, "setns(lease netns)");
    close(nsfd);
    egress_setup_inside(&eg);
    report_egress(&eg);
  } else {
    enter_private_netns();
  }
  /* Before the new pid namespace: the idmap holder children must stay in
   * ours, where /proc names them. The clones are detached: nothing shows. */
  hostpath_open_all(&cfg);
  int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  if (unshare(flags) < 0) fail("namespaces", errno, "unshare(mnt,pid,ipc,uts,cgroup)");
  /* This process is small and single-threaded: a plain fork is cheap and
   * safe here (unlike in Node's process). The child is PID 1 of the new pid
   * namespace. */
  int alive[2];
  if (pipe2(alive, O_CLOEXEC) < 0) fail("helper", errno, "pipe2");
  pid_t p1 = fork_into_v2_cgroup();
  if (p1 < 0) fail("namespaces", errno, "fork pid 1");
  if (p1 == 0) {
    close(alive[1]);
    helper_alive_fd = alive[0];
    sandbox_pid1();
  }
  close(alive[0]); /* alive[1] stays open until the helper exits */
  report("P %d", (int)p1);
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0) { dup2(devnull, 0); dup2(devnull, 1); dup2(devnull, 2); close(devnull); }
  close(LH_FD_STATUS);
  int status;
  while (waitpid(p1, &status, 0) < 0) {
    if (errno != EINTR) _exit(125);
  }
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  _exit(128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0));
}
