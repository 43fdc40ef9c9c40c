// The one VM harness of the native tests. Boots a Debian cloud kernel (see
// setup.mjs) under qemu TCG with a busybox initramfs and reads the guest's
// "LH-VM ..." lines from the serial console (qemu exits 0 whatever happens
// inside, so the console is the result channel).
//
// A boot is: a list of files (static binaries, or a dynamic loader and the
// libraries a dynamic test binary needs) placed at guest paths under /usr,
// the body of the stage-2 script, and extra kernel command-line words. Two
// boots use it:
//   - the cgroup v2 test (this file's runVm, vm.test.ts): the real launch.c /
//     cgroup.c host side + the real helper on a pure cgroup2 host with
//     memory/pids/cpu enabled (driver.c);
//   - the BPF-LSM test (bpf-lsm.mjs, bpf-lsm.test.ts): the lease allow-list
//     programs through their C API (../bpf/driver.c), once with `bpf` in the
//     kernel's `lsm=` list and once without it.
// Every boot's init mounts proc, sysfs, devtmpfs, a tmpfs /tmp, securityfs
// and a pure cgroup2 hierarchy at /sys/fs/cgroup (no v1), and prints one
// "LH-VM-BOOT" line (kernel, command line, active LSMs) before the body runs.
// Usage: node native/test/vm/run.mjs  (the cgroup v2 boot)
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BPF_BUILD_DIR, buildBpf } from "../../../bpf/build.mjs";
import { setupVm } from "./setup.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const native = join(here, "..", "..");
const src = (f) => join(native, "src", f);
export const STATIC_CFLAGS = ["-static", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Wno-format-truncation"];
/** The sandbox helper's sources, read from binding.gyp (JSON here), so the VM build cannot drift from the real one. */
const HELPER_SOURCES = JSON.parse(readFileSync(join(native, "binding.gyp"), "utf8"))
  .targets.find((t) => t.target_name === "leasehold-sandbox")
  .sources.map((f) => join(native, f));
/** The BPF lease loader's sources (launch.c calls it), as the addon compiles them. */
export const BPF_GUARD_SOURCES = ["bpf_guard.c"].map(src);

/**
 * gcc arguments that compile and statically link the real loader: its
 * sources, the bpf/ skeletons (built first by bpf/build.mjs, which also
 * ensures clang, llvm, bpftool, libbpf-dev, libelf-dev and zlib1g-dev:
 * libbpf.a, libelf.a, libz.a) and the libraries. Put them after the
 * program's own sources.
 */
export function bpfGuardArgs() {
  buildBpf({ quiet: true });
  return ["-I", BPF_BUILD_DIR, "-I", join(native, "..", "bpf"), ...BPF_GUARD_SOURCES, "-lbpf", "-lelf", "-lz", "-lpthread"];
}
const BASE_APPEND = ["console=ttyS0", "rdinit=/init", "panic=-1", "quiet", "loglevel=3"];

// initramfs root (rootfs) cannot be pivot_root'ed away from, and the cgroup
// test's helper pivots: stage 1 copies everything into a tmpfs and
// switch_roots. Only /usr, /etc, /work-host and /stage2 are carried over;
// /bin, /sbin, /lib and /lib64 are symlinks into /usr (merged /usr), so a
// dynamic loader put at /usr/lib64 is found as /lib64/ld-linux-x86-64.so.2.
const STAGE1 = `#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /newroot
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox mount -t tmpfs -o size=96m,mode=0755 tmpfs /newroot
/bin/busybox cp -a /usr /etc /work-host /stage2 /newroot/
/bin/busybox ln -s usr/bin /newroot/bin
/bin/busybox ln -s usr/bin /newroot/sbin
/bin/busybox ln -s usr/lib /newroot/lib
/bin/busybox ln -s usr/lib64 /newroot/lib64
/bin/busybox mkdir -p /newroot/proc /newroot/sys /newroot/dev /newroot/tmp
/bin/busybox umount /dev
exec /bin/busybox switch_root /newroot /stage2
`;

const stage2 = (body) => `#!/bin/busybox sh
/bin/busybox --install -s /usr/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t securityfs securityfs /sys/kernel/security
mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo "LH-VM-BOOT kernel=$(uname -r) lsm=$(cat /sys/kernel/security/lsm) cmdline=$(cat /proc/cmdline)"
${body}
echo "LH-VM-DONE rc=$?"
poweroff -f
`;

/** The kernel's built-in default LSM order (CONFIG_LSM in its config file). */
export function kernelLsmList(configPath) {
  const m = /^CONFIG_LSM="([^"]*)"$/m.exec(readFileSync(configPath, "utf8"));
  if (!m) throw new Error(`${configPath} has no CONFIG_LSM line`);
  return m[1].split(",").filter(Boolean);
}

/** `lsm=` words for a boot with the BPF LSM active, and one without it, from the kernel's own default order. */
export function lsmCommandLines(configPath) {
  const list = kernelLsmList(configPath);
  const without = list.filter((l) => l !== "bpf");
  return { default: list, withBpf: `lsm=${[...without, "bpf"].join(",")}`, withoutBpf: `lsm=${without.join(",")}` };
}

/** Guest path → host path of every shared object `binary` loads (ldd), the loader included. */
export function dynamicDeps(binary) {
  const out = execFileSync("ldd", [binary], { encoding: "utf8" });
  const files = [];
  for (const line of out.split("\n")) {
    const m = /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line);
    if (!m || !m[1]) continue;
    // The guest has merged /usr: /lib and /lib64 are links into /usr.
    const guest = m[1].replace(/^\/(lib|lib64)\//, "/usr/$1/");
    files.push({ guest, host: m[1] });
  }
  return files;
}

/** Runs `gcc` quietly; throws with its stderr. */
export function gcc(args) {
  try {
    execFileSync("gcc", args, { stdio: ["ignore", "ignore", "pipe"] });
  } catch (e) {
    const err = /** @type {{stderr?: Buffer}} */ (e).stderr?.toString() ?? "";
    throw new Error(`gcc ${args.join(" ")} failed:\n${err}`, { cause: e });
  }
}

function buildInitramfs(dir, busybox, files, body) {
  const root = join(dir, "root");
  for (const d of ["usr/bin", "usr/libexec", "usr/lib", "usr/lib64", "etc", "work-host", "proc", "sys", "dev", "tmp"]) mkdirSync(join(root, d), { recursive: true });
  symlinkSync("usr/bin", join(root, "bin"));
  copyFileSync(busybox, join(root, "usr/bin/busybox"));
  for (const f of files) {
    if (!/^\/(usr|etc)\//.test(f.guest)) throw new Error(`guest path ${f.guest} is not below /usr or /etc (stage 1 copies only those)`);
    mkdirSync(join(root, dirname(f.guest)), { recursive: true });
    copyFileSync(f.host, join(root, f.guest));
    chmodSync(join(root, f.guest), 0o755);
  }
  writeFileSync(join(root, "init"), STAGE1);
  writeFileSync(join(root, "stage2"), stage2(body));
  chmodSync(join(root, "init"), 0o755);
  chmodSync(join(root, "stage2"), 0o755);
  const out = join(dir, "initramfs.cpio");
  execFileSync("/bin/sh", ["-c", `cd "${root}" && find . | "${busybox}" cpio -o -H newc > "${out}" 2>/dev/null`]);
  return out;
}

/**
 * One boot. `files`: [{ guest, host }] copied into the initramfs (guest paths
 * below /usr or /etc). `body`: stage-2 shell after the common mounts; its
 * last command's status is printed as "LH-VM-DONE rc=N". `append`: extra
 * kernel command-line words. `disk`: a raw disk image attached as an NVMe
 * drive (the cloud kernel's NVMe driver and ext4 are built in, virtio is a
 * module): /dev/nvme0n1 in the guest, a real block device (major 259) where
 * tmpfs has major 0. Resolves with { lines, console, ms, kernel, append }.
 */
export async function bootVm({ files, body, append = [], disk, timeoutMs = 240_000 }) {
  const vm = setupVm();
  const dir = mkdtempSync(join(tmpdir(), "leasehold-vm-"));
  try {
    const initrd = buildInitramfs(dir, vm.busybox, files, body);
    const cmdline = [...BASE_APPEND, ...append].join(" ");
    const t0 = Date.now();
    const qemu = spawn(vm.qemu, [
      "-accel", "tcg", "-nographic", "-no-reboot", "-m", "256M", "-smp", "1",
      "-kernel", vm.kernel, "-initrd", initrd, "-append", cmdline,
      ...(disk ? ["-drive", `file=${disk},if=none,id=lhdisk,format=raw`, "-device", "nvme,serial=leasehold,drive=lhdisk"] : []),
    ], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    qemu.stdout.on("data", (b) => { out += b.toString(); });
    qemu.stderr.on("data", (b) => { out += b.toString(); });
    const timer = setTimeout(() => qemu.kill("SIGKILL"), timeoutMs);
    await new Promise((res) => qemu.once("exit", res));
    clearTimeout(timer);
    // The guest's first line shares the terminal line with the firmware's last
    // output and its screen-clearing escapes (and that line's CR LF is sometimes
    // lost): a result line is read from where "LH-VM" begins.
    const lines = out.split(/\r?\n/).filter((l) => l.includes("LH-VM")).map((l) => l.slice(l.indexOf("LH-VM")));
    return { lines, console: out, ms: Date.now() - t0, kernel: vm.kernel, append: cmdline };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// lo up as on any real host: the loader's self-test connects over loopback in
// the agent's own network namespace (with lo down it finds no tier).
const CGROUP_BODY = `ip link set lo up
[ -w /proc/sys/kernel/unprivileged_userns_clone ] && echo 1 > /proc/sys/kernel/unprivileged_userns_clone
echo "+memory +pids +cpu" > /sys/fs/cgroup/cgroup.subtree_control
echo "LH-VM-INFO kernel=$(uname -r) mounts=$(grep cgroup /proc/mounts | tr '\\n' ';') root_subtree_control=$(cat /sys/fs/cgroup/cgroup.subtree_control)"
/usr/bin/lh-vm-driver`;

/** The cgroup v2 boot: static helper, probe and driver.c; resolves like bootVm. */
export async function runVm({ timeoutMs = 240_000 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "leasehold-vm-bin-"));
  try {
    const bin = (n) => join(dir, n);
    gcc([...STATIC_CFLAGS, "-o", bin("helper"), ...HELPER_SOURCES, "-lseccomp"]);
    gcc([...STATIC_CFLAGS, "-o", bin("probe"), join(native, "test", "workloads", "probe.c")]);
    // launch.c puts BPF-guarded leases under the loader: it links in, unused by these checks.
    gcc([...STATIC_CFLAGS, "-o", bin("driver"), join(here, "driver.c"), src("launch.c"), src("cgroup.c"), src("cgroup_v1.c"), src("cgroup_v2.c"), src("cgroup_sweep.c"), ...bpfGuardArgs()]);
    return await bootVm({
      files: [
        { guest: "/usr/libexec/leasehold-sandbox", host: bin("helper") },
        { guest: "/usr/bin/lh-probe", host: bin("probe") },
        { guest: "/usr/bin/lh-vm-driver", host: bin("driver") },
      ],
      body: CGROUP_BODY,
      // Explicit, not the kernel's default: the launcher's BPF lease check (bpf_launch) needs tier A.
      append: [lsmCommandLines(setupVm().config).withBpf],
      timeoutMs,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const r = await runVm();
  if (!r.lines.some((l) => l.startsWith("LH-VM-RESULT"))) console.log(r.console.slice(-4000));
  for (const l of r.lines) console.log(l);
  console.log(`[vm] ${r.kernel} boot-to-poweroff ${(r.ms / 1000).toFixed(1)}s`);
}
