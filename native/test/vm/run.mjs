// Boots a Debian cloud kernel under qemu (TCG) with a busybox initramfs
// whose init mounts a pure cgroup2 hierarchy at /sys/fs/cgroup (no v1),
// enables +memory +pids +cpu, and runs the static test driver (driver.c:
// the real launch.c/cgroup.c host side + the real helper, built static).
// Returns the driver's "LH-VM ..." lines. Usage: node native/test/vm/run.mjs
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { setupVm } from "./setup.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const native = join(here, "..", "..");
const src = (f) => join(native, "src", f);
const CFLAGS = ["-static", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Wno-format-truncation"];
const HELPER_SOURCES = ["helper.c", "util.c", "user.c", "mount.c", "net.c", "netlink.c", "caps.c", "landlock.c", "seccomp.c", "init.c"].map(src);

const STAGE1 = `#!/bin/busybox sh
# initramfs root (rootfs) cannot be pivot_root'ed away from: copy into a tmpfs and switch_root.
/bin/busybox mkdir -p /proc /sys /dev /newroot
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox mount -t tmpfs -o size=64m,mode=0755 tmpfs /newroot
/bin/busybox cp -a /usr /etc /work-host /stage2 /newroot/
/bin/busybox ln -s usr/bin /newroot/bin
/bin/busybox ln -s usr/bin /newroot/sbin
/bin/busybox mkdir -p /newroot/proc /newroot/sys /newroot/dev /newroot/tmp
/bin/busybox umount /dev
exec /bin/busybox switch_root /newroot /stage2
`;
const STAGE2 = `#!/bin/busybox sh
/bin/busybox --install -s /usr/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
[ -w /proc/sys/kernel/unprivileged_userns_clone ] && echo 1 > /proc/sys/kernel/unprivileged_userns_clone
echo "+memory +pids +cpu" > /sys/fs/cgroup/cgroup.subtree_control
echo "LH-VM-INFO kernel=$(uname -r) mounts=$(grep cgroup /proc/mounts | tr '\\n' ';') root_subtree_control=$(cat /sys/fs/cgroup/cgroup.subtree_control)"
/usr/bin/lh-vm-driver
echo "LH-VM-DONE rc=$?"
poweroff -f
`;

/** Builds the initramfs; returns its path (in a temp dir the caller removes). */
function buildInitramfs(dir, busybox) {
  const root = join(dir, "root");
  for (const d of ["usr/bin", "usr/libexec", "etc", "work-host", "proc", "sys", "dev", "tmp"]) mkdirSync(join(root, d), { recursive: true });
  symlinkSync("usr/bin", join(root, "bin"));
  copyFileSync(busybox, join(root, "usr/bin/busybox"));
  const gcc = (out, files, libs = []) => execFileSync("gcc", [...CFLAGS, "-o", out, ...files, ...libs], { stdio: ["ignore", "ignore", "pipe"] });
  gcc(join(root, "usr/libexec/leasehold-sandbox"), HELPER_SOURCES, ["-lseccomp"]);
  gcc(join(root, "usr/bin/lh-probe"), [join(native, "test", "workloads", "probe.c")]);
  gcc(join(root, "usr/bin/lh-vm-driver"), [join(here, "driver.c"), src("launch.c"), src("cgroup.c")], ["-lpthread"]);
  writeFileSync(join(root, "init"), STAGE1);
  writeFileSync(join(root, "stage2"), STAGE2);
  chmodSync(join(root, "init"), 0o755);
  chmodSync(join(root, "stage2"), 0o755);
  const out = join(dir, "initramfs.cpio");
  execFileSync("/bin/sh", ["-c", `cd "${root}" && find . | "${busybox}" cpio -o -H newc > "${out}" 2>/dev/null`]);
  return out;
}

/** Runs the VM; resolves with { lines, console, ms }. */
export async function runVm({ timeoutMs = 240_000 } = {}) {
  const vm = setupVm();
  const dir = mkdtempSync(join(tmpdir(), "leasehold-vm-"));
  try {
    const initrd = buildInitramfs(dir, vm.busybox);
    const t0 = Date.now();
    const qemu = spawn(vm.qemu, [
      "-accel", "tcg", "-nographic", "-no-reboot", "-m", "256M", "-smp", "1",
      "-kernel", vm.kernel, "-initrd", initrd,
      "-append", "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=3",
    ], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    qemu.stdout.on("data", (b) => { out += b.toString(); });
    qemu.stderr.on("data", (b) => { out += b.toString(); });
    const timer = setTimeout(() => qemu.kill("SIGKILL"), timeoutMs);
    await new Promise((res) => qemu.once("exit", res));
    clearTimeout(timer);
    const lines = out.split(/\r?\n/).filter((l) => l.startsWith("LH-VM"));
    return { lines, console: out, ms: Date.now() - t0, kernel: vm.kernel };
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
