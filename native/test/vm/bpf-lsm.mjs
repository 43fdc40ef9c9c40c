// The lease allow-list programs in a VM, through the one harness (run.mjs):
// the static driver (../bpf/driver.c + the real loader) boots twice on the
// Debian cloud kernel — once with `bpf` in lsm= (tier A must be detected and
// enforce with EPERM), once with the kernel's own LSM order minus `bpf` (LSM
// programs load and attach there but enforce nothing: detection must see
// that and fall back to tier B). Both command lines come from the guest
// kernel's CONFIG_LSM (run.mjs lsmCommandLines) and are returned.
// Usage: node native/test/vm/bpf-lsm.mjs [--concurrent]
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ensureDebianPackages } from "../../../tools/lib/apt.mjs";
import { buildBpfDriver } from "../bpf/build.mjs";
import { bootVm, lsmCommandLines } from "./run.mjs";
import { setupVm } from "./setup.mjs";

const GUEST_DRIVER = "/usr/bin/lh-bpf-driver";
const GUEST_RAN = "/usr/bin/lh-bpf-ran";

/**
 * Builds once, boots both. Resolves with { withBpf, withoutBpf, lsm, buildMs, totalMs }:
 * each boot as bootVm resolves it; lsm = lsmCommandLines of the guest kernel.
 */
export async function runBpfLsmVms({ concurrent = false, timeoutMs = 120_000 } = {}) {
  const vm = setupVm();
  const lsm = lsmCommandLines(vm.config);
  const dir = mkdtempSync(join(tmpdir(), "leasehold-vm-bpf-"));
  try {
    const t0 = Date.now();
    const b = buildBpfDriver(dir);
    const buildMs = Date.now() - t0;
    // The loader at the guest path its PT_INTERP names (/lib64 -> /usr/lib64 in the guest).
    const interp = b.deps.find((d) => d.host === b.ldso);
    const guestLdso = interp ? interp.guest.replace(/^\/usr\//, "/") : "/lib64/ld-linux-x86-64.so.2";
    const files = [{ guest: GUEST_DRIVER, host: b.driver }, { guest: GUEST_RAN, host: b.ran }, ...b.deps];
    // The driver's scratch files (the exec allow-list) on an ext4 NVMe disk:
    // a block device whose major is not 0, so the kernel's device encoding
    // (MAJOR << 20 | MINOR) and stat()'s differ and the loader's conversion
    // is exercised both ways (allowed exec, denial events). One image per
    // boot: the boots may run at once.
    const disk = (name) => {
      const img = join(dir, `${name}.img`);
      execFileSync("truncate", ["-s", "32M", img]);
      execFileSync("mkfs.ext4", ["-q", "-F", img], { stdio: ["ignore", "ignore", "pipe"] });
      return img;
    };
    // The driver makes its own network namespace and brings its loopback up.
    const body = (tier) => `i=0; while [ ! -b /dev/nvme0n1 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
mkdir -p /mnt/disk && mount -t ext4 /dev/nvme0n1 /mnt/disk
echo "LH-VM-DISK /dev/nvme0n1 major:minor(hex)=$(stat -c %t:%T /dev/nvme0n1) mounted=$(grep -c ' /mnt/disk ext4 ' /proc/mounts) waited=$((i * 100))ms"
${GUEST_DRIVER} --expect-tier ${tier} --ldso ${guestLdso} --dynamic ${GUEST_RAN} --dir /mnt/disk`;
    ensureDebianPackages(["e2fsprogs"], { quiet: true }); // mkfs.ext4
    const images = { A: disk("with-bpf"), B: disk("without-bpf") };
    const boot = (tier, append) => bootVm({ files, body: body(tier), append: [append], disk: images[tier], timeoutMs });
    const t1 = Date.now();
    let withBpf, withoutBpf;
    if (concurrent) [withBpf, withoutBpf] = await Promise.all([boot("A", lsm.withBpf), boot("B", lsm.withoutBpf)]);
    else {
      withBpf = await boot("A", lsm.withBpf);
      withoutBpf = await boot("B", lsm.withoutBpf);
    }
    return { withBpf, withoutBpf, lsm, buildMs, totalMs: Date.now() - t1 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const r = await runBpfLsmVms({ concurrent: process.argv.includes("--concurrent") });
  for (const [name, boot] of [["with bpf", r.withBpf], ["without bpf", r.withoutBpf]]) {
    console.log(`[vm] boot ${name}: ${boot.append} — ${(boot.ms / 1000).toFixed(1)}s`);
    if (!boot.lines.some((l) => l.startsWith("LH-VM-RESULT"))) console.log(boot.console.slice(-4000));
    for (const l of boot.lines) console.log(l);
  }
  console.log(`[vm] build ${(r.buildMs / 1000).toFixed(1)}s, both boots ${(r.totalMs / 1000).toFixed(1)}s`);
}
