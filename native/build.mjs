// Builds the native addon and the sandbox helper when their sources changed.
// Node builtins only (runs before anything else is installed). Prints one line.
// Usage: node native/build.mjs   or   import { buildNative } from "./native/build.mjs"
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ensureDebianPackages } from "../tools/lib/apt.mjs";
import { BPF_BUILD_DIR, bpfPrograms, buildBpf } from "../bpf/build.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, "build", "Release");
const stampFile = join(outDir, "sources.sha256");
/** Debian packages the build needs (libseccomp headers), the benchmark's baseline (bwrap) and the guest's bounded workspace image (e2fsprogs: mkfs.ext4, e2fsck, resize2fs). */
export const NATIVE_DEBIAN_PACKAGES = ["libseccomp-dev", "bubblewrap", "e2fsprogs", "gcc", "g++", "make", "python3"];

function sourcesDigest() {
  const h = createHash("sha256");
  const files = ["binding.gyp", ...readdirSync(join(here, "src")).sort().map((f) => join("src", f))];
  for (const f of files) {
    h.update(f + "\0");
    h.update(readFileSync(join(here, f)));
  }
  // The skeletons embed the BPF objects the addon loads: a changed program is a changed addon.
  for (const p of bpfPrograms()) {
    const skel = `${p.replace(/\.bpf\.c$/, "")}.skel.h`;
    h.update(skel + "\0");
    h.update(readFileSync(join(BPF_BUILD_DIR, skel)));
  }
  h.update(readFileSync(join(here, "..", "bpf", "lease_abi.h")));
  h.update(process.version);
  return h.digest("hex");
}

/** Ensures the build deps and rebuilds only when sources changed. Returns the one-line summary. */
export function buildNative({ quiet = false } = {}) {
  ensureDebianPackages(NATIVE_DEBIAN_PACKAGES, { quiet: true });
  // The addon compiles the BPF skeletons in: they come first.
  buildBpf({ quiet: true });
  const digest = sourcesDigest();
  const built =
    existsSync(join(outDir, "leasehold_native.node")) && existsSync(join(outDir, "leasehold-sandbox"));
  if (built && existsSync(stampFile) && readFileSync(stampFile, "utf8").trim() === digest) {
    const line = `[native] up to date (${digest.slice(0, 12)})`;
    if (!quiet) console.log(line);
    return line;
  }
  const gyp = join(here, "..", "node_modules", "node-gyp", "bin", "node-gyp.js");
  const t0 = Date.now();
  try {
    // --nodedir=/usr: use the system's Node headers; node-gyp would otherwise download them.
    execFileSync(process.execPath, [gyp, "rebuild", "--nodedir=/usr", "-C", here], { stdio: "pipe" });
  } catch (e) {
    const out = `${e.stdout ?? ""}${e.stderr ?? ""}`.split("\n").filter((l) => /error/i.test(l)).slice(0, 5);
    throw new Error(`[native] build failed: ${out.join(" | ") || e.message}`, { cause: e });
  }
  writeFileSync(stampFile, digest + "\n");
  const line = `[native] built in ${((Date.now() - t0) / 1000).toFixed(1)}s (${digest.slice(0, 12)})`;
  if (!quiet) console.log(line);
  return line;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  try {
    buildNative();
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e));
    process.exit(1);
  }
}
