import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { canonicalize } from "../canonical/jcs";
import { entryLine, exportLines, writeLinesToFile, type ExportEntry } from "./export-format";
import { hashLeaf } from "./hash";
import { generateSignerKey } from "./note";
import { buildLog, syntheticEntry, type BuiltLog } from "./testdata/log-builder";
import { runVerify } from "./verify-cli";
import { verifyExport, verifyExportLines } from "./verify";
import { generateCosignerKey } from "./witness";

const ORIGIN = "leasehold.test/log";
const log = generateSignerKey(ORIGIN);
const witnessA = generateCosignerKey("witness-a.leasehold.test");
const witnessB = generateCosignerKey("witness-b.leasehold.test");
const SIZES = [0, 50, 120, 300];

const built = buildLog({ origin: ORIGIN, logSigner: log.signer, logVerifier: log.verifier, size: 300, checkpointSizes: SIZES, witnesses: [witnessA, witnessB] });

/** The export as individual lines (the writer may yield several lines per chunk). */
async function collect(chunks: AsyncIterable<string>): Promise<string[]> {
  let text = "";
  for await (const chunk of chunks) text += chunk;
  return text.split(/(?<=\n)/);
}

async function exportOf(b: BuiltLog, entries: ExportEntry[] = b.entries): Promise<string[]> {
  return collect(exportLines({ ...b.source, entries }));
}

const verify = (lines: string[] | string, options = {}) =>
  verifyExport(typeof lines === "string" ? [lines] : [lines.join("")], log.verifier, options);

const clean = await exportOf(built);
const lineOfEntry = (i: number): number => clean.findIndex((l) => l.includes(`"index":${i},`));

describe("export format", () => {
  it("writes header, interleaved checkpoints and cosignatures, entries and an end line", () => {
    expect(JSON.parse(clean[0]!)).toEqual({ format: "leasehold-ledger-export/1", origin: ORIGIN, log_key: log.verifier });
    expect(JSON.parse(clean[1]!).kind).toBe("checkpoint");
    expect(JSON.parse(clean.at(-1)!)).toEqual({ kind: "end", entries: 300, checkpoints: 4, cosignatures: 8 });
    expect(clean).toHaveLength(1 + 300 + 4 * 3 + 1);
    // The checkpoint at 50 comes right after entry 49, followed by its cosignatures.
    const at = lineOfEntry(49);
    expect(JSON.parse(clean[at + 1]!).kind).toBe("checkpoint");
    expect(JSON.parse(clean[at + 2]!).kind).toBe("cosignature");
    for (const line of clean) expect(line).toBe(`${canonicalize(JSON.parse(line))}\n`);
  });

  it("hand-written entry lines are canonical JSON", () => {
    const line = entryLine(12, syntheticEntry(12), hashLeaf(syntheticEntry(12)));
    expect(line).toBe(`${canonicalize(JSON.parse(line))}\n`);
  });
});

describe("verifyExport", () => {
  it("accepts an untouched export and reports what it checked", async () => {
    const report = await verify(clean, { witnessKeys: [witnessA.verifier] });
    expect(report).toMatchObject({
      ok: true,
      origin: ORIGIN,
      entries: 300,
      checkpointsVerified: 4,
      latestCheckpoint: { size: 300 },
      cosignatures: { verified: 4, unchecked: 4, witnesses: ["witness-a.leasehold.test"] },
      failure: null,
    });
  });

  it("accepts lines and byte chunks split anywhere", async () => {
    expect((await verifyExportLines(clean.map((l) => l.slice(0, -1)), log.verifier)).ok).toBe(true);
    const bytes = Buffer.from(clean.join(""));
    const chunks = Array.from({ length: Math.ceil(bytes.length / 333) }, (_, i) => bytes.subarray(i * 333, (i + 1) * 333));
    expect((await verifyExport(chunks, log.verifier)).ok).toBe(true);
  });

  it("refuses the wrong log key", async () => {
    const report = await verifyExport([clean.join("")], generateSignerKey(ORIGIN).verifier);
    expect(report.ok).toBe(false);
    expect(report.failure).toMatchObject({ line: 1, reason: expect.stringMatching(/declares log key/) });
  });

  it("names the entry whose bytes were edited", async () => {
    const tampered = [...clean];
    const at = lineOfEntry(57);
    const record = JSON.parse(tampered[at]!) as { entry: string };
    const bytes = Buffer.from(record.entry, "base64");
    bytes[40] = (bytes[40] as number) ^ 0x01;
    tampered[at] = tampered[at]!.replace(record.entry, bytes.toString("base64"));
    const report = await verify(tampered);
    expect(report.failure).toEqual({ line: at + 1, index: 57, reason: "entry 57: bytes do not hash to the integrated leaf hash" });
  });

  it("names the first index when rows were edited in the database", async () => {
    const entries = built.entries.map((e) => (e.index === 57 ? { ...e, bytes: syntheticEntry(9999) } : e));
    const report = await verify(await exportOf(built, entries));
    expect(report.failure).toMatchObject({ index: 57, reason: "entry 57: bytes do not hash to the integrated leaf hash" });
  });

  it("locates a rewrite that also recomputed the leaf hash to the checkpoint interval", async () => {
    const entries = built.entries.map((e) => {
      if (e.index !== 70) return e;
      const bytes = syntheticEntry(7070);
      return { ...e, bytes, leafHash: hashLeaf(bytes) };
    });
    const report = await verify(await exportOf(built, entries));
    expect(report.failure).toMatchObject({
      index: 119,
      reason: "checkpoint at size 120: root mismatch — log rewritten at or before index 119, after checkpoint size 50",
    });
  });

  it("names the first missing index when the newest rows are deleted", async () => {
    const report = await verify(await exportOf(built, built.entries.slice(0, 290)));
    expect(report.failure).toMatchObject({ index: 290, reason: expect.stringMatching(/checkpoint at size 300 follows only 290 entries: entries 290..299 are missing/) });
    // The same deletion made by cutting lines out of the file.
    const cut = clean.filter((l) => !/"index":29[0-9],/.test(l));
    expect((await verify(cut)).failure).toMatchObject({ index: 290 });
  });

  it("names the first index when a middle row is deleted, rows are reordered or a row is inserted", async () => {
    const deleted = built.entries.filter((e) => e.index !== 33).map((e, i) => ({ ...e, index: i, leafHash: built.entries[i]!.leafHash }));
    expect((await verify(await exportOf(built, deleted))).failure).toMatchObject({ index: 33 });

    const reordered = built.entries.map((e, i) => (i === 10 ? { ...built.entries[11]!, index: 10, leafHash: e.leafHash } : i === 11 ? { ...built.entries[10]!, index: 11, leafHash: e.leafHash } : e));
    expect((await verify(await exportOf(built, reordered))).failure).toMatchObject({ index: 10, reason: "entry 10: bytes do not hash to the integrated leaf hash" });

    const inserted = [...built.entries.slice(0, 20), { index: 20, bytes: syntheticEntry(5000), leafHash: built.entries[20]!.leafHash }, ...built.entries.slice(20).map((e) => ({ ...e, index: e.index + 1 }))];
    expect((await verify(await exportOf(built, inserted))).failure).toMatchObject({ index: 20 });

    const swappedLines = [...clean];
    const a = lineOfEntry(10);
    [swappedLines[a], swappedLines[a + 1]] = [swappedLines[a + 1]!, swappedLines[a]!];
    expect((await verify(swappedLines)).failure).toMatchObject({ line: a + 1, index: 10, reason: expect.stringMatching(/expected entry 10, found entry 11/) });
  });

  it("schema-checks entries only when asked", async () => {
    const raw = buildLog({ origin: ORIGIN, logSigner: log.signer, logVerifier: log.verifier, size: 4, checkpointSizes: [4], entryBytes: (i) => Buffer.from(`raw ${i}`) });
    const lines = await exportOf(raw);
    expect((await verify(lines)).ok).toBe(true);
    expect((await verify(lines, { checkEntries: true })).failure).toMatchObject({ index: 0, reason: expect.stringMatching(/^entry 0: not a valid ledger entry/) });
    expect((await verify(clean, { checkEntries: true })).ok).toBe(true);
  });

  it("rejects an altered checkpoint", async () => {
    const tampered = [...clean];
    const at = lineOfEntry(119) + 1;
    tampered[at] = tampered[at]!.replace("\\n120\\n", "\\n121\\n");
    expect((await verify(tampered)).failure).toMatchObject({ line: at + 1, reason: expect.stringMatching(/^checkpoint: signature by .* does not verify/) });
  });

  it("rejects an export whose tail lost its end line or entries after the last checkpoint", async () => {
    expect((await verify(clean.slice(0, -1))).failure).toMatchObject({ reason: "no end line: the export is truncated" });
    const extra = buildLog({ origin: ORIGIN, logSigner: log.signer, logVerifier: log.verifier, size: 20, checkpointSizes: [10] });
    expect((await verify(await exportOf(extra))).failure).toMatchObject({ index: 10, reason: "entries 10..19 are not covered by any signed checkpoint" });
  });

  it("detects a change to any single byte of a small export", async () => {
    const small = buildLog({ origin: ORIGIN, logSigner: log.signer, logVerifier: log.verifier, size: 5, checkpointSizes: [3, 5], witnesses: [witnessA] });
    const bytes = Buffer.from((await exportOf(small)).join(""));
    expect((await verifyExport([bytes], log.verifier)).ok).toBe(true);
    const undetected: number[] = [];
    for (let i = 0; i < bytes.length; i++) {
      const copy = Buffer.from(bytes);
      copy[i] = (copy[i] as number) ^ (i % 2 === 0 ? 0x01 : 0x04);
      if ((await verifyExport([copy], log.verifier)).ok) undetected.push(i);
    }
    expect(undetected).toEqual([]);
    // Deleting any single byte is caught too.
    for (let i = 0; i < bytes.length; i += 7) {
      const copy = Buffer.concat([bytes.subarray(0, i), bytes.subarray(i + 1)]);
      if ((await verifyExport([copy], log.verifier)).ok) undetected.push(-i);
    }
    expect(undetected).toEqual([]);
  });
});

describe("runVerify", () => {
  const dir = mkdtempSync(join(tmpdir(), "leasehold-verify-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function run(file: string, key: string, witnessKeys: string[] = []): Promise<{ code: number; text: string }> {
    let text = "";
    const code = await runVerify(file, key, { write: (s: string) => (text += s) }, { witnessKeys });
    return { code, text };
  }

  it("prints VERIFIED and exits 0 only for a clean export", async () => {
    const file = join(dir, "clean.jsonl");
    await writeLinesToFile(file, exportLines(built.source));
    const ok = await run(file, `${log.verifier}\n`, [witnessB.verifier]);
    expect(ok.code).toBe(0);
    expect(ok.text).toMatch(/VERIFIED/);
    expect(ok.text).toMatch(/4 verified \(witness-b\.leasehold\.test\), 4 unchecked/);

    const tamperedFile = join(dir, "tampered.jsonl");
    const tampered = [...clean];
    const at = lineOfEntry(200);
    tampered[at] = tampered[at]!.replace('"index":200,', '"index":201,');
    writeFileSync(tamperedFile, tampered.join(""));
    const bad = await run(tamperedFile, log.verifier);
    expect(bad.code).toBe(1);
    expect(bad.text).toMatch(/FAILED: line \d+, first bad index 200: expected entry 200, found entry 201/);
    expect(bad.text).not.toMatch(/VERIFIED/);
  });

  it("exits 2 for an unusable key or file", async () => {
    expect((await run(join(dir, "missing.jsonl"), log.verifier)).code).toBe(2);
    expect((await run(join(dir, "clean.jsonl"), "not a key")).code).toBe(2);
    expect((await run(join(dir, "clean.jsonl"), log.verifier, ["bad witness"])).code).toBe(2);
  });
});
