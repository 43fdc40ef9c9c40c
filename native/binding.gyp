{
  "targets": [
    {
      "target_name": "leasehold_native",
      "sources": ["src/addon.cc", "src/launch.c", "src/cgroup.c", "src/cgroup_v1.c", "src/cgroup_v2.c", "src/cgroup_sweep.c", "src/bpf_guard.c"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "../bpf", "../bpf/build"],
      "libraries": ["-lbpf", "-lelf", "-lz"],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED", "NAPI_CPP_EXCEPTIONS"],
      "cflags": ["-Wall", "-Wextra", "-O2", "-fstack-protector-strong", "-D_FORTIFY_SOURCE=2", "-Wno-format-truncation"],
      "cflags_c": ["-std=gnu11"],
      "cflags_cc": ["-std=c++17", "-fexceptions"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"]
    },
    {
      "target_name": "leasehold-sandbox",
      "type": "executable",
      "sources": [
        "src/helper.c", "src/util.c", "src/user.c", "src/mount.c", "src/net.c", "src/netlink.c",
        "src/caps.c", "src/landlock.c", "src/seccomp.c", "src/init.c", "src/hostpath.c"
      ],
      "cflags": ["-Wall", "-Wextra", "-O2", "-fstack-protector-strong", "-D_FORTIFY_SOURCE=2", "-Wno-format-truncation"],
      "cflags_c": ["-std=gnu11"],
      "libraries": ["-lseccomp"]
    }
  ]
}
