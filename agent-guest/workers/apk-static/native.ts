// Native libraries (lib/<abi>/*.so) and Android 15's 16 KB page size. Two
// different properties, reported apart because they fail differently:
//  - ELF: every PT_LOAD segment's p_align must be >= 16384, or the loader
//    cannot map the library on a 16 KB-page device (observed: the p_align
//    values; derived: the verdict);
//  - ZIP: a library stored uncompressed is mapped straight from the APK, so
//    its data must start at a 16 KB-aligned file offset (observed: method and
//    offset; derived: the verdict). A compressed library is extracted at
//    install time, so its ZIP offset does not matter.

import type { FactSet, Limitations } from "./facts";
import type { InspectLimits } from "./limits";
import { METHOD_STORED, type ReadBudget, type ZipArchive, entryDataOffset, readEntryPrefix } from "./zip";

export const PAGE_16K = 16384;
const PT_LOAD = 1;
const LIB = /^lib\/([^/]+)\/([^/]+\.so)$/;

const MACHINES: Readonly<Record<number, string>> = { 3: "x86", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv" };
const ABI_MACHINE: Readonly<Record<string, string>> = { "armeabi-v7a": "arm", armeabi: "arm", "arm64-v8a": "aarch64", x86: "x86", x86_64: "x86_64", riscv64: "riscv" };

export interface ElfInfo {
  class: 32 | 64;
  machine: string;
  load_aligns: number[];
}

/** Program-header facts from the first bytes of an ELF file, or a reason it is not one. */
export function parseElfHeader(buf: Buffer): ElfInfo | string {
  if (buf.length < 52 || buf.readUInt32BE(0) !== 0x7f454c46) return "not an ELF file";
  const cls = buf[4];
  if (buf[5] !== 1) return "big-endian ELF (not an Android ABI)";
  const is64 = cls === 2;
  if (!is64 && cls !== 1) return "unknown ELF class";
  if (is64 && buf.length < 64) return "truncated ELF header";
  const machineNo = buf.readUInt16LE(18);
  const phoff = is64 ? Number(buf.readBigUInt64LE(32)) : buf.readUInt32LE(28);
  const phentsize = buf.readUInt16LE(is64 ? 54 : 42);
  const phnum = buf.readUInt16LE(is64 ? 56 : 44);
  if (phentsize < (is64 ? 56 : 32)) return "program header entries too small";
  if (phoff + phnum * phentsize > buf.length) return `program headers (at ${phoff}, ${phnum} × ${phentsize}) lie beyond the bytes read`;
  const aligns: number[] = [];
  for (let i = 0; i < phnum; i++) {
    const h = phoff + i * phentsize;
    if (buf.readUInt32LE(h) !== PT_LOAD) continue;
    aligns.push(is64 ? Number(buf.readBigUInt64LE(h + 48)) : buf.readUInt32LE(h + 28));
  }
  return { class: is64 ? 64 : 32, machine: MACHINES[machineNo] ?? `e_machine ${machineNo}`, load_aligns: aligns };
}

export function nativeFacts(zip: ZipArchive, limits: InspectLimits, budget: ReadBudget, facts: FactSet, lim: Limitations): void {
  // The first entry of each name only (as byName): duplicates are listed by zip.entries.
  const libs = zip.entries.filter((e) => LIB.test(e.name) && zip.byName.get(e.name) === e);
  const abis: Record<string, string[]> = {};
  const aligned: string[] = [];
  const misaligned: { library: string; reasons: string[] }[] = [];
  const unknown: { library: string; reason: string }[] = [];
  const ids: string[] = [];
  if (libs.length > limits.maxNativeLibraries) lim.add(`${libs.length} native libraries; only the first ${limits.maxNativeLibraries} are examined`);
  for (const e of libs.slice(0, limits.maxNativeLibraries)) {
    const [, abi, file] = LIB.exec(e.name) as RegExpExecArray;
    (abis[abi!] ??= []).push(file!);
    const id = `native.lib:${e.name}`;
    const stored = e.method === METHOD_STORED;
    const offset = entryDataOffset(zip, e, lim);
    const head = readEntryPrefix(zip, e, limits.prefixBytes, budget, lim);
    const elf = head === null ? "not read" : parseElfHeader(head);
    facts.observed(
      id,
      {
        abi,
        bytes: e.uncompressedSize,
        stored,
        data_offset: offset,
        elf: typeof elf === "string" ? { error: elf } : { ...elf, machine_matches_abi: ABI_MACHINE[abi!] === undefined ? null : ABI_MACHINE[abi!] === elf.machine },
      },
      `${e.name}: ZIP local header and ELF program headers`,
    );
    ids.push(id);
    const reasons: string[] = [];
    if (typeof elf === "string") {
      unknown.push({ library: e.name, reason: elf });
      continue;
    }
    const small = elf.load_aligns.filter((a) => a < PAGE_16K);
    if (elf.load_aligns.length === 0) reasons.push("no PT_LOAD segment");
    if (small.length > 0) reasons.push(`PT_LOAD p_align ${Math.min(...small)} < ${PAGE_16K}`);
    if (stored && offset !== null && offset % PAGE_16K !== 0) reasons.push(`stored uncompressed at offset ${offset}, not a multiple of ${PAGE_16K}`);
    if (reasons.length === 0) aligned.push(e.name);
    else misaligned.push({ library: e.name, reasons });
  }
  facts.observed("native.abis", abis, "ZIP entries lib/<abi>/*.so");
  facts.derived(
    "native.alignment_16k",
    { libraries: ids.length, aligned, misaligned, unknown },
    `every PT_LOAD p_align >= ${PAGE_16K}, and stored libraries at ${PAGE_16K}-aligned data offsets`,
    ids,
  );
}
