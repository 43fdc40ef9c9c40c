// Cross-platform frameworks, recognised by their files. One file name alone
// is a guess (hypothesized: anybody can ship a file called libflutter.so);
// a file name plus the content magic that framework writes is observed.
// Magics: Hermes bytecode 0x1F1903C103BC1FC6 (little-endian), IL2CPP
// global-metadata.dat 0xFAB11BAF, Xamarin assembly store "XABA" and
// compressed assemblies "XALZ", Unity asset bundles "UnityFS", a Metro
// JavaScript bundle's "__BUNDLE_START_TIME__", and the Dart AOT snapshot
// symbol "_kDartVmSnapshotData" in Flutter's libapp.so.

import type { FactSet, Limitations } from "./facts";
import type { InspectLimits } from "./limits";
import { type ReadBudget, type ZipArchive, type ZipEntry, readEntryPrefix } from "./zip";

const HERMES_MAGIC = Buffer.from([0xc6, 0x1f, 0xbc, 0x03, 0xc1, 0x03, 0x19, 0x1f]);
const IL2CPP_MAGIC = Buffer.from([0xaf, 0x1b, 0xb1, 0xfa]);

interface Rule {
  id: string;
  name: string;
  /** Any of these entry-name tests found → the framework is hypothesized. */
  files: RegExp[];
  /** Content checks: the first matching entry whose prefix satisfies `test` → observed. */
  magics: { entry: RegExp; what: string; test: (prefix: Buffer) => boolean }[];
}

const RULES: Rule[] = [
  {
    id: "flutter",
    name: "Flutter",
    files: [/^lib\/[^/]+\/libflutter\.so$/, /^assets\/flutter_assets\//, /^lib\/[^/]+\/libapp\.so$/],
    magics: [{ entry: /^lib\/[^/]+\/libapp\.so$/, what: "Dart AOT snapshot symbol _kDartVmSnapshotData in libapp.so", test: (b) => b.includes("_kDartVmSnapshotData") }],
  },
  {
    id: "react_native",
    name: "React Native",
    files: [/^lib\/[^/]+\/libreactnativejni\.so$/, /^assets\/index\.android\.bundle$/],
    magics: [
      { entry: /^assets\/index\.android\.bundle$/, what: "Metro bundle prologue __BUNDLE_START_TIME__", test: (b) => b.includes("__BUNDLE_START_TIME__") },
      { entry: /^assets\/index\.android\.bundle$/, what: "Hermes bytecode magic", test: (b) => b.subarray(0, 8).equals(HERMES_MAGIC) },
    ],
  },
  {
    id: "hermes",
    name: "Hermes",
    files: [/^lib\/[^/]+\/libhermes\.so$/],
    magics: [{ entry: /^assets\/index\.android\.bundle$/, what: "Hermes bytecode magic", test: (b) => b.subarray(0, 8).equals(HERMES_MAGIC) }],
  },
  {
    id: "unity",
    name: "Unity",
    files: [/^lib\/[^/]+\/libunity\.so$/, /^assets\/bin\/Data\//],
    magics: [{ entry: /^assets\/bin\/Data\/data\.unity3d$/, what: "UnityFS asset bundle header", test: (b) => b.subarray(0, 7).toString("latin1") === "UnityFS" }],
  },
  {
    id: "il2cpp",
    name: "Unity IL2CPP",
    files: [/^lib\/[^/]+\/libil2cpp\.so$/, /global-metadata\.dat$/],
    magics: [{ entry: /^assets\/bin\/Data\/Managed\/Metadata\/global-metadata\.dat$/, what: "IL2CPP metadata magic", test: (b) => b.subarray(0, 4).equals(IL2CPP_MAGIC) }],
  },
  {
    id: "xamarin",
    name: "Xamarin / .NET for Android",
    files: [/^lib\/[^/]+\/libmonodroid\.so$/, /^assemblies\/[^/]+\.dll$/, /^assemblies\/assemblies\.blob$/, /^lib\/[^/]+\/libassemblies\.[^/]+\.blob\.so$/],
    magics: [
      { entry: /^assemblies\/assemblies\.blob$/, what: "assembly store magic XABA", test: (b) => b.subarray(0, 4).toString("latin1") === "XABA" },
      { entry: /^assemblies\/[^/]+\.dll$/, what: "compressed assembly magic XALZ or PE header MZ", test: (b) => ["XALZ", "MZ"].some((m) => b.subarray(0, m.length).toString("latin1") === m) },
    ],
  },
];

export function frameworkFacts(zip: ZipArchive, limits: InspectLimits, budget: ReadBudget, facts: FactSet, lim: Limitations): void {
  const detected: string[] = [];
  for (const rule of RULES) {
    const files: string[] = [];
    for (const e of zip.entries) {
      if (files.length >= 8) break;
      if (rule.files.some((r) => r.test(e.name))) files.push(e.name);
    }
    if (files.length === 0) continue;
    let magic: string | null = null;
    for (const m of rule.magics) {
      const candidates: ZipEntry[] = zip.entries.filter((e) => m.entry.test(e.name)).slice(0, 4);
      for (const e of candidates) {
        const prefix = readEntryPrefix(zip, e, limits.prefixBytes, budget, lim);
        if (prefix !== null && m.test(prefix)) {
          magic = `${m.what} (${e.name})`;
          break;
        }
      }
      if (magic !== null) break;
    }
    const id = `framework.${rule.id}`;
    const value = { name: rule.name, files, content_magic: magic };
    if (magic !== null) facts.observed(id, value, `file names and content magic: ${magic}`);
    else facts.hypothesized(id, value, `file names only: ${files.join(", ")}`, ["zip.entries"]);
    detected.push(id);
  }
  facts.derived("frameworks.detected", detected, "framework.* facts present", detected);
}
