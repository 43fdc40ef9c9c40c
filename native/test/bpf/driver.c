/* SPDX-License-Identifier: UNLICENSED */
/* Static test driver of the lease allow-list programs, written against the C
 * API in native/src/bpf_guard.h only (lh_bpf_init, lh_bpf_lease_add,
 * lh_bpf_lease_withdraw). It runs in two places with the same checks:
 *   - inside the VM (native/test/vm/bpf-lsm.mjs): tier A with `bpf` in the
 *     guest kernel's lsm= list, tier B without it;
 *   - natively on the host (driver.test.ts next to this file), tier B.
 * It makes its own network namespace (loopback only: nothing it does can
 * reach past the machine), a throwaway cgroup v2 directory as the lease, and
 * forks one child per check that moves itself into that directory and tries
 * one thing. Prints one "LH-VM <check> PASS|FAIL <detail>" line per check and
 * "LH-VM-RESULT PASS|FAIL <passed>/<total> tier=<X>" last.
 *
 * Usage: lh-bpf-driver [--max-tier A|B|C] [--expect-tier A|B|C]
 *                      --ldso <dynamic loader> --dynamic <ran.c built dynamic>
 *                      [--dir <scratch dir on the file system to test>]
 * (`lh-bpf-driver --ran` is the static exec target: it exits 77.) */
#define _GNU_SOURCE
#include "../../src/bpf_guard.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RAN 77         /* an exec target ran (ran.c, `--ran`) */
#define JOIN_FAILED 250
#define NEST_REFUSED 251
#define P_ALLOW 4801   /* in our own network namespace: no one else's ports */
#define P_DENY 4802

static int passed, total;
static char tier = '?';

static void check(const char *name, int ok, const char *fmt, ...) {
  char detail[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  total++;
  if (ok) passed++;
  printf("LH-VM %s %s %s\n", name, ok ? "PASS" : "FAIL", detail);
  fflush(stdout);
}

/* ---- the lease's cgroup ------------------------------------------------- */

/* The first cgroup2 mount: /sys/fs/cgroup in the VM (pure v2), the
 * controller-less /sys/fs/cgroup/unified on a hybrid host. */
static int cgroup2_mount(char *out, size_t len) {
  FILE *f = fopen("/proc/self/mountinfo", "r");
  if (!f) return -errno;
  char line[4096];
  int found = -ENOENT;
  while (found && fgets(line, sizeof line, f)) {
    char mnt[PATH_MAX], fstype[64];
    const char *sep = strstr(line, " - ");
    if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 || sscanf(sep + 3, "%63s", fstype) != 1) continue;
    if (!strcmp(fstype, "cgroup2")) found = snprintf(out, len, "%s", mnt) < (int)len ? 0 : -ENAMETOOLONG;
  }
  fclose(f);
  return found;
}

static int join_cgroup(const char *dir) {
  char path[PATH_MAX + 16];
  snprintf(path, sizeof path, "%s/cgroup.procs", dir);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int r = write(fd, "0\n", 2) == 2 ? 0 : -errno;
  close(fd);
  return r;
}

/* ---- children ------------------------------------------------------------ */

typedef int (*op_fn)(const void *arg);
static pid_t lease_pids[64];
static size_t n_lease_pids;

/* Forks; the child joins `cgroup` (NULL: stays outside every lease) and
 * exits with op's answer: 0 done, an errno, RAN, JOIN_FAILED. */
static int in_child(const char *cgroup, op_fn op, const void *arg) {
  fflush(stdout);
  pid_t p = fork();
  if (p < 0) return -1;
  if (p == 0) {
    alarm(20);
    if (cgroup && join_cgroup(cgroup) < 0) _exit(JOIN_FAILED);
    _exit(op(arg));
  }
  if (cgroup && n_lease_pids < sizeof lease_pids / sizeof lease_pids[0]) lease_pids[n_lease_pids++] = p;
  int ws = 0;
  while (waitpid(p, &ws, 0) < 0 && errno == EINTR) {}
  return ws;
}

static const char *outcome(int ws) {
  static char buf[8][64];
  static int i;
  char *b = buf[i++ % 8];
  if (WIFSIGNALED(ws)) snprintf(b, 64, "signal=%s", sigabbrev_np(WTERMSIG(ws)) ? sigabbrev_np(WTERMSIG(ws)) : "?");
  else if (!WIFEXITED(ws)) snprintf(b, 64, "status=%#x", ws);
  else if (WEXITSTATUS(ws) == 0) snprintf(b, 64, "ok");
  else if (WEXITSTATUS(ws) == RAN) snprintf(b, 64, "ran");
  else if (WEXITSTATUS(ws) == JOIN_FAILED) snprintf(b, 64, "join-failed");
  else if (WEXITSTATUS(ws) == NEST_REFUSED) snprintf(b, 64, "nesting-refused");
  else if (WEXITSTATUS(ws) == 127) snprintf(b, 64, "exit=127");
  else snprintf(b, 64, "errno=%s", strerrorname_np(WEXITSTATUS(ws)) ? strerrorname_np(WEXITSTATUS(ws)) : "?");
  return b;
}

static int is_ok(int ws) { return WIFEXITED(ws) && WEXITSTATUS(ws) == 0; }
static int is_ran(int ws) { return WIFEXITED(ws) && WEXITSTATUS(ws) == RAN; }
static int is_eperm(int ws) { return WIFEXITED(ws) && WEXITSTATUS(ws) == EPERM; }
/* A refused exec: tier A's bprm_check_security fails execve with EPERM; tier
 * B's exec tracepoint kills the new image with SIGKILL before it runs. */
static int is_exec_denied(int ws) {
  return tier == 'A' ? is_eperm(ws) : WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL;
}

static int op_exec(const void *arg) {
  char *const *argv = (char *const *)arg;
  execv(argv[0], argv);
  return errno;
}

struct net_op {
  int family, type, port;
  const char *addr; /* text */
  int use_sendto;   /* UDP: sendto with the address (else connect) */
};

static socklen_t fill_addr(const struct net_op *o, struct sockaddr_storage *ss) {
  memset(ss, 0, sizeof *ss);
  if (o->family == AF_INET) {
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)o->port);
    inet_pton(AF_INET, o->addr, &a->sin_addr);
    return sizeof *a;
  }
  struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
  a->sin6_family = AF_INET6;
  a->sin6_port = htons((uint16_t)o->port);
  inet_pton(AF_INET6, o->addr, &a->sin6_addr);
  return sizeof *a;
}

static int op_net(const void *arg) {
  const struct net_op *o = arg;
  struct sockaddr_storage ss;
  socklen_t sl = fill_addr(o, &ss);
  int fd = socket(o->family, o->type | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  if (o->use_sendto) return sendto(fd, "u", 1, 0, (struct sockaddr *)&ss, sl) == 1 ? 0 : errno;
  if (connect(fd, (struct sockaddr *)&ss, sl) < 0) return errno;
  /* A connected socket must stay usable: sendmsg without an address is not an egress decision. */
  return send(fd, "x", 1, 0) == 1 ? 0 : errno;
}

/* Sockets whose traffic no connect/sendmsg hook sees. Tier B's cgroup
 * sock_create hook runs from inet_create/inet6_create only, so a packet
 * socket is not BPF's to refuse there: in a lease, seccomp's family
 * allow-list and the dropped CAP_NET_RAW refuse it (bpf/lease_cgroup.bpf.c);
 * tier A's socket_create hook refuses it itself. */
struct raw_op { int family, type, proto, tier_b; const char *name; };
static const struct raw_op RAWS[] = {
  {AF_INET, SOCK_RAW, IPPROTO_ICMP, 1, "inet-raw"},
  {AF_INET6, SOCK_RAW, IPPROTO_ICMPV6, 1, "inet6-raw"},
  {AF_PACKET, SOCK_RAW, 0x0300 /* htons(ETH_P_ALL) */, 0, "packet"},
};
static unsigned raw_refused; /* how many of RAWS this tier refuses */
static int op_raw(const void *arg) {
  const struct raw_op *r = arg;
  int fd = socket(r->family, r->type | SOCK_CLOEXEC, r->proto);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

static char lease_dir[PATH_MAX], nested_dir[PATH_MAX + 16];
static int op_nested(const void *arg) {
  /* Already in the lease: make a child cgroup, move there, exec. The lease
   * must follow (ancestor lookup) or nesting must be refused. */
  if (mkdir(nested_dir, 0755) < 0 && errno != EEXIST) return NEST_REFUSED;
  if (join_cgroup(nested_dir) < 0) return NEST_REFUSED;
  return op_exec(arg);
}

/* ---- loopback servers ---------------------------------------------------- */

static int loopback_up(void) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
  int r = ioctl(fd, SIOCGIFFLAGS, &ifr);
  if (r == 0) {
    ifr.ifr_flags |= IFF_UP;
    r = ioctl(fd, SIOCSIFFLAGS, &ifr);
  }
  r = r < 0 ? -errno : 0;
  close(fd);
  return r;
}

static int server(int family, int type, int port) {
  struct net_op o = {family, type, port, family == AF_INET ? "127.0.0.1" : "::1", 0};
  struct sockaddr_storage ss;
  socklen_t sl = fill_addr(&o, &ss);
  int fd = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1;
  if (fd < 0) return -errno;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || (type == SOCK_STREAM && listen(fd, 16) < 0)) {
    int e = errno;
    close(fd);
    return -e;
  }
  return fd;
}

/* Datagrams waiting on a UDP server (and drops them). */
static int drain(int fd) {
  char b[64];
  int n = 0;
  while (recv(fd, b, sizeof b, MSG_DONTWAIT) >= 0) n++;
  return n;
}

/* TCP: a connection waiting on the listener whose first byte is 'x' (1), none (0). */
static int accepted(int lfd) {
  int n = 0, c;
  while ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
    char b = 0;
    struct timeval tv = {2, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (recv(c, &b, 1, 0) == 1 && b == 'x') n++;
    close(c);
  }
  return n;
}

/* ---- files --------------------------------------------------------------- */

static int copy_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, r = 0;
  char buf[65536];
  ssize_t n;
  if (in < 0) return -errno;
  out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (out < 0) r = -errno;
  while (!r && (n = read(in, buf, sizeof buf)) > 0)
    if (write(out, buf, (size_t)n) != n) r = -EIO;
  close(in);
  if (out >= 0 && close(out) < 0 && !r) r = -errno;
  return r;
}

static struct lh_bpf_file file_id(const char *path) {
  struct stat st;
  struct lh_bpf_file f = {0, 0};
  if (stat(path, &st) == 0) f = (struct lh_bpf_file){st.st_dev, st.st_ino};
  return f;
}

static const char *arg_after(int argc, char **argv, const char *name) {
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], name)) return argv[i + 1];
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--ran")) return RAN;
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *max_tier = arg_after(argc, argv, "--max-tier"), *expect = arg_after(argc, argv, "--expect-tier");
  const char *ldso = arg_after(argc, argv, "--ldso"), *dynamic = arg_after(argc, argv, "--dynamic");
  const char *scratch = arg_after(argc, argv, "--dir");

  /* A network namespace of our own: loopback only, no port of anyone else's. */
  int netns = unshare(CLONE_NEWNET) == 0 ? 0 : -errno;
  int lo = netns ? netns : loopback_up();

  struct lh_bpf_status st;
  memset(&st, 0, sizeof st);
  lh_bpf_init(max_tier ? max_tier[0] : 0, &st);
  tier = st.tier;
  for (char *p = st.detail; *p; p++) if (*p == '\n') *p = ' ';
  int sha_ok = strlen(st.object_sha256) == 64 && strspn(st.object_sha256, "0123456789abcdef") == 64;
  check("detect", (expect ? tier == expect[0] : (tier == 'A' || tier == 'B')) && (tier == 'C' || sha_ok),
        "tier=%c expected=%s object_sha256=%s detail=%s", tier ? tier : '?', expect ? expect : "A|B",
        st.object_sha256[0] ? st.object_sha256 : "-", st.detail);

  /* The scratch files: two copies of this (static) program and two of the
   * dynamic ran.c, one of each on the allow-list, on the file system of
   * `--dir` (so its device numbers are the ones converted). */
  char dir[PATH_MAX], allowed[PATH_MAX + 16], denied[PATH_MAX + 16], dyn_allowed[PATH_MAX + 16], dyn_denied[PATH_MAX + 16];
  snprintf(dir, sizeof dir, "%s/lh-bpf-driver.XXXXXX", scratch ? scratch : "/tmp");
  int setup = mkdtemp(dir) ? 0 : -errno;
  snprintf(allowed, sizeof allowed, "%s/allowed", dir);
  snprintf(denied, sizeof denied, "%s/denied", dir);
  snprintf(dyn_allowed, sizeof dyn_allowed, "%s/dyn-allowed", dir);
  snprintf(dyn_denied, sizeof dyn_denied, "%s/dyn-denied", dir);
  if (!setup) setup = copy_file("/proc/self/exe", allowed);
  if (!setup) setup = copy_file("/proc/self/exe", denied);
  int have_dyn = dynamic && ldso && access(ldso, X_OK) == 0;
  if (!setup && have_dyn) setup = copy_file(dynamic, dyn_allowed);
  if (!setup && have_dyn) setup = copy_file(dynamic, dyn_denied);

  char mnt[PATH_MAX] = "";
  int cgm = cgroup2_mount(mnt, sizeof mnt);
  snprintf(lease_dir, sizeof lease_dir, "%s/lh-bpf-driver.%d", mnt, (int)getpid());
  snprintf(nested_dir, sizeof nested_dir, "%s/nested", lease_dir);
  int mk = cgm ? cgm : mkdir(lease_dir, 0755) == 0 ? 0 : -errno;
  struct stat cgst;
  uint64_t cgid = !mk && stat(lease_dir, &cgst) == 0 ? cgst.st_ino : 0;

  int t4a = server(AF_INET, SOCK_STREAM, P_ALLOW), t4d = server(AF_INET, SOCK_STREAM, P_DENY);
  int t6a = server(AF_INET6, SOCK_STREAM, P_ALLOW), t6d = server(AF_INET6, SOCK_STREAM, P_DENY);
  int u4a = server(AF_INET, SOCK_DGRAM, P_ALLOW), u4d = server(AF_INET, SOCK_DGRAM, P_DENY);
  int u6a = server(AF_INET6, SOCK_DGRAM, P_ALLOW), u6d = server(AF_INET6, SOCK_DGRAM, P_DENY);
  int servers_ok = t4a >= 0 && t4d >= 0 && t6a >= 0 && t6d >= 0 && u4a >= 0 && u4d >= 0 && u6a >= 0 && u6d >= 0;

  struct lh_bpf_file exec_allow[2] = {file_id(allowed), file_id(dynamic ? dyn_allowed : allowed)};
  struct lh_bpf_rule egress[2] = {{.family = 4, .prefix = 32, .port = P_ALLOW}, {.family = 6, .prefix = 128, .port = P_ALLOW}};
  inet_pton(AF_INET, "127.0.0.1", egress[0].addr);
  inet_pton(AF_INET6, "::1", egress[1].addr);
  struct lh_bpf_lease_spec spec = {
    .cgroup_id = cgid, .cgroup_path = lease_dir,
    .exec_enforced = 1, .exec = exec_allow, .n_exec = 2,
    .net_enforced = 1, .egress = egress, .n_egress = 2,
  };
  struct lh_bpf_lease *lease = NULL;
  char err[1024] = "";
  int added = -1;
  if (!setup && !mk && servers_ok && (tier == 'A' || tier == 'B')) added = lh_bpf_lease_add(&spec, &lease, err, sizeof err);
  check("lease_add", added == 0,
        "rc=%d %s netns=%d lo=%d scratch=%s(%d) cgroup=%s(%d) id=%llu servers=%d exec_allow=%llx:%llu,%llx:%llu egress=127.0.0.1/32:%d,[::1]/128:%d",
        added, err, netns, lo, dir, setup, lease_dir, mk, (unsigned long long)cgid, servers_ok,
        (unsigned long long)exec_allow[0].dev, (unsigned long long)exec_allow[0].ino, (unsigned long long)exec_allow[1].dev,
        (unsigned long long)exec_allow[1].ino, P_ALLOW, P_ALLOW);
  const char *in = lease_dir;
  int ws, ws2;

  /* ---- exec ---- */
  char *argv_allowed[] = {allowed, "--ran", NULL}, *argv_denied[] = {denied, "--ran", NULL};
  char *argv_dyn[] = {dyn_allowed, NULL}, *argv_ldso[] = {(char *)(ldso ? ldso : "/nonexistent-ld.so"), dyn_denied, NULL};
  ws = in_child(in, op_exec, argv_allowed);
  check("exec_allowed", is_ran(ws), "%s: %s", allowed, outcome(ws));
  ws = in_child(in, op_exec, argv_denied);
  check("exec_denied", is_exec_denied(ws), "%s: %s (want %s)", denied, outcome(ws), tier == 'A' ? "errno=EPERM" : "signal=KILL");
  ws = in_child(in, op_exec, argv_dyn);
  check("exec_dynamic", have_dyn && is_ran(ws), "%s (interpreter %s and its libc not on the list): %s", dynamic ? dyn_allowed : "no --dynamic given",
        ldso ? ldso : "-", have_dyn ? outcome(ws) : "not run");
  ws = have_dyn ? in_child(in, op_exec, argv_ldso) : 0;
  ws2 = have_dyn ? in_child(NULL, op_exec, argv_ldso) : 0;
  check("exec_ldso", have_dyn && is_exec_denied(ws) && is_ran(ws2), "%s %s: in lease %s (want %s), outside %s",
        ldso ? ldso : "no --ldso given", dyn_denied, have_dyn ? outcome(ws) : "not run", tier == 'A' ? "errno=EPERM" : "signal=KILL",
        have_dyn ? outcome(ws2) : "not run");
  ws = in_child(in, op_nested, argv_denied);
  int nested_exec = !(WIFEXITED(ws) && WEXITSTATUS(ws) == NEST_REFUSED);
  check("exec_nested", is_exec_denied(ws) || !nested_exec, "%s then %s: %s", nested_dir, denied, outcome(ws));

  /* ---- egress ---- */
  drain(u4a), drain(u4d), drain(u6a), drain(u6d), accepted(t4a), accepted(t4d), accepted(t6a), accepted(t6d);
  struct net_op tcp4a = {AF_INET, SOCK_STREAM, P_ALLOW, "127.0.0.1", 0}, tcp4d = {AF_INET, SOCK_STREAM, P_DENY, "127.0.0.1", 0};
  struct net_op tcp6a = {AF_INET6, SOCK_STREAM, P_ALLOW, "::1", 0}, tcp6d = {AF_INET6, SOCK_STREAM, P_DENY, "::1", 0};
  struct net_op udp4a = {AF_INET, SOCK_DGRAM, P_ALLOW, "127.0.0.1", 1}, udp4d = {AF_INET, SOCK_DGRAM, P_DENY, "127.0.0.1", 1};
  struct net_op udp6a = {AF_INET6, SOCK_DGRAM, P_ALLOW, "::1", 1}, udp6d = {AF_INET6, SOCK_DGRAM, P_DENY, "::1", 1};
  struct net_op udp4c = {AF_INET, SOCK_DGRAM, P_DENY, "127.0.0.1", 0};
  struct net_op mapped = {AF_INET6, SOCK_STREAM, P_DENY, "::ffff:127.0.0.1", 0};
  int got;

  ws = in_child(in, op_net, &tcp4a), got = accepted(t4a);
  check("tcp4_allowed", is_ok(ws) && got == 1, "connect+send 127.0.0.1:%d: %s, server got %d", P_ALLOW, outcome(ws), got);
  ws = in_child(in, op_net, &tcp4d), got = accepted(t4d);
  check("tcp4_denied", is_eperm(ws) && got == 0, "connect 127.0.0.1:%d: %s, server got %d", P_DENY, outcome(ws), got);
  ws = in_child(in, op_net, &udp4a), got = drain(u4a);
  check("udp4_allowed", is_ok(ws) && got == 1, "sendto 127.0.0.1:%d: %s, server got %d", P_ALLOW, outcome(ws), got);
  ws = in_child(in, op_net, &udp4d), got = drain(u4d);
  check("udp4_denied", is_eperm(ws) && got == 0, "sendto 127.0.0.1:%d: %s, server got %d", P_DENY, outcome(ws), got);
  ws = in_child(in, op_net, &udp4c), got = drain(u4d);
  check("udp4_connect_denied", is_eperm(ws) && got == 0, "connect(UDP) 127.0.0.1:%d: %s, server got %d", P_DENY, outcome(ws), got);
  ws = in_child(in, op_net, &tcp6a), got = accepted(t6a);
  check("tcp6_allowed", is_ok(ws) && got == 1, "connect+send [::1]:%d: %s, server got %d", P_ALLOW, outcome(ws), got);
  ws = in_child(in, op_net, &tcp6d), got = accepted(t6d);
  check("tcp6_denied", is_eperm(ws) && got == 0, "connect [::1]:%d: %s, server got %d", P_DENY, outcome(ws), got);
  ws = in_child(in, op_net, &udp6a), got = drain(u6a);
  check("udp6_allowed", is_ok(ws) && got == 1, "sendto [::1]:%d: %s, server got %d", P_ALLOW, outcome(ws), got);
  ws = in_child(in, op_net, &udp6d), got = drain(u6d);
  check("udp6_denied", is_eperm(ws) && got == 0, "sendto [::1]:%d: %s, server got %d", P_DENY, outcome(ws), got);
  ws = in_child(in, op_net, &mapped), got = accepted(t4d);
  check("mapped_denied", is_eperm(ws) && got == 0, "connect [::ffff:127.0.0.1]:%d: %s, server got %d", P_DENY, outcome(ws), got);

  int raw_ok = 1;
  char raw_detail[512] = "";
  size_t rl = 0;
  for (size_t i = 0; i < sizeof RAWS / sizeof RAWS[0]; i++) {
    int want = tier == 'A' || RAWS[i].tier_b;
    ws = in_child(in, op_raw, &RAWS[i]);
    raw_ok &= want ? is_eperm(ws) : 1;
    raw_refused += (unsigned)want;
    rl += (size_t)snprintf(raw_detail + rl, sizeof raw_detail - rl, "%s%s:%s%s", i ? " " : "", RAWS[i].name, outcome(ws),
                           want ? "" : "(not tier B's: seccomp refuses it in a lease)");
  }
  check("raw", raw_ok, "%s (want errno=EPERM%s)", raw_detail, tier == 'A' ? " each" : " for inet/inet6 raw");

  /* ---- a process outside the lease, same moment, same targets ---- */
  {
    int e1 = in_child(NULL, op_exec, argv_denied);
    int e2 = in_child(NULL, op_net, &tcp4d), g2 = accepted(t4d);
    int e3 = in_child(NULL, op_net, &udp6d), g3 = drain(u6d);
    int e4 = in_child(NULL, op_net, &mapped), g4 = accepted(t4d);
    int e5 = in_child(NULL, op_raw, &RAWS[0]);
    check("outside", is_ran(e1) && is_ok(e2) && g2 == 1 && is_ok(e3) && g3 == 1 && is_ok(e4) && g4 == 1 && is_ok(e5),
          "exec %s: %s; tcp4 :%d: %s (got %d); udp6 :%d: %s (got %d); mapped :%d: %s (got %d); inet-raw: %s", denied,
          outcome(e1), P_DENY, outcome(e2), g2, P_DENY, outcome(e3), g3, P_DENY, outcome(e4), g4, outcome(e5));
  }

  /* ---- withdrawal: every denial above is one event of the right kind ---- */
  static struct lh_bpf_denial dn[256];
  size_t n = 0;
  uint64_t dropped = 0;
  if (lease) lh_bpf_lease_withdraw(lease, dn, sizeof dn / sizeof dn[0], &n, &dropped);
  struct lh_bpf_file fd_denied = file_id(denied), fd_ldso = file_id(ldso ? ldso : "/"); /* stat follows the loader's symlink */
  unsigned count[6] = {0}, strays = 0;
  char strays_detail[512] = "";
  size_t sl = 0;
  for (size_t i = 0; i < n; i++) {
    const struct lh_bpf_denial *d = &dn[i];
    int ours = 0;
    for (size_t j = 0; j < n_lease_pids; j++) ours |= lease_pids[j] == (pid_t)d->pid;
    int fits = 0;
    switch (d->kind) {
    case LH_DENY_EXEC:
      fits = (d->dev == fd_denied.dev && d->ino == fd_denied.ino) || (d->dev == fd_ldso.dev && d->ino == fd_ldso.ino);
      break;
    case LH_DENY_CONNECT:
      fits = d->port == P_DENY && (d->family == 4 || d->family == 6);
      break;
    case LH_DENY_SENDMSG:
      fits = d->port == P_DENY && d->proto == IPPROTO_UDP && (d->family == 4 || d->family == 6);
      break;
    case LH_DENY_SOCKET:
      fits = 1;
      break;
    default:
      break;
    }
    if (d->kind < 6) count[d->kind]++;
    if (!ours || !fits) {
      strays++;
      sl += (size_t)snprintf(strays_detail + sl, sl < sizeof strays_detail ? sizeof strays_detail - sl : 0,
                             " [kind=%u pid=%u comm=%.16s fam=%u proto=%u port=%u dev=%llx ino=%llu]", d->kind, d->pid, d->comm,
                             d->family, d->proto, d->port, (unsigned long long)d->dev, (unsigned long long)d->ino);
      if (sl >= sizeof strays_detail) sl = sizeof strays_detail - 1;
    }
  }
  unsigned want_exec = 1 + (unsigned)have_dyn + (unsigned)nested_exec, want_connect = 4, want_sendmsg = 2, want_socket = raw_refused;
  check("events", lease && count[LH_DENY_EXEC] == want_exec && count[LH_DENY_CONNECT] == want_connect &&
                      count[LH_DENY_SENDMSG] == want_sendmsg && count[LH_DENY_SOCKET] == want_socket && count[LH_DENY_FILE] == 0 &&
                      dropped == 0 && strays == 0,
        "exec=%u connect=%u sendmsg=%u socket=%u file=%u dropped=%llu (want %u/%u/%u/%u/0/0); denied file %llx:%llu, ld.so %llx:%llu; strays=%u%s",
        count[LH_DENY_EXEC], count[LH_DENY_CONNECT], count[LH_DENY_SENDMSG], count[LH_DENY_SOCKET], count[LH_DENY_FILE],
        (unsigned long long)dropped, want_exec, want_connect, want_sendmsg, want_socket, (unsigned long long)fd_denied.dev,
        (unsigned long long)fd_denied.ino, (unsigned long long)fd_ldso.dev, (unsigned long long)fd_ldso.ino, strays, strays_detail);

  rmdir(nested_dir);
  rmdir(lease_dir);
  unlink(allowed), unlink(denied), unlink(dyn_allowed), unlink(dyn_denied), rmdir(dir);
  printf("LH-VM-RESULT %s %d/%d tier=%c\n", passed == total ? "PASS" : "FAIL", passed, total, tier ? tier : '?');
  fflush(stdout);
  return passed == total ? 0 : 1;
}
