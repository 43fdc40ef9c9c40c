import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { canonicalize } from "../canonical";
import { entryLine, exportLines, writeLinesToFile, type ExportEntry } from "./export-format";
import { hashLeaf } from "../trust/ledger/hash";
import { generateSignerKey } from "../trust/ledger/note";
import { buildLog, syntheticEntry, type BuiltLog } from "./testdata/log-builder";
import { runVerify } from "./verify-cli";
import { verifyExport, verifyExportLines } from "./verify";
import { addCosignature, cosign, generateCosignerKey } from "../trust/ledger/witness";
import { signCheckpoint } from "../trust/ledger/checkpoint";
import { rootAt } from "../trust/ledger/tree";

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
      finalCosigners: ["witness-a.leasehold.test"],
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
    expect(report.failure).toEqual({
      line: lineOfEntry(119) + 2,
      range: { from: 50, to: 119 },
      reason: "checkpoint at size 120: root mismatch — log rewritten at or before index 119, after checkpoint size 50",
    });
  });

  it("names the missing entries when the newest rows are deleted, without calling an absent entry the first bad index", async () => {
    const report = await verify(await exportOf(built, built.entries.slice(0, 290)));
    expect(report.failure).toMatchObject({ reason: expect.stringMatching(/checkpoint at size 300 follows only 290 entries: entries 290..299 are missing/) });
    expect(report.failure?.index).toBeUndefined();
    // The same deletion made by cutting lines out of the file.
    const cut = clean.filter((l) => !/"index":29[0-9],/.test(l));
    expect((await verify(cut)).failure).toMatchObject({ reason: expect.stringMatching(/entries 290..299 are missing/) });
    expect((await verify(cut)).failure?.index).toBeUndefined();
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
    expect((await verify(swappedLines)).failure).toEqual({ line: a + 1, reason: "expected entry 10, found entry 11: entry 10 is missing" });
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
    // 300 entries, 0..299: the message and the failure name no entry 300.
    const noEnd = (await verify(clean.slice(0, -1))).failure;
    expect(noEnd).toEqual({ line: clean.length, reason: "no end line: the export is truncated after entry 299" });
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
    expect(bad.text).toMatch(/FAILED: line \d+: expected entry 200, found entry 201: entry 200 is missing/);
    expect(bad.text).not.toMatch(/VERIFIED/);
  });

  it("exits 2 for an unusable key or file", async () => {
    expect((await run(join(dir, "missing.jsonl"), log.verifier)).code).toBe(2);
    expect((await run(join(dir, "clean.jsonl"), "not a key")).code).toBe(2);
    expect((await run(join(dir, "clean.jsonl"), log.verifier, ["bad witness"])).code).toBe(2);
  });
});

describe("verify against a supplied checkpoint (--checkpoint) and required witnesses (--witness)", () => {
  const checkpointAt = (size: number): string => built.checkpoints.find((c) => c.note.split("\n")[1] === String(size))!.note;
  /** The export cut right after the checkpoint at `size` (and its cosignatures), with an end line recomputed to match. */
  function truncatedAt(size: number): string[] {
    const last = lineOfEntry(size - 1) + 1;
    let end = last + 1;
    while (JSON.parse(clean[end]!).kind === "cosignature") end += 1;
    const kept = clean.slice(0, end);
    const count = (kind: string) => kept.filter((l) => JSON.parse(l).kind === kind).length;
    return [...kept, `${canonicalize({ checkpoints: count("checkpoint"), cosignatures: count("cosignature"), entries: size, kind: "end" })}\n`];
  }

  it("a log written by an older hub, holding checkpoint-witness/1 entries, still verifies with every entry schema-checked", async () => {
    const types = built.entries.map((e) => (JSON.parse(Buffer.from(e.bytes).toString("utf8")) as { type: string }).type);
    expect(types.filter((t) => t === "checkpoint-witness/1").length).toBeGreaterThan(0);
    expect(await verify(clean, { checkEntries: true, checkpoint: checkpointAt(300), witnessKeys: [witnessA.verifier, witnessB.verifier] })).toMatchObject({ ok: true });
  });

  it("a truncated export with a recomputed end line passes on its own (the limit of a file alone) but fails against a checkpoint saved later", async () => {
    const cut = truncatedAt(120);
    // Before --checkpoint this was the only check there was, and it accepts the cut file.
    expect(await verify(cut)).toMatchObject({ ok: true, entries: 120, latestCheckpoint: { size: 120 } });
    const report = await verify(cut, { checkpoint: checkpointAt(300) });
    expect(report.ok).toBe(false);
    expect(report.failure).toEqual({
      line: cut.length,
      reason:
        "the export holds 120 entries (its final checkpoint is at size 120), but the supplied checkpoint is at size 300: entries 120..299 are missing — the export was cut short or the log rolled back",
    });
  });

  it("accepts an export that extends the supplied checkpoint, also when the checkpoint carries cosignature lines", async () => {
    const supplied = addCosignature(checkpointAt(120), cosign(checkpointAt(120).slice(0, checkpointAt(120).lastIndexOf("\n\n") + 1), witnessA.signer, 1_750_000_500));
    const report = await verify(clean, { checkpoint: supplied });
    expect(report).toMatchObject({ ok: true, supplied: { size: 120 } });
    // A size the export never signed a checkpoint at is still checked against the rebuilt tree.
    const unsigned = signCheckpoint({ origin: ORIGIN, size: 77, root: await rootAt(77, built.store), extensions: [] }, log.signer);
    expect(await verify(clean, { checkpoint: unsigned })).toMatchObject({ ok: true, supplied: { size: 77 } });
    expect(await verify(clean, { checkpoint: checkpointAt(300) })).toMatchObject({ ok: true, supplied: { size: 300 } });
  });

  it("a supplied checkpoint from another history (a split view) fails, naming the interval", async () => {
    const other = signCheckpoint({ origin: ORIGIN, size: 200, root: new Uint8Array(32).fill(9), extensions: [] }, log.signer);
    const report = await verify(clean, { checkpoint: other });
    expect(report.ok).toBe(false);
    expect(report.failure).toMatchObject({ line: lineOfEntry(199) + 1, range: { from: 120, to: 199 }, reason: expect.stringMatching(/^not consistent with the supplied checkpoint: at size 200/) });
  });

  it("refuses a supplied checkpoint the log key did not sign", async () => {
    const forged = signCheckpoint({ origin: ORIGIN, size: 300, root: await rootAt(300, built.store), extensions: [] }, generateSignerKey(ORIGIN).signer);
    expect((await verify(clean, { checkpoint: forged })).failure).toMatchObject({ line: 0, reason: expect.stringMatching(/^supplied checkpoint: no signature from a trusted key/) });
  });

  it("--witness requires that witness's cosignature on the final checkpoint", async () => {
    const withoutB = built.checkpoints.map((c, i) => (i === built.checkpoints.length - 1 ? { ...c, cosignatures: c.cosignatures!.filter((x) => x.witnessKey !== witnessB.verifier) } : c));
    const lines = await collect(exportLines({ ...built.source, checkpoints: withoutB }));
    expect((await verify(lines, { witnessKeys: [witnessA.verifier] })).ok).toBe(true);
    const report = await verify(lines, { witnessKeys: [witnessA.verifier, witnessB.verifier] });
    expect(report.ok).toBe(false);
    expect(report.failure?.reason).toBe(
      `the final checkpoint (size 300) carries no cosignature by a witness given with --witness: witness-b.leasehold.test (key id ${witnessB.verifier.split("+")[1]}) last cosigned the checkpoint at size 120`,
    );
    const stranger = generateCosignerKey("witness-c.leasehold.test");
    expect((await verify(lines, { witnessKeys: [stranger.verifier] })).failure?.reason).toMatch(/witness-c\.leasehold\.test \(key id [0-9a-f]{8}\) cosigned no checkpoint in this export$/);
  });
});

describe("runVerify with --checkpoint and --witness", () => {
  const dir = mkdtempSync(join(tmpdir(), "leasehold-verify-cp-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = async (file: string, options: { witnessKeys?: string[]; checkpoint?: string } = {}) => {
    let text = "";
    const code = await runVerify(file, log.verifier, { write: (s: string) => (text += s) }, options);
    return { code, text };
  };

  it("prints what it proved, says 'witness key not supplied' only when none was given, and exits 1 on a truncated export", async () => {
    const file = join(dir, "clean.jsonl");
    await writeLinesToFile(file, exportLines(built.source));
    const none = await run(file);
    expect(none.text).toMatch(/0 verified, 8 unchecked \(witness key not supplied\)/);
    const given = await run(file, { witnessKeys: [witnessA.verifier] });
    expect(given.code).toBe(0);
    expect(given.text).not.toMatch(/witness key not supplied/);
    expect(given.text).toMatch(/cosignatures: {2}4 verified \(witness-a\.leasehold\.test\), 4 unchecked \(not by the witness given with --witness\)/);
    expect(given.text).toMatch(/final: {9}the final checkpoint \(size 300\) is cosigned by every witness given: witness-a\.leasehold\.test/);

    const latest = built.checkpoints.at(-1)!.note;
    const ok = await run(file, { checkpoint: latest });
    expect(ok.code).toBe(0);
    expect(ok.text).toMatch(/checkpoint: {4}consistent with the supplied checkpoint \(size 300/);

    const cut = join(dir, "cut.jsonl");
    const text = readFileSync(file, "utf8").split(/(?<=\n)/);
    const at = text.findIndex((l) => l.includes('"index":119,')) + 1;
    const kept = text.slice(0, at + 3); // checkpoint 120 and its two cosignatures
    writeFileSync(cut, [...kept, `${canonicalize({ checkpoints: 3, cosignatures: 6, entries: 120, kind: "end" })}\n`].join(""));
    const before = await run(cut);
    expect(before.code).toBe(0);
    const after = await run(cut, { checkpoint: latest });
    expect(after.code).toBe(1);
    expect(after.text).toMatch(/FAILED: line 131: the export holds 120 entries .* entries 120\.\.299 are missing/);
    expect(after.text).not.toMatch(/first bad index/);
    console.log(`leasehold verify on an export cut at size 120, no --checkpoint:\n${before.text}\nwith --checkpoint (size 300):\n${after.text}`);
  });

  it("exits 2 for a supplied checkpoint it cannot use, or a --witness key that is not a witness key", async () => {
    const file = join(dir, "clean.jsonl");
    expect((await run(file, { checkpoint: "not a note\n" })).code).toBe(2);
    expect((await run(file, { witnessKeys: [log.verifier] })).code).toBe(2);
  });
});

describe("end line forms: exports before passkey records, before grant assertions, and now", () => {
  const grantAssertion = {
    grantId: "00000000-0000-4000-8000-000000000001",
    credentialId: "AAAA",
    authenticatorData: "AAAA",
    clientDataJson: "AAAA",
    signature: "AAAA",
    nonce: "AAAA",
  };

  it("each form verifies, and the current one counts grant_assertion records", async () => {
    const withoutGrants = await collect(exportLines({ ...built.source, passkeys: [], assertions: [] }));
    expect(JSON.parse(withoutGrants.at(-1)!)).toEqual({ kind: "end", entries: 300, checkpoints: 4, cosignatures: 8, passkeys: 0, assertions: 0 });
    expect((await verify(withoutGrants)).ok).toBe(true);

    // A grant assertion whose grant/1 entry is not in the export is carried and checks nothing.
    const current = await collect(exportLines({ ...built.source, passkeys: [], assertions: [], grantAssertions: [grantAssertion] }));
    expect(JSON.parse(current.at(-2)!)).toMatchObject({ kind: "grant_assertion", grant_id: grantAssertion.grantId });
    expect(JSON.parse(current.at(-1)!)).toEqual({ kind: "end", entries: 300, checkpoints: 4, cosignatures: 8, passkeys: 0, assertions: 0, grant_assertions: 1 });
    const report = await verify(current);
    expect(report.failure).toBeNull();
    expect(report.approvals.signedGrants).toBe(0);
  });

  it("hostile: grant_assertion lines under an end line that does not count them fail", async () => {
    const current = await collect(exportLines({ ...built.source, passkeys: [], assertions: [], grantAssertions: [grantAssertion] }));
    const older = [...current.slice(0, -1), `${canonicalize({ kind: "end", entries: 300, checkpoints: 4, cosignatures: 8, passkeys: 0, assertions: 0 })}\n`];
    const report = await verify(older);
    expect(report.ok).toBe(false);
    expect(report.failure?.reason).toContain("the file has 1 grant_assertion records, but its end line counts none");
    const miscounted = [...current.slice(0, -1), `${canonicalize({ kind: "end", entries: 300, checkpoints: 4, cosignatures: 8, passkeys: 0, assertions: 0, grant_assertions: 2 })}\n`];
    expect((await verify(miscounted)).failure?.reason).toBe("end line promises 2 grant assertions; the file has 1");
  });
});
