/* Host-wide kernel quota survey: `quota <resource> [hold]` takes as much of
 * one kernel resource as it can (each loop bounded, so a kernel without a
 * limit does not run away), prints one line
 *   <resource> took=<units> stop=<OK|errno name>
 * and, with `hold`, keeps everything it took until /work/release (a FIFO the
 * test makes) is opened for writing and closed, so the host can measure
 * while the resource is held. `stop=OK` means the bound was reached without
 * an error. On the host, `quota <resource>-one` makes one allocation of the
 * same resource and prints "OK" or "ERR <errno name>". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/bpf.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <mqueue.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *err(int e) { return e ? strerrorname_np(e) : "OK"; }

/* Loops `try` up to `bound` times; returns the count of successes and the
 * first error (0 when the bound was reached). */
#define TAKE(bound, expr)                   \
  do {                                      \
    for (; took < (bound); took++)          \
      if ((expr) < 0) { stop = errno; break; } \
  } while (0)

static long one_aio(unsigned n) { aio_context_t c = 0; return syscall(SYS_io_setup, n, &c); }
static long one_uring(void) { char p[120] = {0}; return syscall(SYS_io_uring_setup, 8, p); }
static long one_key(long i) {
  char d[32];
  snprintf(d, sizeof d, "lh-quota-%ld", i);
  return syscall(SYS_add_key, "user", d, "x", 1, KEY_SPEC_PROCESS_KEYRING);
}
static long one_mq(long i) {
  char n[32];
  struct mq_attr a = {.mq_maxmsg = 1, .mq_msgsize = 16};
  snprintf(n, sizeof n, "/lh-quota-%d-%ld", getpid(), i);
  return mq_open(n, O_CREAT | O_EXCL | O_RDWR, 0600, &a);
}
static long one_lock(int fd, long i) {
  /* Byte ranges two apart never merge: one lock record each. */
  struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 2 * i, .l_len = 1};
  return fcntl(fd, F_SETLK, &l);
}
static long one_perf(void) {
  struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE, .size = sizeof a, .config = PERF_COUNT_SW_CPU_CLOCK};
  return syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}
static long one_bpf(void) {
  union bpf_attr a = {.map_type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 4, .max_entries = 1};
  return syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
}
static long one_pipe(int set_size) {
  int p[2];
  if (pipe(p) < 0) return -1;
  /* 1 MiB = 256 pages of the user's pipe-user-pages share per pipe. */
  return set_size ? fcntl(p[0], F_SETPIPE_SZ, 1 << 20) : 0;
}

static void hold(void) {
  int fd = open("/work/release", O_RDONLY);
  char b[8];
  if (fd >= 0) while (read(fd, b, sizeof b) > 0) {}
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const char *r = argv[1];
  setvbuf(stdout, NULL, _IONBF, 0);
  long took = 0;
  int stop = 0;
#define IS(x) (!strcmp(r, x))
#define ONE(expr) do { long rc_ = (expr); printf(rc_ < 0 ? "ERR %s\n" : "OK\n", err(errno)); return 0; } while (0)
  /* Host side: one allocation each. */
  if (IS("aio-one")) ONE(one_aio(1));
  if (IS("inotify-one")) ONE(inotify_init1(0));
  if (IS("mqueue-one")) {
    long fd = one_mq(0);
    char n[32];
    snprintf(n, sizeof n, "/lh-quota-%d-0", getpid());
    if (fd >= 0) mq_unlink(n);
    ONE(fd);
  }
  if (IS("pipe-one")) ONE(one_pipe(1));
  if (IS("lock-one")) { int fd = open("/tmp", O_TMPFILE | O_RDWR, 0600); ONE(fd < 0 ? fd : one_lock(fd, 0)); }
  if (IS("files-one")) ONE(open("/dev/null", O_RDONLY));

  /* Lease side: take as much as possible. */
  if (IS("aio")) TAKE(64, one_aio(4096)); /* 64 × (4096 doubled) ≥ 65536: the default aio-max-nr */
  else if (IS("io_uring")) TAKE(64, one_uring());
  else if (IS("inotify")) TAKE(4096, inotify_init1(0));
  else if (IS("inotify-watches")) {
    /* One instance, a watch per distinct inode: files made in /tmp. */
    int in = inotify_init1(0);
    if (in < 0) stop = errno;
    else {
      char p[64];
      for (; took < 20000; took++) {
        snprintf(p, sizeof p, "/tmp/w%ld", took);
        int f = open(p, O_CREAT | O_WRONLY, 0600);
        if (f < 0) { stop = errno; break; }
        close(f);
        if (inotify_add_watch(in, p, IN_MODIFY) < 0) { stop = errno; break; }
      }
    }
  } else if (IS("keys")) TAKE(1000, one_key(took));
  else if (IS("mqueue")) TAKE(1024, one_mq(took));
  else if (IS("sysv")) {
    /* 64 of each kind: enough to see where they are counted. */
    long shm = 0, sem = 0, msg = 0;
    for (; shm < 64 && shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600) >= 0; shm++) {}
    if (shm < 64) stop = errno;
    for (; sem < 64 && semget(IPC_PRIVATE, 1, IPC_CREAT | 0600) >= 0; sem++) {}
    if (sem < 64 && !stop) stop = errno;
    for (; msg < 64 && msgget(IPC_PRIVATE, IPC_CREAT | 0600) >= 0; msg++) {}
    if (msg < 64 && !stop) stop = errno;
    took = shm + sem + msg;
  } else if (IS("pipes")) TAKE(256, one_pipe(1)); /* 256 × 256 pages > pipe-user-pages-soft (16384) */
  else if (IS("userns")) TAKE(1, unshare(CLONE_NEWUSER));
  else if (IS("locks")) {
    int fd = open("/tmp", O_TMPFILE | O_RDWR, 0600);
    if (fd < 0) stop = errno;
    else TAKE(1000, one_lock(fd, took));
  } else if (IS("fanotify")) TAKE(1, fanotify_init(FAN_CLASS_NOTIF, O_RDONLY));
  else if (IS("perf")) TAKE(1, one_perf());
  else if (IS("bpf")) TAKE(1, one_bpf());
  else if (IS("userfaultfd")) TAKE(1, syscall(SYS_userfaultfd, 0));
  else if (IS("files")) {
    TAKE(1 << 20, open("/dev/null", O_RDONLY));
    /* The table is full: free one slot for the release FIFO, or hold() could not open it. */
    if (took > 0) close(3);
  }
  else return 2;
  printf("%s took=%ld stop=%s\n", r, took, err(stop));
  if (argc > 2 && !strcmp(argv[2], "hold")) hold();
  return 0;
}
