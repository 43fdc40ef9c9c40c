// The skips `npm test` accepts: each one names a kernel (or host hardware)
// feature that is absent, so the test has nothing to check on this machine.
// Every other skip fails the run (tools/lib/test-report.mjs) — in particular
// "needs root": a machine without root must not pass while silently leaving
// out the sandbox and workspace security tests.
//
// An entry matches a skipped test when the test's file is `file` and its full
// name (describe titles and test title; for Playwright, plus " — " and the
// skip's description) matches `name`. `env` (optional): the entry applies only
// when that variable has that value in the environment the suite ran in.
// `why` is what the summary prints beside an accepted skip.

/** @type {ReadonlyArray<import("./skip-allowlist.d.mts").AllowedSkip>} */
export const ALLOWED_SKIPS = Object.freeze([
  {
    file: "native/test/host-view.test.ts",
    name: /^masked \/proc entries show nothing of the host \/proc\/[\w./-]+: host shows (nothing \(absent or unreadable on this kernel: row not tested\)|0 \(empty on this host: row not tested\)), the lease shows 0$/,
    why: "this kernel has no such /proc entry (or it is empty on the host): the lease cannot be shown to hide what the host does not have",
  },
  {
    file: "native/test/corpus.test.ts",
    name: /arch check: an i386 syscall via int 0x80 is killed with SIGSYS \(host kernel has IA32 emulation\)$/,
    why: "the kernel was built without IA32 emulation: int 0x80 never reaches seccomp (its sibling test checks the SIGSEGV instead)",
  },
  {
    file: "native/test/corpus.test.ts",
    name: /arch check: kernel without IA32 emulation kills int 0x80 with SIGSEGV, in the lease as on the host \(seccomp never sees it\)$/,
    why: "the kernel has IA32 emulation: its sibling test checks that seccomp kills int 0x80 with SIGSYS",
  },
  {
    file: "native/test/exec-from-memory.test.ts",
    name: /^exec from memory .*\(kernel has (the sysctl|vm\.memfd_noexec)\)$/,
    why: "the kernel predates vm.memfd_noexec (Linux 6.3): there is no memfd exec seal to check",
  },
  {
    file: "native/test/netns.test.ts",
    name: /^network namespace ownership hostile: a NETLINK_KOBJECT_UEVENT socket in a lease hears no host uevent written to \/sys\/devices\/virtual\/mem\/null\/uevent/,
    why: "sysfs has no uevent file for /dev/null here: the test has no way to make the host emit a uevent",
  },
  {
    file: "native/test/egress-path.test.ts",
    name: /^egress lease network path \(veth per lease, under the BPF allow-list\) IPv6 egress beyond the host end — skipped: this kernel has no per-interface IPv6 forwarding \(force_forwarding, Linux 6\.17\)/,
    why: "the kernel has no per-interface IPv6 force_forwarding (Linux 6.17): the lease's IPv6 stops at the host end by design",
  },
  {
    file: "native/test/kernel-quotas.test.ts",
    name: /\(skipped: fs\/file-max so large that no pids_max the schema allows is too many\)$/,
    why: "this host's open-file table is so large that every pids_max the schema accepts leaves each process its share: there is no refusal to show",
  },
  {
    file: "native/test/host-paths.test.ts",
    name: /^read-write host paths .* \(skipped: idmapped mounts probed absent here: .+\)$/,
    why: "the kernel or the file system under the test root takes no idmapped mount (probed with the helper's own --probe-idmap): rw host paths are refused UNENFORCEABLE there, which the ramfs case still checks",
  },
  ...["agent-guest/daemon/runner-host-paths.test.ts", "test/guest/host-paths.test.ts"].map((file) => ({
    file,
    name: / \(skipped: idmapped mounts probed absent here: .+\)$/,
    why: "the kernel or the file system under the test's directory takes no idmapped mount (probed with the helper's --probe-idmap): rw host paths are refused UNENFORCEABLE there (native/test/host-paths.test.ts checks that refusal)",
  })),
  // The BPF tiers: the titles end in the program types the kernel lacks (bpftool feature probe), never in "not root".
  ...["native/test/bpf-net.test.ts", "native/test/bpf-exec.test.ts", "native/test/egress-path.test.ts"].map((file) => ({
    file,
    name: / — skipped: kernel lacks BPF program types [a-z_, ]+$/,
    why: "the kernel cannot load the cgroup socket/tracing BPF programs tier B needs (the host runs tier C, which refuses egress leases)",
  })),
  // Not a kernel feature: the operator's knowing opt-out from booting QEMU VMs (native/README.md), honoured only when set.
  ...["native/test/vm/vm.test.ts", "native/test/vm/bpf-lsm.test.ts"].map((file) => ({
    file,
    name: / — skipped: LEASEHOLD_VM_TESTS=skip$/,
    env: { LEASEHOLD_VM_TESTS: "skip" },
    why: "LEASEHOLD_VM_TESTS=skip was set: the VM kernel tests were left out on purpose",
  })),
]);
