// Test setup for the cgroup v2 VM test: qemu + busybox from Debian (through
// ensureDebianPackages), and a Debian cloud kernel fetched with
// `apt-get download` and unpacked with `dpkg-deb -x` — never installed.
// Node builtins only. Usage: node native/test/vm/setup.mjs  (prints the kernel path)
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ensureDebianPackages } from "../../../tools/lib/apt.mjs";

export const VM_CACHE = "/var/cache/leasehold-vm";
export const VM_DEBIAN_PACKAGES = ["qemu-system-x86", "busybox-static"];

/** The versioned package the `linux-image-cloud-amd64` meta-package points at. */
function cloudKernelPackage() {
  const out = execFileSync("apt-cache", ["depends", "linux-image-cloud-amd64"], { encoding: "utf8" });
  const m = /Depends:\s*(linux-image-[0-9][^\s]*-cloud-amd64)\b/.exec(out);
  if (!m) throw new Error(`no versioned kernel behind linux-image-cloud-amd64:\n${out}`);
  return m[1];
}

/**
 * The shell command (as root) that provides what setupVm needs, for a
 * failure message: the versioned kernel package when apt can name it, else
 * the same lookup inline.
 */
export function vmInstallCommand() {
  let pkg;
  try {
    pkg = cloudKernelPackage();
  } catch {
    pkg = "$(apt-cache depends linux-image-cloud-amd64 | grep -o 'linux-image-[0-9][^ ]*-cloud-amd64' | head -n1)";
  }
  return `apt-get update && apt-get install -y --no-install-recommends ${VM_DEBIAN_PACKAGES.join(" ")} && ` +
    `mkdir -p ${VM_CACHE} && cd ${VM_CACHE} && apt-get download ${pkg} && dpkg-deb -x ${pkg.startsWith("$") ? "linux-image-*-cloud-amd64_*.deb" : `${pkg}_*.deb`} kernel`;
}

/** Ensures qemu/busybox and an unpacked cloud kernel. Returns { kernel, busybox, qemu, config }.
 * Throws with the reason and the install command (vmInstallCommand) when it cannot. */
export function setupVm() {
  try {
    return provideVm();
  } catch (e) {
    const reason = e instanceof Error ? e.message.split("\n")[0] : String(e);
    throw new Error(`qemu or the Debian cloud kernel could not be obtained (${reason}); install them as root with: ${vmInstallCommand()}`, { cause: e });
  }
}

function provideVm() {
  ensureDebianPackages(VM_DEBIAN_PACKAGES, { quiet: true });
  mkdirSync(VM_CACHE, { recursive: true });
  const root = join(VM_CACHE, "kernel");
  const findKernel = () => existsSync(join(root, "boot")) ? readdirSync(join(root, "boot")).find((f) => f.startsWith("vmlinuz-")) : undefined;
  if (!findKernel()) {
    // Two VM test files may set up at once (the serial group runs two side
    // by side): each downloads and unpacks into a directory of its own and
    // renames the unpacked tree into place, so neither boots a kernel the
    // other is half-way through writing. The loser of the rename drops its copy.
    const pkg = cloudKernelPackage();
    const own = mkdtempSync(join(VM_CACHE, "setup-"));
    try {
      const cached = readdirSync(VM_CACHE).find((f) => f.startsWith(`${pkg}_`) && f.endsWith(".deb"));
      let deb = cached === undefined ? undefined : join(VM_CACHE, cached);
      if (!deb) {
        execFileSync("apt-get", ["download", "-qq", pkg], { cwd: own, stdio: ["ignore", "ignore", "inherit"] });
        const got = readdirSync(own).find((f) => f.startsWith(`${pkg}_`) && f.endsWith(".deb"));
        if (!got) throw new Error(`apt-get download ${pkg} produced no .deb`);
        deb = join(VM_CACHE, got);
        renameSync(join(own, got), deb);
      }
      execFileSync("dpkg-deb", ["-x", deb, join(own, "kernel")]);
      try {
        renameSync(join(own, "kernel"), root);
      } catch (e) {
        if (!findKernel()) throw e;
      }
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  }
  const vmlinuz = findKernel();
  if (!vmlinuz) throw new Error("kernel package has no /boot/vmlinuz-*");
  const qemu = "/usr/bin/qemu-system-x86_64";
  for (const f of [qemu, "/bin/busybox"]) if (!existsSync(f)) throw new Error(`${f} is missing`);
  return {
    kernel: join(root, "boot", vmlinuz),
    config: join(root, "boot", vmlinuz.replace("vmlinuz-", "config-")),
    busybox: "/bin/busybox",
    qemu,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(JSON.stringify(setupVm()));
}
