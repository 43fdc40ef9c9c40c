import { describe, expect, it } from "vitest";
import { formatCheckpoint, parseCheckpoint, parseSignedCheckpoint, signCheckpoint, verifyCheckpointNote, type Checkpoint } from "./checkpoint";
import { EMPTY_ROOT } from "./hash";
import { generateSignerKey } from "./note";

const root = new Uint8Array(32).map((_, i) => i);
const cp: Checkpoint = { origin: "leasehold.example/log", size: 20852163, root, extensions: [] };

describe("tlog-checkpoint body", () => {
  it("formats exactly three lines plus extensions", () => {
    expect(formatCheckpoint(cp)).toBe("leasehold.example/log\n20852163\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n");
    expect(formatCheckpoint({ ...cp, size: 0, root: EMPTY_ROOT, extensions: ["ext one"] })).toBe(
      "leasehold.example/log\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\next one\n",
    );
  });

  it("round-trips", () => {
    const parsed = parseCheckpoint(formatCheckpoint({ ...cp, extensions: ["a", "b c"] }));
    expect(parsed).toEqual({ ok: true, checkpoint: { ...cp, extensions: ["a", "b c"] } });
  });

  const body = formatCheckpoint(cp);
  it.each([
    ["a leading zero", body.replace("\n20852163\n", "\n020852163\n")],
    ["a plus sign", body.replace("\n20852163\n", "\n+20852163\n")],
    ["a size over 2^53", body.replace("\n20852163\n", "\n9007199254740993\n")],
    ["a 31-byte root", body.replace(/\n[^\n]+=\n$/, `\n${Buffer.alloc(31).toString("base64")}\n`)],
    ["a non-canonical root", body.replace("Hh8=", "Hh9=")],
    ["an empty origin", body.replace("leasehold.example/log", "")],
    ["an empty extension line", `${body}\n`],
    ["no final newline", body.slice(0, -1)],
    ["two lines", "origin\n5\n"],
    ["a space after the size", body.replace("\n20852163\n", "\n20852163 \n")],
  ])("rejects %s", (_, text) => {
    expect(parseCheckpoint(text).ok).toBe(false);
  });
});

describe("signed checkpoints", () => {
  const log = generateSignerKey("leasehold.example/log");
  const note = signCheckpoint(cp, log.signer);

  it("verify with the log's verifier key", () => {
    const result = verifyCheckpointNote(note, log.verifier);
    expect(result).toMatchObject({ ok: true, checkpoint: cp });
    expect(verifyCheckpointNote(note, log.verifier, { origin: "leasehold.example/log" }).ok).toBe(true);
    expect(verifyCheckpointNote(note, log.verifier, { origin: "other" }).ok).toBe(false);
    expect(parseSignedCheckpoint(note)).toMatchObject({ ok: true, checkpoint: cp });
  });

  it("fail with another key, or a cosignature key", () => {
    expect(verifyCheckpointNote(note, generateSignerKey("leasehold.example/log").verifier).ok).toBe(false);
    expect(verifyCheckpointNote(note, generateSignerKey("leasehold.example/log", 0x04).verifier).ok).toBe(false);
  });

  it("detect a change to any single byte of the note", () => {
    const bytes = Buffer.from(note, "utf8");
    const undetected: number[] = [];
    for (let i = 0; i < bytes.length; i++) {
      for (const mask of [0x01, 0x20]) {
        const copy = Buffer.from(bytes);
        copy[i] = (copy[i] as number) ^ mask;
        if (verifyCheckpointNote(copy, log.verifier).ok) undetected.push(i);
      }
    }
    expect(undetected).toEqual([]);
  });
});
