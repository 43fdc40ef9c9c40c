// Framework detection on hand-made archives: a file name alone is a
// hypothesis; the framework's own content magic makes it an observation.

import { describe, expect, it } from "vitest";
import type { Fact } from "./facts";
import { inspectSource } from "./inspect";
import { BufferSource } from "./source";
import { EM_AARCH64, buildElf64 } from "./test/elf";
import { type WriteEntry, writeZip } from "./test/zip-writer";

const so = buildElf64({ machine: EM_AARCH64, loadAlign: 16384 });

function framework(entries: WriteEntry[], id: string): Fact | undefined {
  return inspectSource(new BufferSource(writeZip(entries))).facts.find((f) => f.id === id);
}

describe("frameworks by file signatures", () => {
  it("libflutter.so alone is hypothesized, from the entry list", () => {
    expect(framework([{ name: "lib/arm64-v8a/libflutter.so", data: so }], "framework.flutter")).toMatchObject({ state: "hypothesized", from: ["zip.entries"], value: { content_magic: null } });
  });

  it("Unity: libunity.so alone is hypothesized; IL2CPP with the global-metadata.dat magic is observed, a wrong magic is not", () => {
    expect(framework([{ name: "lib/arm64-v8a/libunity.so", data: so }], "framework.unity")).toMatchObject({ state: "hypothesized" });
    const metadata = "assets/bin/Data/Managed/Metadata/global-metadata.dat";
    const il2cpp = (magic: number[]) => framework([{ name: "lib/arm64-v8a/libil2cpp.so", data: so }, { name: metadata, data: Buffer.concat([Buffer.from(magic), Buffer.alloc(64)]) }], "framework.il2cpp");
    expect(il2cpp([0xaf, 0x1b, 0xb1, 0xfa])).toMatchObject({ state: "observed", value: { content_magic: expect.stringContaining("IL2CPP metadata magic") as unknown } });
    expect(il2cpp([0, 0, 0, 0])).toMatchObject({ state: "hypothesized" });
  });

  it("Xamarin: libmonodroid.so plus an XABA assembly store is observed", () => {
    const f = framework([{ name: "lib/arm64-v8a/libmonodroid.so", data: so }, { name: "assemblies/assemblies.blob", data: Buffer.concat([Buffer.from("XABA"), Buffer.alloc(60)]) }], "framework.xamarin");
    expect(f).toMatchObject({ state: "observed", value: { content_magic: expect.stringContaining("XABA") as unknown } });
  });

  it("React Native: a deflated Metro bundle with its prologue is observed through a prefix read", () => {
    const bundle = `var __BUNDLE_START_TIME__=this.nativePerformanceNow?nativePerformanceNow():Date.now();${"__d(function(){},0,[]);".repeat(20000)}`;
    const f = framework([{ name: "lib/arm64-v8a/libreactnativejni.so", data: so }, { name: "assets/index.android.bundle", data: bundle, method: 8 }], "framework.react_native");
    expect(f).toMatchObject({ state: "observed", value: { content_magic: expect.stringContaining("__BUNDLE_START_TIME__") as unknown } });
  });
});
