/* SPDX-License-Identifier: UNLICENSED */
/* Host side of the lease programs (bpf/): loads the strongest tier this
 * kernel really enforces, proves it with a self-test, keeps the per-lease
 * map entries and cgroup attachments, and files the ring buffer's denials
 * per lease. See bpf_guard.h for the contract and bpf/README.md for the
 * holes. Every attachment is a bpf_link held by this process and nothing is
 * pinned: when the agent dies, the kernel detaches everything. */
#define _GNU_SOURCE
#include "bpf_guard.h"
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "lease_abi.h"
#include "lease_cgroup.skel.h"
#include "lease_lsm.skel.h"

_Static_assert(LH_EV_EXEC == LH_DENY_EXEC && LH_EV_CONNECT == LH_DENY_CONNECT && LH_EV_SENDMSG == LH_DENY_SENDMSG &&
                   LH_EV_SOCKET == LH_DENY_SOCKET && LH_EV_FILE == LH_DENY_FILE,
               "ring-buffer kinds and denial kinds are one numbering");

#define LH_MAX_EXEC_PER_LEASE 65536
#define LH_DENIALS_PER_LEASE 1024
#define CGROUP2_MAGIC 0x63677270

/* ---- SHA-256 (FIPS 180-4). A few dozen lines here instead of libcrypto:
 * the addon lives inside Node, which carries its own OpenSSL, and mixing a
 * second libcrypto's symbols into that process is asking for trouble; the
 * static loader the VM test boots needs no extra library either. ---- */
static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
    0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
    0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
    0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(uint32_t h[8], const uint8_t *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = k + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
    uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

static void sha256_hex(const void *data, size_t len, char out[65]) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const uint8_t *p = data;
  size_t full = len / 64;
  for (size_t i = 0; i < full; i++) sha256_block(h, p + 64 * i);
  uint8_t tail[128] = {0};
  size_t rest = len % 64;
  memcpy(tail, p + 64 * full, rest);
  tail[rest] = 0x80;
  size_t tlen = rest + 9 <= 64 ? 64 : 128;
  uint64_t bits = (uint64_t)len * 8;
  for (int i = 0; i < 8; i++) tail[tlen - 1 - i] = (uint8_t)(bits >> (8 * i));
  sha256_block(h, tail);
  if (tlen == 128) sha256_block(h, tail + 64);
  for (int i = 0; i < 8; i++) snprintf(out + 8 * i, 9, "%08x", h[i]);
}

/* ---- state ---- */
struct lh_bpf_lease {
  struct lh_bpf_lease *next;
  uint64_t cgid;
  int level;
  struct lh_file_key *exec_keys;
  size_t n_exec;
  struct lh_egress_key *eg_keys;
  uint8_t *eg_family;
  size_t n_eg;
  struct bpf_link *links[5];
  int n_links;
  struct lh_bpf_denial *denials; /* LH_DENIALS_PER_LEASE */
  size_t n_denials;
  uint64_t overflow;             /* events beyond the per-lease bound */
};

struct guard {
  char tier;                 /* 'A', 'B', 0 = none loaded */
  struct lease_lsm *lsm;
  struct lease_cgroup *cg;
  int fd_leases, fd_exec, fd_eg4, fd_eg6;
  volatile uint32_t *levels;
  struct ring_buffer *rb;
  unsigned level_refs[LH_MAX_LEVEL + 1];
  struct lh_bpf_lease *leases;
  uint64_t orphan_events;    /* events of no known lease (self-test leftovers) */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static struct guard g;
static struct lh_bpf_status g_status;
static char g_cg2_mount[PATH_MAX];

/* libbpf's own messages: kept (last lines) while detecting, for the detail;
 * never printed into the agent's stderr. */
static char g_libbpf_log[512];
static int libbpf_capture(enum libbpf_print_level level, const char *fmt, va_list ap) {
  if (level == LIBBPF_DEBUG) return 0;
  char line[256];
  vsnprintf(line, sizeof line, fmt, ap);
  line[strcspn(line, "\n")] = 0;
  if (!line[0] || strstr(line, "-- BEGIN") || strstr(line, "-- END")) return 0;
  size_t used = strlen(g_libbpf_log);
  if (used + 3 < sizeof g_libbpf_log)
    snprintf(g_libbpf_log + used, sizeof g_libbpf_log - used, "%s%s", used ? " | " : "", line);
  return 0;
}

static void detail_add(const char *fmt, ...) {
  size_t used = strlen(g_status.detail);
  if (used + 2 >= sizeof g_status.detail) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_status.detail + used, sizeof g_status.detail - used, fmt, ap);
  va_end(ap);
}

static uint32_t kernel_dev(uint64_t st_dev) {
  /* stat()'s dev_t (glibc's encoding) -> the kernel's s_dev (MAJOR<<20 | MINOR). */
  return (uint32_t)((major(st_dev) << 20) | (minor(st_dev) & 0xfffff));
}
static uint64_t stat_dev(uint32_t s_dev) { return makedev(s_dev >> 20, s_dev & 0xfffff); }

/* The cgroup2 mount point from /proc/self/mountinfo (first one). */
static int find_cgroup2(char *out, size_t cap) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f) return -errno;
  char line[4096];
  int rc = -ENOENT;
  while (fgets(line, sizeof line, f)) {
    char *sep = strstr(line, " - ");
    if (!sep || strncmp(sep + 3, "cgroup2 ", 8)) continue;
    char mnt[PATH_MAX];
    if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1) {
      snprintf(out, cap, "%s", mnt);
      rc = 0;
      break;
    }
  }
  fclose(f);
  return rc;
}

/* Level of a cgroup directory below the cgroup2 mount (the mount root is 0). */
static int cgroup_level(const char *path) {
  size_t m = strlen(g_cg2_mount);
  if (!m || strncmp(path, g_cg2_mount, m) || (path[m] && path[m] != '/')) return -EINVAL;
  int level = 0;
  for (const char *p = path + m; *p; p++)
    if (*p == '/' && p[1] && p[1] != '/') level++;
  return level;
}

/* ---- ring buffer ---- */
static int on_event(void *ctx, void *data, size_t len) {
  (void)ctx;
  if (len < sizeof(struct lh_event)) return 0;
  const struct lh_event *e = data;
  struct lh_bpf_lease *l = g.leases;
  while (l && l->cgid != e->cgid) l = l->next;
  if (!l) { g.orphan_events++; return 0; }
  if (l->n_denials >= LH_DENIALS_PER_LEASE) { l->overflow++; return 0; }
  struct lh_bpf_denial *d = &l->denials[l->n_denials++];
  memset(d, 0, sizeof *d);
  d->kind = e->kind;
  d->pid = e->pid;
  d->family = e->family;
  d->proto = e->proto;
  d->port = e->port;
  memcpy(d->addr, e->addr, sizeof d->addr);
  if (e->kind == LH_EV_EXEC || e->kind == LH_EV_FILE) {
    d->dev = stat_dev(e->dev);
    d->ino = e->ino;
  }
  memcpy(d->comm, e->comm, sizeof d->comm);
  d->comm[sizeof d->comm - 1] = 0;
  return 0;
}

/* Keeps the ring buffer from filling while leases run; withdrawal drains
 * the rest itself (under the same lock), so no event of a dead workload can
 * be missed by racing this thread. */
static void *consumer_main(void *arg) {
  (void)arg;
  int efd = ring_buffer__epoll_fd(g.rb);
  for (;;) {
    struct epoll_event ev;
    int n = epoll_wait(efd, &ev, 1, 200);
    if (n < 0 && errno != EINTR) { usleep(100000); continue; }
    pthread_mutex_lock(&g_mu);
    ring_buffer__consume(g.rb);
    pthread_mutex_unlock(&g_mu);
  }
  return NULL;
}

/* ---- loading ---- */
static void unload(void) {
  if (g.rb) ring_buffer__free(g.rb);
  if (g.lsm) lease_lsm__destroy(g.lsm);
  if (g.cg) lease_cgroup__destroy(g.cg);
  memset(&g, 0, sizeof g);
}

static int load_lsm(char *why, size_t len) {
  g_libbpf_log[0] = 0;
  g.lsm = lease_lsm__open_and_load();
  if (!g.lsm) {
    int e = errno;
    snprintf(why, len, "LSM programs did not load: %s%s%s", strerror(e), g_libbpf_log[0] ? "; " : "", g_libbpf_log);
    return -e;
  }
  if (lease_lsm__attach(g.lsm)) {
    int e = errno;
    snprintf(why, len, "LSM programs did not attach: %s", strerror(e));
    return -e;
  }
  g.fd_leases = bpf_map__fd(g.lsm->maps.leases);
  g.fd_exec = bpf_map__fd(g.lsm->maps.exec_allow);
  g.fd_eg4 = bpf_map__fd(g.lsm->maps.egress4);
  g.fd_eg6 = bpf_map__fd(g.lsm->maps.egress6);
  g.levels = &g.lsm->bss->lease_levels;
  g.tier = 'A';
  return 0;
}

static int load_cgroup(char *why, size_t len) {
  g_libbpf_log[0] = 0;
  g.cg = lease_cgroup__open_and_load();
  if (!g.cg) {
    int e = errno;
    snprintf(why, len, "cgroup/tp_btf programs did not load: %s%s%s", strerror(e), g_libbpf_log[0] ? "; " : "",
             g_libbpf_log);
    return -e;
  }
  /* Only the exec tracepoint is global; the socket programs are attached
   * per lease, to the lease's own directory (lh_bpf_lease_add). */
  g.cg->links.lh_exec = bpf_program__attach(g.cg->progs.lh_exec);
  if (!g.cg->links.lh_exec) {
    int e = errno;
    snprintf(why, len, "tp_btf/sched_process_exec did not attach: %s", strerror(e));
    return -e;
  }
  g.fd_leases = bpf_map__fd(g.cg->maps.leases);
  g.fd_exec = bpf_map__fd(g.cg->maps.exec_allow);
  g.fd_eg4 = bpf_map__fd(g.cg->maps.egress4);
  g.fd_eg6 = bpf_map__fd(g.cg->maps.egress6);
  g.levels = &g.cg->bss->lease_levels;
  g.tier = 'B';
  return 0;
}

static int open_ringbuf(char *why, size_t len) {
  struct bpf_map *m = g.tier == 'A' ? g.lsm->maps.events : g.cg->maps.events;
  g.rb = ring_buffer__new(bpf_map__fd(m), on_event, NULL, NULL);
  if (!g.rb) {
    int e = errno;
    snprintf(why, len, "ring buffer: %s", strerror(e));
    return -e;
  }
  return 0;
}

static void object_digest(char out[65]) {
  size_t sz = 0;
  const void *bytes = g.tier == 'A' ? lease_lsm__elf_bytes(&sz) : lease_cgroup__elf_bytes(&sz);
  sha256_hex(bytes, sz, out);
}

/* ---- per-lease add / withdraw (callers hold g_mu) ---- */
static void delete_entries(struct lh_bpf_lease *l) {
  for (int i = 0; i < l->n_links; i++) bpf_link__destroy(l->links[i]);
  l->n_links = 0;
  bpf_map_delete_elem(g.fd_leases, &l->cgid);
  __u32 count = (__u32)l->n_exec;
  size_t done = 0;
  if (count && bpf_map_delete_batch(g.fd_exec, l->exec_keys, &count, NULL) == 0) done = l->n_exec;
  else if (count <= l->n_exec) done = count;
  for (size_t i = done; i < l->n_exec; i++) bpf_map_delete_elem(g.fd_exec, &l->exec_keys[i]);
  for (size_t i = 0; i < l->n_eg; i++) bpf_map_delete_elem(l->eg_family[i] == 4 ? g.fd_eg4 : g.fd_eg6, &l->eg_keys[i]);
}

static void free_lease(struct lh_bpf_lease *l) {
  free(l->exec_keys);
  free(l->eg_keys);
  free(l->eg_family);
  free(l->denials);
  free(l);
}

/* The lease's cgroup2 directory, checked (a tier to load into, bounded
 * lists, 1..LH_MAX_LEVEL levels deep, really the cgroup with that id, not a
 * lease yet) and opened; its descriptor, or -errno with `err` filled. */
static int open_lease_cgroup(const struct lh_bpf_lease_spec *spec, int *level_out, char *err, size_t errlen) {
  if (g.tier != 'A' && g.tier != 'B') {
    snprintf(err, errlen, "no BPF tier on this host (tier C): %s", g_status.detail);
    return -EOPNOTSUPP;
  }
  if (spec->n_exec > LH_MAX_EXEC_PER_LEASE) {
    snprintf(err, errlen, "exec allow-list has %zu files; at most %d per lease", spec->n_exec, LH_MAX_EXEC_PER_LEASE);
    return -E2BIG;
  }
  if (!spec->exec_enforced && !spec->net_enforced) {
    snprintf(err, errlen, "lease asks for neither exec nor network enforcement");
    return -EINVAL;
  }
  int level = spec->cgroup_path ? cgroup_level(spec->cgroup_path) : -EINVAL;
  if (level < 1 || level > LH_MAX_LEVEL) {
    snprintf(err, errlen, "cgroup %s is not 1..%d levels below the cgroup2 mount %s", spec->cgroup_path ? spec->cgroup_path : "(null)",
             LH_MAX_LEVEL, g_cg2_mount);
    return -ERANGE;
  }
  int dfd = open(spec->cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    int e = errno;
    snprintf(err, errlen, "open %s: %s", spec->cgroup_path, strerror(e));
    return -e;
  }
  struct stat st;
  struct statfs sf;
  if (fstat(dfd, &st) < 0 || fstatfs(dfd, &sf) < 0 || sf.f_type != CGROUP2_MAGIC || (uint64_t)st.st_ino != spec->cgroup_id) {
    close(dfd);
    snprintf(err, errlen, "%s is not the cgroup2 directory with id %llu", spec->cgroup_path, (unsigned long long)spec->cgroup_id);
    return -EINVAL;
  }
  for (struct lh_bpf_lease *o = g.leases; o; o = o->next)
    if (o->cgid == spec->cgroup_id) {
      close(dfd);
      snprintf(err, errlen, "cgroup %llu is already a lease", (unsigned long long)spec->cgroup_id);
      return -EEXIST;
    }
  *level_out = level;
  return dfd;
}

/* The exec allow-list entries; each one added is counted in l->n_exec so
 * delete_entries removes exactly those. 0, or -errno with `err` filled. */
static int add_exec_entries(struct lh_bpf_lease *l, const struct lh_bpf_lease_spec *spec, size_t n_ex, char *err,
                            size_t errlen) {
  uint8_t one = 1;
  int rc;
  for (size_t i = 0; i < n_ex; i++) {
    struct lh_file_key *k = &l->exec_keys[i];
    k->cgid = l->cgid;
    k->dev = kernel_dev(spec->exec[i].dev);
    k->ino = spec->exec[i].ino;
  }
  /* One syscall for the whole list (a default /usr/bin list is ~700 files);
   * what the batch did not take goes one by one, for the precise error. */
  if (n_ex) {
    uint8_t *ones = malloc(n_ex);
    __u32 count = (__u32)n_ex;
    if (ones) {
      memset(ones, 1, n_ex);
      if (bpf_map_update_batch(g.fd_exec, l->exec_keys, ones, &count, NULL) == 0 || count <= n_ex) l->n_exec = count;
      free(ones);
    }
  }
  for (size_t i = l->n_exec; i < n_ex; i++) {
    struct lh_file_key *k = &l->exec_keys[i];
    if (bpf_map_update_elem(g.fd_exec, k, &one, BPF_ANY)) {
      rc = -errno;
      snprintf(err, errlen, "exec allow-list entry %zu: %s (map holds at most %d for all leases)", i, strerror(-rc),
               LH_MAX_EXEC_ENTRIES);
      return rc;
    }
    l->n_exec++;
  }
  return 0;
}

/* The egress rules, host bits cleared; each one added is counted in
 * l->n_eg. 0, or -errno with `err` filled. */
static int add_egress_entries(struct lh_bpf_lease *l, const struct lh_bpf_lease_spec *spec, size_t n_eg, char *err,
                              size_t errlen) {
  uint8_t one = 1;
  int rc;
  for (size_t i = 0; i < n_eg; i++) {
    const struct lh_bpf_rule *r = &spec->egress[i];
    int bits = r->family == 4 ? 32 : r->family == 6 ? 128 : -1;
    if (bits < 0 || r->prefix > bits || r->port == 0) {
      rc = -EINVAL;
      snprintf(err, errlen, "egress rule %zu: family %u prefix %u port %u", i, r->family, r->prefix, r->port);
      return rc;
    }
    struct lh_egress_key *k = &l->eg_keys[l->n_eg];
    memset(k, 0, sizeof *k);
    k->prefixlen = LH_EGRESS_FIXED_BITS + r->prefix;
    k->port_be = htons(r->port);
    k->cgid = l->cgid;
    /* Host bits cleared here too: the trie ignores them, but the entry we
     * delete at withdrawal must be byte-identical to the one we added. */
    for (int b = 0; b < bits / 8; b++) {
      int keep = r->prefix - 8 * b;
      uint8_t mask = keep >= 8 ? 0xff : keep <= 0 ? 0 : (uint8_t)(0xff << (8 - keep));
      k->addr[b] = r->addr[b] & mask;
    }
    if (bpf_map_update_elem(r->family == 4 ? g.fd_eg4 : g.fd_eg6, k, &one, BPF_ANY)) {
      rc = -errno;
      snprintf(err, errlen, "egress rule %zu: %s", i, strerror(-rc));
      return rc;
    }
    l->eg_family[l->n_eg++] = r->family;
  }
  return 0;
}

/* Tier B: the socket programs attached to the lease's directory as links
 * (counted in l->n_links). 0, or -errno with `err` filled. */
static int attach_socket_programs(struct lh_bpf_lease *l, const struct lh_bpf_lease_spec *spec, int dfd, char *err,
                                  size_t errlen) {
  int rc;
  struct bpf_program *progs[5] = {g.cg->progs.lh_connect4, g.cg->progs.lh_connect6, g.cg->progs.lh_sendmsg4,
                                  g.cg->progs.lh_sendmsg6, g.cg->progs.lh_sock_create};
  for (int i = 0; i < 5; i++) {
    struct bpf_link *lk = bpf_program__attach_cgroup(progs[i], dfd);
    if (!lk) {
      rc = -errno;
      snprintf(err, errlen, "attaching %s to %s: %s", bpf_program__name(progs[i]), spec->cgroup_path, strerror(-rc));
      return rc;
    }
    l->links[l->n_links++] = lk;
  }
  return 0;
}

static int add_locked(const struct lh_bpf_lease_spec *spec, struct lh_bpf_lease **out, char *err, size_t errlen) {
  int level = 0;
  int dfd = open_lease_cgroup(spec, &level, err, errlen);
  if (dfd < 0) return dfd;
  struct lh_bpf_lease *l = calloc(1, sizeof *l);
  int rc = 0;
  if (!l) { close(dfd); snprintf(err, errlen, "out of memory"); return -ENOMEM; }
  l->cgid = spec->cgroup_id;
  l->level = level;
  l->denials = calloc(LH_DENIALS_PER_LEASE, sizeof *l->denials);
  size_t n_eg = spec->net_enforced ? spec->n_egress : 0, n_ex = spec->exec_enforced ? spec->n_exec : 0;
  l->exec_keys = calloc(n_ex ? n_ex : 1, sizeof *l->exec_keys);
  l->eg_keys = calloc(n_eg ? n_eg : 1, sizeof *l->eg_keys);
  l->eg_family = calloc(n_eg ? n_eg : 1, 1);
  if (!l->denials || !l->exec_keys || !l->eg_keys || !l->eg_family) {
    rc = -ENOMEM;
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  if ((rc = add_exec_entries(l, spec, n_ex, err, errlen)) < 0) goto fail;
  if ((rc = add_egress_entries(l, spec, n_eg, err, errlen)) < 0) goto fail;
  if (g.tier == 'B' && spec->net_enforced && (rc = attach_socket_programs(l, spec, dfd, err, errlen)) < 0) goto fail;
  /* The lease entry last: the lists are complete before anything is judged by them. */
  struct lh_lease_value v = {0};
  v.flags = (spec->exec_enforced ? LH_LEASE_EXEC : 0) | (spec->net_enforced ? LH_LEASE_NET : 0);
  if (bpf_map_update_elem(g.fd_leases, &l->cgid, &v, BPF_NOEXIST)) {
    rc = -errno;
    snprintf(err, errlen, "lease map: %s (at most %d leases)", strerror(-rc), LH_MAX_LEASES);
    goto fail;
  }
  if (g.level_refs[level]++ == 0) __atomic_or_fetch(g.levels, 1u << level, __ATOMIC_SEQ_CST);
  close(dfd);
  l->next = g.leases;
  g.leases = l;
  *out = l;
  return 0;
fail:
  delete_entries(l);
  close(dfd);
  free_lease(l);
  return rc;
}

static void withdraw_locked(struct lh_bpf_lease *l, struct lh_bpf_denial *denials, size_t max, size_t *n,
                            uint64_t *dropped) {
  /* Everything the (dead) workload caused is in the buffer by now. */
  if (g.rb) ring_buffer__consume(g.rb);
  struct lh_lease_value v = {0};
  uint64_t lost = bpf_map_lookup_elem(g.fd_leases, &l->cgid, &v) == 0 ? v.drops : 0;
  delete_entries(l);
  if (--g.level_refs[l->level] == 0) __atomic_and_fetch(g.levels, ~(1u << l->level), __ATOMIC_SEQ_CST);
  for (struct lh_bpf_lease **pp = &g.leases; *pp; pp = &(*pp)->next)
    if (*pp == l) { *pp = l->next; break; }
  size_t take = l->n_denials < max ? l->n_denials : max;
  if (denials && take) memcpy(denials, l->denials, take * sizeof *denials);
  if (n) *n = denials ? take : 0;
  if (dropped) *dropped = lost + l->overflow + (l->n_denials - (denials ? take : 0));
  free_lease(l);
}

int lh_bpf_lease_add(const struct lh_bpf_lease_spec *spec, struct lh_bpf_lease **out, char *err, size_t errlen) {
  *out = NULL;
  pthread_mutex_lock(&g_mu);
  int rc = add_locked(spec, out, err, errlen);
  pthread_mutex_unlock(&g_mu);
  return rc;
}

void lh_bpf_lease_withdraw(struct lh_bpf_lease *lease, struct lh_bpf_denial *denials, size_t max, size_t *n,
                           uint64_t *dropped) {
  if (n) *n = 0;
  if (dropped) *dropped = 0;
  if (!lease) return;
  pthread_mutex_lock(&g_mu);
  withdraw_locked(lease, denials, max, n, dropped);
  pthread_mutex_unlock(&g_mu);
}

/* ---- self-test ---- */
struct selftest_child {
  char procs[PATH_MAX + 32];
  struct sockaddr_in allowed, denied;
  int join_err, net_err, allowed_err, denied_err, udp_err, exec_err;
};

static int errno_of(long r) { return r < 0 ? errno : 0; }

/* A vfork-style child (shares our memory while we wait): joins the test
 * cgroup, tries what the lease forbids and records what the kernel said. */
static int selftest_child_main(void *arg) {
  struct selftest_child *c = arg;
  int fd = open(c->procs, O_WRONLY | O_CLOEXEC);
  c->join_err = fd < 0 ? errno : errno_of(write(fd, "0", 1));
  if (fd >= 0) close(fd);
  if (c->join_err) _exit(90);
  /* A network namespace of its own with loopback up: the test does not
   * depend on (or open a port in) the caller's network, where lo may be down. */
  c->net_err = unshare(CLONE_NEWNET) < 0 ? errno : 0;
  if (!c->net_err) {
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    int ctl = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (ctl < 0 || ioctl(ctl, SIOCGIFFLAGS, &ifr) < 0) c->net_err = errno;
    else {
      ifr.ifr_flags |= IFF_UP;
      if (ioctl(ctl, SIOCSIFFLAGS, &ifr) < 0) c->net_err = errno;
    }
    if (ctl >= 0) close(ctl);
  }
  int lfd = c->net_err ? -1 : socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!c->net_err && (lfd < 0 || bind(lfd, (struct sockaddr *)&c->allowed, sizeof c->allowed) < 0 || listen(lfd, 4) < 0))
    c->net_err = errno;
  if (c->net_err) _exit(91);
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  c->allowed_err = s < 0 ? errno : errno_of(connect(s, (struct sockaddr *)&c->allowed, sizeof c->allowed));
  if (s >= 0) close(s);
  s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  c->denied_err = s < 0 ? errno : errno_of(connect(s, (struct sockaddr *)&c->denied, sizeof c->denied));
  if (s >= 0) close(s);
  s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  c->udp_err = s < 0 ? errno : errno_of(sendto(s, "x", 1, 0, (struct sockaddr *)&c->denied, sizeof c->denied));
  if (s >= 0) close(s);
  /* Nothing is on this lease's exec list: any image must be refused. */
  char *argv[] = {(char *)"true", NULL}, *envp[] = {NULL};
  execve("/bin/true", argv, envp);
  c->exec_err = errno;
  _exit(0);
}

/* Proves the loaded tier enforces: a throwaway cgroup v2 lease with nothing
 * on its exec list and one egress rule, a child inside it. 0 = enforced. */
static int self_test(char *why, size_t len) {
  char dir[PATH_MAX];
  static unsigned seq;
  snprintf(dir, sizeof dir, "%s/leasehold-bpf-selftest.%d.%u", g_cg2_mount, getpid(), seq++);
  if (mkdir(dir, 0700) < 0) {
    snprintf(why, len, "self-test cgroup %s: %s", dir, strerror(errno));
    return -1;
  }
  struct stat st;
  stat(dir, &st);
  int ok = -1;
  /* The child listens on this in its own network namespace, so any port is free. */
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  struct lh_bpf_rule rule = {.family = 4, .prefix = 32, .port = ntohs(a.sin_port)};
  memcpy(rule.addr, &a.sin_addr, 4);
  struct lh_bpf_lease_spec spec = {.cgroup_id = (uint64_t)st.st_ino, .cgroup_path = dir, .exec_enforced = 1,
                                   .net_enforced = 1, .egress = &rule, .n_egress = 1};
  struct lh_bpf_lease *lease = NULL;
  char err[256];
  int rc = add_locked(&spec, &lease, err, sizeof err);
  if (rc < 0) {
    snprintf(why, len, "self-test lease: %s", err);
    rmdir(dir);
    return -1;
  }
  struct selftest_child *c = calloc(1, sizeof *c);
  size_t stack_sz = 256 * 1024;
  char *stack = malloc(stack_sz);
  pid_t pid = -1;
  int status = 0;
  if (c && stack) {
    snprintf(c->procs, sizeof c->procs, "%s/cgroup.procs", dir);
    c->allowed = a;
    c->denied = a;
    c->denied.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1); /* 127.0.0.2, same port: refused by address */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid = clone(selftest_child_main, stack + stack_sz, CLONE_VM | CLONE_VFORK | SIGCHLD, c);
    int ce = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) snprintf(why, len, "self-test clone: %s", strerror(ce));
    else while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR) {}
  } else {
    snprintf(why, len, "self-test: out of memory");
  }
  struct lh_bpf_denial den[8];
  size_t nd = 0;
  uint64_t dropped = 0;
  withdraw_locked(lease, den, 8, &nd, &dropped);
  int saw_exec = 0, saw_connect = 0, saw_send = 0;
  for (size_t i = 0; i < nd; i++) {
    saw_exec |= den[i].kind == LH_DENY_EXEC;
    saw_connect |= den[i].kind == LH_DENY_CONNECT && den[i].port == rule.port;
    saw_send |= den[i].kind == LH_DENY_SENDMSG;
  }
  if (pid > 0) {
    int exec_denied = g.tier == 'A' ? c->exec_err == EPERM && WIFEXITED(status)
                                    : WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    if (c->join_err) snprintf(why, len, "self-test: joining %s: %s", c->procs, strerror(c->join_err));
    else if (c->net_err) snprintf(why, len, "self-test: a private network namespace with loopback up: %s", strerror(c->net_err));
    else if (c->allowed_err) snprintf(why, len, "self-test: allowed connect to 127.0.0.1:%u failed: %s", rule.port, strerror(c->allowed_err));
    else if (c->denied_err != EPERM) snprintf(why, len, "self-test: connect to 127.0.0.2:%u was not refused (%s)", rule.port, c->denied_err ? strerror(c->denied_err) : "it succeeded");
    else if (c->udp_err != EPERM) snprintf(why, len, "self-test: UDP sendto 127.0.0.2:%u was not refused (%s)", rule.port, c->udp_err ? strerror(c->udp_err) : "it succeeded");
    else if (!exec_denied)
      snprintf(why, len, "self-test: exec of a file not on the list was not %s (exec errno %d, wait status 0x%x)",
               g.tier == 'A' ? "refused with EPERM" : "killed with SIGKILL", c->exec_err, status);
    else if (!saw_exec || !saw_connect || !saw_send)
      snprintf(why, len, "self-test: denied but not recorded (events: exec %d connect %d sendmsg %d, %llu dropped)", saw_exec,
               saw_connect, saw_send, (unsigned long long)dropped);
    else ok = 0;
  }
  free(c);
  free(stack);
  /* The child has been reaped; the cgroup empties as soon as the kernel notices. */
  for (int i = 0; i < 100 && rmdir(dir) < 0 && errno == EBUSY; i++) usleep(2000);
  return ok;
}

/* ---- detection ---- */
static char g_max_tier;

static int lsm_listed(char *why, size_t len) {
  char buf[512] = "";
  int fd = open("/sys/kernel/security/lsm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, len, "/sys/kernel/security/lsm unreadable (%s; securityfs not mounted?), so bpf is not known to be an active LSM",
             strerror(errno));
    return 0;
  }
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  buf[n > 0 ? n : 0] = 0;
  buf[strcspn(buf, "\n")] = 0;
  char list[512];
  memcpy(list, buf, sizeof list); /* strtok cuts buf; the message shows the whole list */
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
    if (!strcmp(t, "bpf")) return 1;
  snprintf(why, len, "bpf is not in the active LSM list (%s)", list);
  return 0;
}

static void detect(void) {
  memset(&g_status, 0, sizeof g_status);
  g_status.tier = 'C';
  libbpf_set_print(libbpf_capture);
  int rc = find_cgroup2(g_cg2_mount, sizeof g_cg2_mount);
  if (rc < 0) {
    detail_add("no cgroup2 mount in /proc/self/mountinfo (%s): leases have no cgroup id to key on", strerror(-rc));
    return;
  }
  char why[600];
  int tier_a = 0, tier_b = 0;
  if (g_max_tier == 0 || g_max_tier == 'A') {
    int listed = lsm_listed(why, sizeof why);
    if (!listed) detail_add("tier A refused: %s", why);
    rc = load_lsm(why, sizeof why);
    if (rc < 0) {
      if (listed) detail_add("tier A refused: %s", why);
      else detail_add("; and %s", why);
    } else if (!listed) {
      detail_add(" (the LSM programs loaded, but without bpf in the LSM list they would enforce nothing)");
    } else if (open_ringbuf(why, sizeof why) < 0 || self_test(why, sizeof why) < 0) {
      detail_add("tier A refused: the LSM programs loaded and attached but %s", why);
    } else {
      tier_a = 1;
    }
    if (!tier_a) unload();
  } else {
    detail_add("tier A not tried (max tier %c)", g_max_tier);
  }
  if (!tier_a && (g_max_tier == 0 || g_max_tier == 'A' || g_max_tier == 'B')) {
    rc = load_cgroup(why, sizeof why);
    if (rc < 0) detail_add("; tier B refused: %s", why);
    else if (open_ringbuf(why, sizeof why) < 0 || self_test(why, sizeof why) < 0)
      detail_add("; tier B refused: programs loaded but %s", why);
    else tier_b = 1;
    if (!tier_b) unload();
  } else if (!tier_a) {
    detail_add("; tier B not tried (max tier C)");
  }
  if (tier_a || tier_b) {
    g_status.tier = g.tier;
    object_digest(g_status.object_sha256);
    detail_add("%stier %c: %s loaded, self-test denied exec, connect and sendmsg in a throwaway cgroup", g_status.detail[0] ? "; " : "",
               g.tier, g.tier == 'A' ? "BPF-LSM hooks" : "cgroup socket hooks + exec kill");
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    /* The consumer must not take signals meant for Node's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (pthread_create(&th, &at, consumer_main, NULL) != 0) detail_add(" (no consumer thread: events drained at withdrawal only)");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
  } else {
    detail_add("; tier C: Landlock + seccomp + an empty network namespace, egress allow-lists refused");
  }
}

static void detect_once(void) {
  pthread_mutex_lock(&g_mu);
  detect();
  pthread_mutex_unlock(&g_mu);
}

void lh_bpf_init(char max_tier, struct lh_bpf_status *st) {
  /* Only the first caller's max_tier counts: the programs are loaded once. */
  static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&first);
  if (!g_max_tier && max_tier) g_max_tier = max_tier == 'A' || max_tier == 'B' || max_tier == 'C' ? max_tier : 0;
  pthread_mutex_unlock(&first);
  pthread_once(&g_once, detect_once);
  if (st) *st = g_status;
}

int lh_bpf_prog_stats(struct lh_bpf_prog_stat *out, int max) {
  int n = 0;
  pthread_mutex_lock(&g_mu);
  struct bpf_object *obj = g.tier == 'A' ? g.lsm->obj : g.tier == 'B' ? g.cg->obj : NULL;
  struct bpf_program *p;
  if (obj) {
    bpf_object__for_each_program(p, obj) {
      if (n >= max) break;
      struct bpf_prog_info info;
      __u32 len = sizeof info;
      memset(&info, 0, sizeof info);
      if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len)) continue;
      snprintf(out[n].name, sizeof out[n].name, "%s", bpf_program__name(p));
      out[n].run_cnt = info.run_cnt;
      out[n].run_time_ns = info.run_time_ns;
      n++;
    }
  }
  pthread_mutex_unlock(&g_mu);
  return n;
}
