// Builds the lease programs: vmlinux.h from the running kernel's BTF, every
// bpf/*.bpf.c with clang -target bpf (CO-RE, -g -O2), and a libbpf skeleton
// per object with bpftool. Output in bpf/build/ (git-ignored). Rebuilds only
// when the sources (or the compiler) changed. Node builtins only. Prints one line.
// Usage: node bpf/build.mjs   or   import { buildBpf } from "./bpf/build.mjs"
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ensureDebianPackages } from "../tools/lib/apt.mjs";

const here = dirname(fileURLToPath(import.meta.url));
export const BPF_BUILD_DIR = join(here, "build");
const stampFile = join(BPF_BUILD_DIR, "sources.sha256");
/** clang/llvm compile the programs, bpftool makes vmlinux.h and skeletons, libbpf-dev/libelf-dev/zlib link the loader. */
export const BPF_DEBIAN_PACKAGES = ["clang", "llvm", "libbpf-dev", "bpftool", "libelf-dev", "zlib1g-dev"];
const KERNEL_BTF = "/sys/kernel/btf/vmlinux";

/** The program sources, sorted: bpf/*.bpf.c. */
export function bpfPrograms() {
  return readdirSync(here).filter((f) => f.endsWith(".bpf.c")).sort();
}

/** Every file whose change means a rebuild (programs, shared headers, this script). */
export function bpfSourceFiles() {
  const lib = existsSync(join(here, "lib")) ? readdirSync(join(here, "lib")).sort().map((f) => join("lib", f)) : [];
  return [...bpfPrograms(), "lease_abi.h", "build.mjs", ...lib];
}

function sourcesDigest() {
  const h = createHash("sha256");
  for (const f of bpfSourceFiles()) {
    h.update(f + "\0");
    h.update(readFileSync(join(here, f)));
  }
  // A different clang emits different bytes: the recorded object digest must follow.
  h.update(execFileSync("clang", ["--version"], { encoding: "utf8" }));
  return h.digest("hex");
}

function run(cmd, args, opts = {}) {
  try {
    return execFileSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20, ...opts });
  } catch (e) {
    const out = `${e.stdout ?? ""}${e.stderr ?? ""}`.split("\n").filter((l) => /error|warning/i.test(l)).slice(0, 6);
    throw new Error(`[bpf] ${cmd} failed: ${out.join(" | ") || e.message}`, { cause: e });
  }
}

/** Ensures the toolchain and rebuilds only when sources changed. Returns the one-line summary. */
export function buildBpf({ quiet = false } = {}) {
  ensureDebianPackages(BPF_DEBIAN_PACKAGES, { quiet: true });
  const digest = sourcesDigest();
  const programs = bpfPrograms();
  const names = programs.map((p) => p.replace(/\.bpf\.c$/, ""));
  const built = names.every((n) => existsSync(join(BPF_BUILD_DIR, `${n}.bpf.o`)) && existsSync(join(BPF_BUILD_DIR, `${n}.skel.h`)));
  if (built && existsSync(stampFile) && readFileSync(stampFile, "utf8").trim() === digest) {
    const line = `[bpf] up to date (${digest.slice(0, 12)})`;
    if (!quiet) console.log(line);
    return line;
  }
  if (!existsSync(KERNEL_BTF)) throw new Error(`[bpf] ${KERNEL_BTF} is missing: this kernel was built without CONFIG_DEBUG_INFO_BTF, CO-RE programs cannot be built or loaded here`);
  const t0 = Date.now();
  mkdirSync(BPF_BUILD_DIR, { recursive: true });
  // Generated, never committed: the types of the kernel we build on; CO-RE
  // relocations adapt the objects to the kernel they load on.
  const vmlinux = run("bpftool", ["btf", "dump", "file", KERNEL_BTF, "format", "c"]);
  writeFileSync(join(BPF_BUILD_DIR, "vmlinux.h"), vmlinux);
  for (const n of names) {
    const obj = join(BPF_BUILD_DIR, `${n}.bpf.o`);
    run("clang", ["-target", "bpf", "-D__TARGET_ARCH_x86", "-g", "-O2", "-Wall", "-Werror", "-I", BPF_BUILD_DIR, "-I", here,
      "-c", join(here, `${n}.bpf.c`), "-o", `${obj}.tmp`]);
    // Strip DWARF (BTF stays): the embedded object, and so its digest, do not carry build paths.
    run("llvm-strip", ["-g", `${obj}.tmp`]);
    renameSync(`${obj}.tmp`, obj);
    const skel = run("bpftool", ["gen", "skeleton", obj, "name", n]);
    writeFileSync(join(BPF_BUILD_DIR, `${n}.skel.h`), skel);
  }
  writeFileSync(stampFile, digest + "\n");
  const line = `[bpf] built ${names.join(", ")} in ${((Date.now() - t0) / 1000).toFixed(1)}s (${digest.slice(0, 12)})`;
  if (!quiet) console.log(line);
  return line;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  try {
    buildBpf();
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    process.exit(1);
  }
}
