// The licence the BPF sources state and the one the kernel reads agree
// (bpf/README.md "Licence"): every C source of bpf/ carries one SPDX
// expression, and each built object's `license` section holds the string the
// kernel knows for that same expression, one the kernel takes as
// GPL-compatible (it loads BPF-LSM programs and allows GPL-only helpers only
// then).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { BPF_BUILD_DIR, bpfPrograms, bpfSourceFiles, buildBpf } from "../../bpf/build.mjs";

const bpfDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bpf");

/** SPDX expression → the license-section strings that say the same thing to the kernel. */
const KERNEL_LICENSE: Record<string, string[]> = {
  "GPL-2.0-only": ["GPL v2", "GPL"],
  "GPL-2.0-or-later": ["GPL"],
  "GPL-2.0-only OR BSD-2-Clause": ["Dual BSD/GPL"],
  "GPL-2.0-only OR BSD-3-Clause": ["Dual BSD/GPL"],
  "GPL-2.0-only OR MIT": ["Dual MIT/GPL"],
};
/** include/linux/license.h: the strings the kernel treats as GPL-compatible. */
const KERNEL_GPL_COMPATIBLE = ["GPL", "GPL v2", "GPL and additional rights", "Dual BSD/GPL", "Dual MIT/GPL", "Dual MPL/GPL"];

function spdxOf(file: string): string | null {
  const first = readFileSync(join(bpfDir, file), "utf8").split("\n")[0] ?? "";
  return /^\/\* SPDX-License-Identifier: (.+) \*\/$/.exec(first)?.[1] ?? null;
}

function licenseSection(object: string): string {
  const out = execFileSync("llvm-readelf", ["--string-dump=license", object], { encoding: "utf8" });
  const m = /\[\s*0\]\s+(.+)$/m.exec(out);
  if (!m?.[1]) throw new Error(`no license section in ${object}: ${out}`);
  return m[1].trim();
}

describe("BPF licence lines", () => {
  beforeAll(() => { buildBpf({ quiet: true }); });

  const cSources = () => bpfSourceFiles().filter((f) => f.endsWith(".c") || f.endsWith(".h"));

  it("every C source of bpf/ states one SPDX expression, and it is the same in all of them", () => {
    const found = new Map(cSources().map((f) => [f, spdxOf(f)]));
    expect([...found.keys()]).toEqual(expect.arrayContaining(["lease_abi.h", "lib/lease.bpf.h", ...bpfPrograms()]));
    const expressions = new Set(found.values());
    expect({ expressions: [...expressions] }).toEqual({ expressions: [expect.any(String)] });
  });

  it("each built object's license section is the kernel's string for that expression, and GPL-compatible", () => {
    const expression = spdxOf("lib/lease.bpf.h");
    expect({ expression, known: expression !== null && expression in KERNEL_LICENSE }).toEqual({ expression, known: true });
    const agreeing = KERNEL_LICENSE[expression!] ?? [];
    for (const p of bpfPrograms()) {
      const license = licenseSection(join(BPF_BUILD_DIR, p.replace(/\.c$/, ".o")));
      expect({ object: p, license, agrees: agreeing.includes(license) }).toEqual({ object: p, license, agrees: true });
      expect(KERNEL_GPL_COMPATIBLE).toContain(license);
    }
  });
});
