/* SPDX-License-Identifier: UNLICENSED */
/* The compiled policy as the helper receives it on fd 3 (see protocol.h). */
#ifndef LEASEHOLD_CONFIG_H
#define LEASEHOLD_CONFIG_H
#include "protocol.h"
#include <stdint.h>
#include <sys/types.h>

/* Where the workspace appears inside, whatever `cwd` is. */
#define LH_WORKSPACE "/work"

/* Where host paths appear inside, one directory per label. */
#define LH_HOST_DIR "/host"
#define LH_MAX_HOST_PATHS 32

struct lh_host_path {
  int rw;                     /* 1: writable, through an idmapped mount */
  int owner_of_path;          /* 1: the owner is the opened directory's own */
  uid_t owner_uid;            /* rw: what the lease uid is mapped to on disk */
  gid_t owner_gid;
  const char *label;          /* [a-z][a-z0-9_-]{0,31} */
  const char *path;           /* absolute host path */
  int fd;                     /* O_PATH, opened without following symlinks */
  int userns_fd;              /* rw: the idmapping's user namespace; -1 for ro */
};

struct sandbox_config {
  uid_t lease_uid;
  gid_t lease_gid;
  const char *workdir_host;   /* bound at LH_WORKSPACE */
  int workdir_ro;             /* 1: "observe" lease, the workspace is bound read-only */
  const char *cwd;            /* working directory inside, LH_WORKSPACE or below */
  const char *hostname;
  /* The lease always gets a network namespace of its own (helper.c). */
  int net_egress;             /* 1 = plus one veth pair to the host (net.c) */
  const char *net_guard;      /* who enforces the egress allow-list: "bpf", or the test seam's name */
  const char *hosts[LH_MAX_ITEMS]; int n_hosts; /* "<address> <name>" lines for /etc/hosts, validated */
  int sock_inet;              /* 1 = AF_INET/AF_INET6 sockets allowed (seccomp) */
  uint64_t tmp_bytes;
  uint64_t tmp_inodes;
  uint64_t nofile;            /* RLIMIT_NOFILE of the workload: its share of fs/file-max */
  int landlock_abi_min;       /* 0: no Landlock requested */
  int landlock_scope;         /* signal + abstract unix socket scoping */
  const char *cgroup_procs[8]; int n_cgroup_procs; /* v1 `tasks` files */
  const char *cgroup_v2;                            /* lease's v2 directory */
  int cgroup_v2_limits;                             /* 1: the v2 directory carries memory/pids/cpu */
  const char *ro_binds[LH_MAX_ITEMS]; int n_ro_binds;
  struct lh_host_path host_paths[LH_MAX_HOST_PATHS]; int n_host_paths;
  const char *ll_ro[LH_MAX_ITEMS]; int n_ll_ro;
  const char *ll_rw[LH_MAX_ITEMS]; int n_ll_rw;
  const char *ll_exec[LH_MAX_ITEMS]; int n_ll_exec;
  uint16_t tcp_connect[LH_MAX_ITEMS]; int n_tcp_connect;
  uint16_t tcp_bind[LH_MAX_ITEMS]; int n_tcp_bind;
  char *argv[LH_MAX_ITEMS + 1]; int argc;
  char *envp[LH_MAX_ITEMS + 1]; int envc;
  /* fds opened as root before the identity drop (see mount.c). */
  int workdir_fd;
  int ro_bind_fds[LH_MAX_ITEMS];
};

/* Returns 1 when `path` equals `dir` or lies beneath it. */
int path_within(const char *path, const char *dir);
/* True when the policy allows executing files under `dir` (inside path). */
int exec_allowed_under(const struct sandbox_config *cfg, const char *dir);
#endif
