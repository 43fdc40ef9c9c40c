/* Hostile corpus workload: `probe <op> [arg]` attempts one forbidden thing
 * and prints "OK" or "ERR <errno-name>". Kept deliberately small: each op is
 * one syscall or one tight loop. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/if_ether.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include <grp.h>
#include <sys/time.h>
#include <time.h>
#include <sys/un.h>
#include <sys/sendfile.h>
#include <linux/openat2.h>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

static int res(long rc);
/* Family names for the socket survey (index = AF_* number, 0..45). */
static const char *const fam_names[] = {
    "AF_UNSPEC", "AF_UNIX", "AF_INET", "AF_AX25", "AF_IPX", "AF_APPLETALK", "AF_NETROM", "AF_BRIDGE",
    "AF_ATMPVC", "AF_X25", "AF_INET6", "AF_ROSE", "AF_DECnet", "AF_NETBEUI", "AF_SECURITY", "AF_KEY",
    "AF_NETLINK", "AF_PACKET", "AF_ASH", "AF_ECONET", "AF_ATMSVC", "AF_RDS", "AF_SNA", "AF_IRDA",
    "AF_PPPOX", "AF_WANPIPE", "AF_LLC", "AF_IB", "AF_MPLS", "AF_CAN", "AF_TIPC", "AF_BLUETOOTH",
    "AF_IUCV", "AF_RXRPC", "AF_ISDN", "AF_PHONET", "AF_IEEE802154", "AF_CAIF", "AF_ALG", "AF_NFC",
    "AF_VSOCK", "AF_KCM", "AF_QIPCRTR", "AF_SMC", "AF_XDP", "AF_MCTP"};

/* "OK" when any type opens, else the distinct errno names in type order. */
static void survey_one(int fam, int pair, char *out, size_t n) {
  static const int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET};
  out[0] = 0;
  for (unsigned i = 0; i < 4; i++) {
    int sv[2], rc;
    if (pair) rc = socketpair(fam, types[i], 0, sv);
    else rc = sv[0] = socket(fam, types[i], 0);
    if (rc >= 0) {
      close(sv[0]);
      if (pair) close(sv[1]);
      snprintf(out, n, "OK");
      return;
    }
    const char *e = strerrorname_np(errno);
    if (!strstr(out, e)) snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? "/" : "", e);
  }
}

/* An anonymous file (memfd or O_TMPFILE) holding a copy of `src`. */
static int copy_into(int fd, const char *src) {
  int in = open(src, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (in < 0 || fstat(in, &st) < 0) return -1;
  for (off_t off = 0; off < st.st_size;)
    if (sendfile(fd, in, &off, (size_t)(st.st_size - off)) <= 0) return -1;
  close(in);
  return 0;
}
static int staged_memfd(unsigned flags) {
  int fd = (int)syscall(SYS_memfd_create, "staged", flags);
  if (fd < 0) { printf("memfd_create ERR %s\n", strerrorname_np(errno)); return -1; }
  printf("memfd_create OK\n");
  if (copy_into(fd, "/usr/bin/echo") < 0) { printf("copy ERR %s\n", strerrorname_np(errno)); return -1; }
  return fd;
}
static char *const echo_argv[] = {"echo", "EXECUTED", NULL};
static char *const no_env[] = {NULL};
static int exec_proc_fd(int fd) {
  char p[64];
  snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
  execve(p, echo_argv, no_env);
  return res(-1);
}
static mode_t oct(const char *s) { return (mode_t)strtoul(s, NULL, 8); }

static int res(long rc) {
  if (rc < 0) { printf("ERR %s\n", strerrorname_np(errno)); return 0; }
  printf("OK\n");
  return 0;
}
static int sock_connect(int fam, int type, const char *ip, int port) {
  int s = socket(fam, type, 0);
  if (s < 0) return res(-1);
  if (fam == AF_INET) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, ip, &a.sin_addr);
    if (type == SOCK_DGRAM) return res(sendto(s, "x", 1, 0, (void *)&a, sizeof a));
    return res(connect(s, (void *)&a, sizeof a));
  }
  struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
  inet_pton(AF_INET6, ip, &a.sin6_addr);
  return res(connect(s, (void *)&a, sizeof a));
}
static int open_write(const char *p) { return res(open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644)); }
static int open_read(const char *p) { return res(open(p, O_RDONLY)); }

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const char *op = argv[1], *arg = argc > 2 ? argv[2] : "", *arg2 = argc > 3 ? argv[3] : "0";
  setvbuf(stdout, NULL, _IONBF, 0);
#define IS(x) (!strcmp(op, x))
  /* mount */
  if (IS("mount_tmpfs")) return res(mount("none", "/tmp", "tmpfs", 0, NULL));
  if (IS("mount_bind")) return res(mount("/usr", "/tmp", NULL, MS_BIND, NULL));
  if (IS("mount_proc")) return res(mount("proc", "/tmp", "proc", 0, NULL));
  if (IS("remount_rw")) return res(mount(NULL, "/usr", NULL, MS_REMOUNT | MS_BIND, NULL));
  if (IS("umount_proc")) return res(umount2("/proc", MNT_DETACH));
  if (IS("umount_work")) return res(umount2("/work", 0));
  /* against a path given as arg (a host path's /host/<label>) */
  if (IS("remount_rw_at")) return res(mount(NULL, arg, NULL, MS_REMOUNT | MS_BIND, NULL));
  if (IS("umount_at")) return res(umount2(arg, MNT_DETACH));
  if (IS("setattr_rw_at")) {
    struct { unsigned long long set, clr, prop, userns; } a = {0, 0x1 /* MOUNT_ATTR_RDONLY */, 0, 0};
    return res(syscall(SYS_mount_setattr, AT_FDCWD, arg, 0, &a, sizeof a));
  }
  if (IS("fsopen")) return res(syscall(SYS_fsopen, "tmpfs", 0));
  if (IS("open_tree")) return res(syscall(SYS_open_tree, AT_FDCWD, "/usr", 1 /*CLONE*/));
  if (IS("move_mount")) return res(syscall(SYS_move_mount, AT_FDCWD, "/work", AT_FDCWD, "/tmp", 0));
  if (IS("mount_setattr")) return res(syscall(SYS_mount_setattr, AT_FDCWD, "/work", 0, NULL, 0));
  /* pivot_root / chroot */
  if (IS("pivot_root")) return res(syscall(SYS_pivot_root, ".", "."));
  if (IS("pivot_root_tmp")) return res(syscall(SYS_pivot_root, "/tmp", "/tmp"));
  if (IS("chroot")) return res(chroot("/tmp"));
  /* namespaces */
  if (IS("unshare_user")) return res(unshare(CLONE_NEWUSER));
  if (IS("unshare_mnt")) return res(unshare(CLONE_NEWNS));
  if (IS("unshare_net")) return res(unshare(CLONE_NEWNET));
  if (IS("unshare_pid")) return res(unshare(CLONE_NEWPID));
  if (IS("unshare_ipc")) return res(unshare(CLONE_NEWIPC));
  if (IS("unshare_uts")) return res(unshare(CLONE_NEWUTS));
  if (IS("unshare_cgroup")) return res(unshare(CLONE_NEWCGROUP));
  if (IS("unshare_time")) return res(unshare(0x80));
  if (IS("setns_proc1")) {
    char p[64]; snprintf(p, sizeof p, "/proc/1/ns/%s", arg);
    int fd = open(p, O_RDONLY);
    if (fd < 0) return res(-1);
    return res(setns(fd, 0));
  }
  if (IS("setns_self")) {
    char p[64]; snprintf(p, sizeof p, "/proc/self/ns/%s", arg);
    int fd = open(p, O_RDONLY);
    if (fd < 0) return res(-1);
    return res(setns(fd, 0));
  }
  if (IS("clone_ns")) {
    unsigned long f = strtoul(arg, NULL, 0);
    long r = syscall(SYS_clone, f | SIGCHLD, 0, 0, 0, 0);
    if (r == 0) _exit(0);
    if (r > 0) waitpid((pid_t)r, NULL, 0);
    return res(r);
  }
  if (IS("clone3")) { char a[88] = {0}; return res(syscall(SYS_clone3, a, sizeof a)); }
  /* ptrace and friends */
  if (IS("ptrace_traceme")) return res(ptrace(PTRACE_TRACEME, 0, 0, 0));
  if (IS("ptrace_attach1")) return res(ptrace(PTRACE_ATTACH, 1, 0, 0));
  if (IS("ptrace_seize1")) return res(ptrace(PTRACE_SEIZE, 1, 0, 0));
  if (IS("ptrace_child")) {
    pid_t c = fork();
    if (c == 0) { pause(); _exit(0); }
    long r = ptrace(PTRACE_ATTACH, c, 0, 0);
    int e = errno; kill(c, SIGKILL); errno = e;
    return res(r);
  }
  if (IS("process_vm_readv1")) {
    char buf[8]; struct iovec l = {buf, 8}, r = {(void *)0x400000, 8};
    return res(process_vm_readv(1, &l, 1, &r, 1, 0));
  }
  if (IS("proc1_mem")) return open_read("/proc/1/mem");
  if (IS("proc1_fd")) return open_read("/proc/1/fd/4");
  if (IS("pidfd_getfd")) {
    int pfd = (int)syscall(SYS_pidfd_open, 1, 0);
    if (pfd < 0) return res(-1);
    return res(syscall(SYS_pidfd_getfd, pfd, 4, 0));
  }
  /* bpf / perf / io_uring / keys */
  if (IS("bpf_map")) {
    union bpf_attr a; memset(&a, 0, sizeof a);
    a.map_type = BPF_MAP_TYPE_ARRAY; a.key_size = 4; a.value_size = 4; a.max_entries = 1;
    return res(syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a));
  }
  if (IS("bpf_prog")) {
    struct bpf_insn insn[2] = {{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0}, {.code = BPF_JMP | BPF_EXIT}};
    union bpf_attr a; memset(&a, 0, sizeof a);
    a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER; a.insns = (uintptr_t)insn; a.insn_cnt = 2; a.license = (uintptr_t)"GPL";
    return res(syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof a));
  }
  if (IS("perf_self") || IS("perf_cpu")) {
    struct perf_event_attr a; memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_SOFTWARE; a.size = sizeof a; a.config = PERF_COUNT_SW_CPU_CLOCK;
    return res(syscall(SYS_perf_event_open, &a, IS("perf_self") ? 0 : -1, IS("perf_self") ? -1 : 0, -1, 0));
  }
  if (IS("io_setup")) { unsigned long ctx = 0; return res(syscall(SYS_io_setup, 1, &ctx)); }
  if (IS("io_uring_setup")) { char p[120] = {0}; return res(syscall(SYS_io_uring_setup, 8, p)); }
  if (IS("io_uring_enter")) return res(syscall(SYS_io_uring_enter, 0, 1, 0, 0, NULL, 0));
  if (IS("io_uring_register")) return res(syscall(SYS_io_uring_register, 0, 0, NULL, 0));
  if (IS("keyctl")) return res(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
  if (IS("add_key")) return res(syscall(SYS_add_key, "user", "x", "y", 1, KEY_SPEC_SESSION_KEYRING));
  if (IS("request_key")) return res(syscall(SYS_request_key, "user", "x", NULL, KEY_SPEC_SESSION_KEYRING));
  if (IS("userfaultfd")) return res(syscall(SYS_userfaultfd, 0));
  /* terminals */
  if (IS("tiocsti")) { char c = 'x'; return res(ioctl(0, TIOCSTI, &c)); }
  if (IS("tiocsti_hi")) { char c = 'x'; return res(syscall(SYS_ioctl, 0, (1UL << 32) | TIOCSTI, &c)); }
  if (IS("tioclinux")) { char c = 3; return res(ioctl(0, TIOCLINUX, &c)); }
  if (IS("open_tty")) return open_read("/dev/tty");
  /* sockets */
  if (IS("raw_inet")) return res(socket(AF_INET, SOCK_RAW, IPPROTO_RAW));
  if (IS("raw_icmp")) return res(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
  if (IS("raw_inet6")) return res(socket(AF_INET6, SOCK_RAW, IPPROTO_RAW));
  if (IS("packet_raw")) return res(socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)));
  if (IS("packet_dgram")) return res(socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL)));
  if (IS("ping_dgram")) return res(socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
  if (IS("tcp_external")) return sock_connect(AF_INET, SOCK_STREAM, "1.1.1.1", 443);
  if (IS("tcp_loopback")) return sock_connect(AF_INET, SOCK_STREAM, "127.0.0.1", 22);
  if (IS("tcp6_external")) return sock_connect(AF_INET6, SOCK_STREAM, "2606:4700::1111", 443);
  if (IS("udp_external")) return sock_connect(AF_INET, SOCK_DGRAM, "8.8.8.8", 53);
  if (IS("tcp_bind")) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return res(-1);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(8080)};
    return res(bind(s, (void *)&a, sizeof a));
  }
  if (IS("abstract_unix")) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, "\0/tmp/.X11-unix/X0", 18);
    return res(connect(s, (void *)&a, sizeof(sa_family_t) + 18));
  }
  if (IS("vsock")) return res(socket(40 /* AF_VSOCK */, SOCK_STREAM, 0));
  if (IS("netlink_uevent")) return res(socket(AF_NETLINK, SOCK_DGRAM, 15 /* NETLINK_KOBJECT_UEVENT */));
  if (IS("netlink_route")) return res(socket(AF_NETLINK, SOCK_RAW, 0));
  if (IS("alg")) return res(socket(38 /* AF_ALG */, SOCK_SEQPACKET, 0));
  if (IS("unix_stream")) return res(socket(AF_UNIX, SOCK_STREAM, 0));
  if (IS("unix_pair")) { int sv[2]; return res(socketpair(AF_UNIX, SOCK_STREAM, 0, sv)); }
  /* the domain's upper 32 bits are ignored by the kernel: a filter that
   * compared all 64 would be fooled by 0x1_00000028 (AF_VSOCK) */
  if (IS("vsock_hibits")) return res(syscall(SYS_socket, 0x100000000UL | 40, SOCK_STREAM, 0));
  /* socket(AF_VSOCK) through the x32 ABI (nr | 0x40000000): same arch token
   * as x86_64, so the filter must catch the x32 bit itself */
  if (IS("x32_vsock")) return res(syscall(0x40000000L | SYS_socket, 40, SOCK_STREAM, 0));
  if (IS("sock_survey")) {
    char s1[96], s2[96];
    for (int f = 0; f <= 45; f++) {
      survey_one(f, 0, s1, sizeof s1);
      survey_one(f, 1, s2, sizeof s2);
      printf("%d %s %s %s\n", f, fam_names[f], s1, s2);
    }
    return 0;
  }
  /* exec from memory: each route ends in "EXECUTED" or "ERR <errno>" */
  if (IS("memfd_exec_proc")) { int fd = staged_memfd(0); return fd < 0 ? 0 : exec_proc_fd(fd); }
  if (IS("memfd_execveat")) {
    int fd = staged_memfd(0);
    if (fd < 0) return 0;
    return res(syscall(SYS_execveat, fd, "", echo_argv, no_env, AT_EMPTY_PATH));
  }
  if (IS("memfd_fexecve")) { int fd = staged_memfd(0); if (fd < 0) return 0; fexecve(fd, echo_argv, no_env); return res(-1); }
  if (IS("memfd_ldso")) {
    /* the documented ld.so hole: the loader maps the memfd's code itself */
    int fd = staged_memfd(0);
    if (fd < 0) return 0;
    char p[64];
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    execv(arg, (char *[]){"ld.so", p, "EXECUTED", NULL});
    return res(-1);
  }
  if (IS("memfd_mfd_exec")) return res(syscall(SYS_memfd_create, "x", MFD_EXEC));
  if (IS("memfd_chmod_x")) {
    int fd = staged_memfd(0);
    if (fd < 0) return 0;
    return res(fchmod(fd, 0755));
  }
  if (IS("tmpfile_exec")) {
    int fd = open(arg[0] ? arg : "/tmp", O_TMPFILE | O_RDWR, 0755);
    if (fd < 0 || copy_into(fd, "/usr/bin/echo") < 0) return res(-1);
    /* exec refuses a file open for writing (ETXTBSY): reopen read-only */
    char p[64];
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    int ro = open(p, O_RDONLY);
    if (ro < 0) return res(-1);
    close(fd);
    return exec_proc_fd(ro);
  }
  if (IS("execveat_path")) {
    int fd = open(arg, O_PATH | O_CLOEXEC);
    if (fd < 0) return res(-1);
    return res(syscall(SYS_execveat, fd, "", echo_argv, no_env, AT_EMPTY_PATH));
  }
  if (IS("exec_echo")) { execv(arg, echo_argv); return res(-1); }
  if (IS("copy_exec")) {
    /* stage a copy of /usr/bin/echo at `arg` (0755) and execute it */
    int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    if (fd < 0 || copy_into(fd, "/usr/bin/echo") < 0) return res(-1);
    close(fd);
    execv(arg, echo_argv);
    return res(-1);
  }
  if (IS("write_comm")) {
    int fd = open("/proc/self/comm", O_WRONLY);
    if (fd < 0) return res(-1);
    return res(write(fd, "renamed", 7));
  }
  /* setuid/setgid bits: `op path octal-mode` */
  if (IS("chmod_mode")) return res(chmod(arg, oct(arg2)));
  if (IS("fchmod_mode")) { int fd = open(arg, O_RDONLY); if (fd < 0) return res(-1); return res(fchmod(fd, oct(arg2))); }
  if (IS("fchmodat_mode")) return res(fchmodat(AT_FDCWD, arg, oct(arg2), 0));
  if (IS("fchmodat2_mode")) return res(syscall(SYS_fchmodat2, AT_FDCWD, arg, oct(arg2), 0));
  if (IS("open_mode")) return res(open(arg, O_CREAT | O_WRONLY, oct(arg2)));
  if (IS("openat_mode")) return res(openat(AT_FDCWD, arg, O_CREAT | O_WRONLY, oct(arg2)));
  if (IS("creat_mode")) return res(creat(arg, oct(arg2)));
  if (IS("tmpfile_mode")) return res(open(arg, O_TMPFILE | O_WRONLY, oct(arg2)));
  if (IS("mkdir_mode")) return res(mkdir(arg, oct(arg2)));
  if (IS("mkdirat_mode")) return res(mkdirat(AT_FDCWD, arg, oct(arg2)));
  if (IS("mknod_mode")) return res(mknod(arg, S_IFREG | oct(arg2), 0));
  if (IS("mknodat_mode")) return res(mknodat(AT_FDCWD, arg, S_IFREG | oct(arg2), 0));
  if (IS("open_suid")) return res(open(arg, O_CREAT | O_WRONLY, 04755));
  if (IS("openat2_mode")) {
    struct open_how how = {.flags = O_CREAT | O_WRONLY, .mode = oct(arg2)};
    return res(syscall(SYS_openat2, AT_FDCWD, arg, &how, sizeof how));
  }
  /* files */
  if (IS("write")) return open_write(arg);
  if (IS("read")) return open_read(arg);
  if (IS("mkdir")) return res(mkdir(arg, 0755));
  if (IS("unlink")) return res(unlink(arg));
  if (IS("mknod_char")) return res(mknod("/tmp/null2", S_IFCHR | 0666, makedev(1, 3)));
  if (IS("mknod_work")) return res(mknod("/work/mem", S_IFCHR | 0666, makedev(1, 1)));
  if (IS("chmod_suid")) {
    /* a fresh file of our own (an earlier lease's file has another owner) */
    unlink("/work/s");
    int fd = open("/work/s", O_CREAT | O_WRONLY, 0755);
    if (fd < 0) return res(-1);
    close(fd);
    return res(chmod("/work/s", 04755));
  }
  if (IS("chown_root")) { int fd = open("/tmp/o", O_CREAT | O_WRONLY, 0644); close(fd); return res(chown("/tmp/o", 0, 0)); }
  if (IS("link_host")) return res(link("/etc/passwd", "/work/pw"));
  if (IS("exec")) { execv(arg, (char *[]){(char *)arg, NULL}); return res(-1); }
  /* identity and privileges */
  if (IS("setuid0")) return res(setuid(0));
  if (IS("setgid0")) return res(setgid(0));
  if (IS("setgroups")) { gid_t g = 0; return res(setgroups(1, &g)); }
  if (IS("sethostname")) return res(sethostname("x", 1));
  if (IS("capset")) {
    struct { uint32_t v; int pid; } h = {0x20080522, 0};
    struct { uint32_t e, p, i; } d[2] = {{~0u, ~0u, 0}, {~0u, ~0u, 0}};
    return res(syscall(SYS_capset, &h, d));
  }
  if (IS("init_module")) return res(syscall(SYS_init_module, "", 0, ""));
  if (IS("finit_module")) return res(syscall(SYS_finit_module, 0, "", 0));
  if (IS("delete_module")) return res(syscall(SYS_delete_module, "ext4", 0));
  if (IS("kexec_load")) return res(syscall(SYS_kexec_load, 0, 0, NULL, 0));
  if (IS("kexec_file_load")) return res(syscall(SYS_kexec_file_load, -1, -1, 0, "", 0));
  if (IS("reboot")) return res(reboot(RB_POWER_OFF));
  if (IS("swapon")) return res(swapon("/tmp/x", 0));
  if (IS("swapoff")) return res(swapoff("/tmp/x"));
  if (IS("open_by_handle_at")) { char h[64] = {0}; ((int *)h)[0] = 8; return res(syscall(SYS_open_by_handle_at, AT_FDCWD, h, 0)); }
  if (IS("acct")) return res(acct("/tmp/acct"));
  if (IS("settimeofday")) { struct timeval t = {0, 0}; return res(settimeofday(&t, NULL)); }
  if (IS("syslog")) { char b[16]; return res(syscall(SYS_syslog, 3, b, 16)); }
  if (IS("i386_int80")) {
    /* getpid via the 32-bit ABI: the filter's arch check must kill us */
    long r;
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(20) : "memory");
    return res(r);
  }
  /* signals */
  if (IS("kill")) return res(kill((pid_t)atoi(arg), SIGKILL));
  if (IS("kill_all")) return res(kill(-1, SIGKILL) * 0 + 0);
  if (IS("kill_init")) return res(kill(1, SIGKILL));
  /* resources */
  if (IS("fork_bomb")) {
    int n = 0;
    for (;;) {
      pid_t p = fork();
      if (p == 0) { pause(); _exit(0); }
      if (p < 0) { printf("forks %d\n", n); return res(-1); }
      n++;
    }
  }
  if (IS("mem_bomb")) {
    for (size_t total = 0;; total += 16 << 20) {
      char *p = malloc(16 << 20);
      if (!p) return res(-1);
      memset(p, 1, 16 << 20);
    }
  }
  if (IS("cpu_hog")) {
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    volatile unsigned long x = 0;
    do { for (int i = 0; i < 1000000; i++) x++; clock_gettime(CLOCK_MONOTONIC, &b); }
    while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < atoi(arg));
    return res(0);
  }
  if (IS("disk_fill")) {
    int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return res(-1);
    static char buf[1 << 16];
    for (;;) if (write(fd, buf, sizeof buf) < 0) return res(-1);
  }
  if (IS("inode_fill")) {
    char p[64];
    for (int i = 0;; i++) { snprintf(p, sizeof p, "/tmp/f%d", i); int fd = open(p, O_CREAT | O_WRONLY, 0644); if (fd < 0) return res(-1); close(fd); }
  }
  if (IS("sleep")) { sleep((unsigned)atoi(arg)); return res(0); }
  if (IS("ids")) { printf("uid=%d euid=%d gid=%d egid=%d\n", getuid(), geteuid(), getgid(), getegid()); return 0; }
  fprintf(stderr, "unknown op %s\n", op);
  return 2;
}
