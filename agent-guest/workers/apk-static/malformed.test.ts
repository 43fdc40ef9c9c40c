// Hostile and broken archives: each is either refused as a whole with
// INVALID_ARGUMENT, or yields a bounded partial result that names what it
// could not read. Nothing here may crash the worker or grow its memory with
// the archive's claims.

import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crc32, deflateRawSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { LeaseholdError } from "../../../server/trust/leasehold-error";
import { Limitations } from "./facts";
import { inspectApk, inspectSource } from "./inspect";
import { DEFAULT_LIMITS } from "./limits";
import { BufferSource } from "./source";
import { apkFixtures } from "./test/fixtures";
import { writeZip } from "./test/zip-writer";
import { ReadBudget, openZip, readEntry } from "./zip";

let minimal: Buffer;
let manifestBytes: Buffer;
beforeAll(async () => {
  minimal = readFileSync((await apkFixtures()).minimal);
  const lim = new Limitations();
  const zip = openZip(new BufferSource(minimal), DEFAULT_LIMITS, lim);
  manifestBytes = readEntry(zip, zip.byName.get("AndroidManifest.xml")!, DEFAULT_LIMITS, new ReadBudget(1 << 20), lim)!;
}, 300_000);

function refusal(buf: Buffer, limits = {}): LeaseholdError {
  try {
    inspectSource(new BufferSource(buf), { limits });
  } catch (err) {
    if (err instanceof LeaseholdError) return err;
    throw err;
  }
  throw new Error("the input was accepted");
}

const apk = (entries: Parameters<typeof writeZip>[0], opts?: Parameters<typeof writeZip>[1]) => inspectSource(new BufferSource(writeZip(entries, opts)));

describe("refused inputs (INVALID_ARGUMENT)", () => {
  it("a text file, an empty file and a truncated APK are not ZIP archives", () => {
    for (const buf of [Buffer.from("definitely not a zip file, just text\n".repeat(10)), Buffer.alloc(0), minimal.subarray(0, minimal.length - 30)]) {
      const err = refusal(buf);
      expect(err.code).toBe("INVALID_ARGUMENT");
      expect(err.message).toMatch(/not a ZIP archive/);
    }
  });

  it("an APK whose front was cut off (central directory offset beyond the data) is refused", () => {
    const err = refusal(minimal.subarray(1000));
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.message).toMatch(/central directory/);
  });

  it("more entries than the cap is refused before the directory is read", () => {
    const entries = Array.from({ length: 20 }, (_, i) => ({ name: `f${i}`, data: "x" }));
    expect(refusal(writeZip(entries), { maxEntries: 10 }).message).toMatch(/declares 20 entries; the limit is 10/);
  });

  it("a path that does not exist is an error of its own, not a crash", () => {
    expect(() => inspectApk(join(tmpdir(), "no-such-apk-here.apk"))).toThrow(/ENOENT/);
  });
});

describe("bounded partial results", () => {
  it("a compression-ratio bomb as AndroidManifest.xml is not inflated", () => {
    const before = process.memoryUsage().rss;
    const r = apk([{ name: "AndroidManifest.xml", data: Buffer.alloc(6 * 1024 * 1024) }]);
    expect(r.limitations.join("\n")).toMatch(/AndroidManifest\.xml" declares a compression ratio above 200:1; not inflated/);
    expect(r.facts.find((f) => f.id === "package.name")).toBeUndefined();
    const huge = apk([{ name: "AndroidManifest.xml", data: Buffer.alloc(64 * 1024 * 1024) }]);
    expect(huge.limitations.join("\n")).toMatch(/AndroidManifest\.xml" is 67108864 bytes; entries above 8388608 are not read whole/);
    // The 64 MiB the entry claims were never materialised by the reader.
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  });

  it("an entry that inflates past its declared size is refused, not trusted", () => {
    const r = apk([{ name: "AndroidManifest.xml", data: Buffer.alloc(100_000), declaredSize: 100 }]);
    expect(r.limitations.join("\n")).toMatch(/does not inflate to its declared 100 bytes/);
  });

  it("central records that point at another entry's local header are refused by the local-name check", () => {
    const body = { name: "lib/arm64-v8a/lib0.so", data: Buffer.alloc(8 * 1024 * 1024) };
    const copies = Array.from({ length: 50 }, (_, i) => ({ name: `lib/arm64-v8a/lib${i + 1}.so`, data: body.data, sharesDataOf: 0 }));
    const text = apk([body, ...copies]).limitations.join("\n");
    expect(text).toMatch(/ZIP entries overlap/);
    expect(text).toMatch(/"lib\/arm64-v8a\/lib1\.so": the local header names a different file; not read/);
  });

  it("1500 small deflated libraries that each claim 8 MiB exhaust the run's read budget, and the rest are skipped", () => {
    const zeros = Buffer.alloc(8 * 1024 * 1024);
    const precompressed = { body: deflateRawSync(zeros), size: zeros.length, crc: crc32(zeros) };
    const libs = Array.from({ length: 1500 }, (_, i) => ({ name: `lib/arm64-v8a/lib${i}.so`, data: "", precompressed }));
    const r = inspectSource(new BufferSource(writeZip(libs)), { limits: { maxTotalInflatedBytes: 16 * 1024 * 1024 } });
    expect(r.limitations.join("\n")).toMatch(/read budget exhausted; later entries are not examined/);
    const a = r.facts.find((f) => f.id === "native.alignment_16k")!.value as { unknown: unknown[] };
    expect(a.unknown.length).toBeGreaterThan(1400);
  });

  it("duplicate entry names: the first of each is read, the duplicates are listed", () => {
    const lib = { name: "lib/arm64-v8a/libdup.so", data: Buffer.from("not an elf"), method: 0 as const };
    const r = apk([{ name: "AndroidManifest.xml", data: manifestBytes }, { name: "AndroidManifest.xml", data: "shadow" }, lib, lib]);
    expect(r.facts.find((f) => f.id === "zip.entries")!.value).toMatchObject({ count: 4, duplicate_names: ["AndroidManifest.xml", "lib/arm64-v8a/libdup.so"] });
    expect(r.facts.find((f) => f.id === "package.name")!.value).toBe("org.leasehold.fixture.minimal");
    expect(r.facts.filter((f) => f.id.startsWith("native.lib:"))).toHaveLength(1);
    expect(r.limitations.join("\n")).toMatch(/duplicate entry names/);
  });

  it("a CRC mismatch makes the entry unread", () => {
    const r = apk([{ name: "AndroidManifest.xml", data: manifestBytes, crc: 0x12345678 }]);
    expect(r.limitations.join("\n")).toMatch(/AndroidManifest\.xml.*fails its CRC-32 check/);
  });

  it("bad binary XML gives a limitation and no manifest facts", () => {
    const r = apk([{ name: "AndroidManifest.xml", data: "<manifest package='text.not.binary'/>" }]);
    expect(r.limitations.join("\n")).toMatch(/not valid binary XML/);
    expect(r.facts.some((f) => f.id.startsWith("package."))).toBe(false);
  });

  it("a string in the pool claiming 2^31 UTF-16 units is refused by the string bound", () => {
    const bad = Buffer.from(manifestBytes);
    const poolHeader = bad.readUInt16LE(8 + 2);
    const flags = bad.readUInt32LE(8 + 16);
    const stringsStart = bad.readUInt32LE(8 + 20);
    const first = 8 + stringsStart + bad.readUInt32LE(8 + poolHeader);
    if ((flags & 0x100) !== 0) {
      bad[first] = 0x7f; // UTF-16 length
      bad[first + 1] = 0xff; // UTF-8 length, two-byte form high half …
      bad[first + 2] = 0xff; // … 32767 bytes
    } else {
      bad.writeUInt16LE(0xffff, first);
      bad.writeUInt16LE(0xffff, first + 2);
    }
    const r = apk([{ name: "AndroidManifest.xml", data: bad }]);
    expect(r.limitations.join("\n")).toMatch(/not valid binary XML: string .*(exceeds the limit|runs past the pool)/);
  });

  it("a truncated binary manifest (half the bytes) is reported, not parsed past its end", () => {
    const r = apk([{ name: "AndroidManifest.xml", data: manifestBytes.subarray(0, manifestBytes.length >> 1) }]);
    expect(r.limitations.join("\n")).toMatch(/not valid binary XML: declares \d+ bytes, has \d+ \(truncated\)/);
  });

  it("path-traversal, absolute and backslash names are listed as facts and never touch the filesystem", () => {
    const cwd = mkdtempSync(join(tmpdir(), "apk-traversal-"));
    const names = ["../../escape.so", "/etc/passwd", "lib\\..\\x.so", "lib/arm64-v8a/../../../up.so", "AndroidManifest.xml"];
    const file = join(cwd, "in.apk");
    writeFileSync(file, writeZip(names.map((name) => ({ name, data: name === "AndroidManifest.xml" ? manifestBytes : "payload" }))));
    const r = inspectApk(file);
    const entries = r.facts.find((f) => f.id === "zip.entries")!.value as { unsafe_names: string[] };
    expect(entries.unsafe_names).toEqual(names.slice(0, 4));
    expect(r.limitations.join("\n")).toMatch(/4 entry names are absolute, contain "\.\.", a backslash or NUL/);
    // Manifest facts still come through, and nothing was written beside the input.
    expect(r.facts.find((f) => f.id === "package.name")!.value).toBe("org.leasehold.fixture.minimal");
    expect(readdirSync(cwd)).toEqual(["in.apk"]);
    rmSync(cwd, { recursive: true });
  });

  it("encrypted and unknown-method entries are reported unread", () => {
    const r = apk([
      { name: "AndroidManifest.xml", data: manifestBytes, flags: 0x801 },
      { name: "META-INF/CERT.RSA", data: "x", methodField: 99, method: 0 },
    ]);
    const text = r.limitations.join("\n");
    expect(text).toMatch(/AndroidManifest\.xml" is encrypted/);
    expect(text).toMatch(/META-INF\/CERT\.RSA" uses compression method 99/);
  });

  it("a ZIP64 archive is read through its ZIP64 end records", () => {
    const r = apk([{ name: "AndroidManifest.xml", data: manifestBytes }], { zip64: true });
    expect(r.facts.find((f) => f.id === "zip.entries")!.value).toMatchObject({ zip64: true, count: 1 });
    expect(r.facts.find((f) => f.id === "package.name")!.value).toBe("org.leasehold.fixture.minimal");
  });

  it("a garbage PKCS#7 file and a signing-block magic with an impossible size are limitations", () => {
    const body = writeZip([
      { name: "AndroidManifest.xml", data: manifestBytes },
      { name: "META-INF/CERT.RSA", data: Buffer.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff]) },
    ]);
    const r = inspectSource(new BufferSource(body));
    expect(r.limitations.join("\n")).toMatch(/META-INF\/CERT\.RSA: PKCS#7 not parsed/);

    // Insert a forged footer (size 2^40) just before the central directory.
    const lim = new Limitations();
    const zip = openZip(new BufferSource(body), DEFAULT_LIMITS, lim);
    const cd = zip.centralDirectoryOffset;
    const footer = Buffer.alloc(24);
    footer.writeBigUInt64LE(1n << 40n, 0);
    footer.write("APK Sig Block 42", 8, "latin1");
    const forged = Buffer.concat([body.subarray(0, cd), footer, body.subarray(cd)]);
    // Shift the EOCD's central-directory offset by the inserted bytes.
    forged.writeUInt32LE(cd + 24, forged.length - 22 + 16);
    const r2 = inspectSource(new BufferSource(forged));
    expect(r2.limitations.join("\n")).toMatch(/APK Signing Block declares \d+ bytes; not read/);
  });

  it("an ELF whose program headers point far beyond the file is reported unknown, not read", () => {
    const elf = Buffer.alloc(64);
    elf.writeUInt32BE(0x7f454c46, 0);
    elf[4] = 2;
    elf[5] = 1;
    elf.writeBigUInt64LE(1n << 40n, 32);
    elf.writeUInt16LE(56, 54);
    elf.writeUInt16LE(3, 56);
    const r = apk([{ name: "lib/arm64-v8a/libevil.so", data: elf, method: 0 }]);
    const a = r.facts.find((f) => f.id === "native.alignment_16k")!.value as { unknown: { reason: string }[] };
    expect(a.unknown[0]!.reason).toMatch(/program headers .* beyond the bytes read/);
  });
});
