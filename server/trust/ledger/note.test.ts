import { describe, expect, it } from "vitest";
import {
  SIGNATURE_TYPE,
  computeKeyId,
  generateSignerKey,
  parseNote,
  parseSignerKey,
  parseVerifierKey,
  signNote,
  verifyNote,
  type VerifierKey,
} from "./note";

// The example in c2sp.org/signed-note ("Verifier keys" section): an outside vector.
const SPEC_VKEY = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k";
const SPEC_NOTE =
  "This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n";

function vkey(text: string): VerifierKey {
  const parsed = parseVerifierKey(text);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.key;
}

describe("signed-note keys", () => {
  it("parses the spec's verifier key and verifies the spec's note", () => {
    const key = vkey(SPEC_VKEY);
    expect(key).toMatchObject({ name: "example.com/foo", keyIdHex: "530d903a", type: SIGNATURE_TYPE.ed25519 });
    const result = verifyNote(SPEC_NOTE, [key]);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.note.text).toBe("This is an example message.\n");
  });

  it("generates keys whose text forms round-trip and agree", () => {
    const { signer, verifier } = generateSignerKey("log.example/leasehold");
    expect(signer).toMatch(/^PRIVATE\+KEY\+log\.example\/leasehold\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    expect(verifier).toMatch(/^log\.example\/leasehold\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    const s = parseSignerKey(signer);
    const v = parseVerifierKey(verifier);
    expect(s.ok && v.ok).toBe(true);
    if (!s.ok || !v.ok) return;
    expect(s.key.verifierText).toBe(verifier);
    expect(Buffer.from(s.key.publicKey)).toEqual(Buffer.from(v.key.publicKey));
    expect(Buffer.from(computeKeyId("log.example/leasehold", 1, v.key.publicKey)).toString("hex")).toBe(v.key.keyIdHex);
    const note = signNote("hello\n", signer);
    expect(verifyNote(note, [v.key]).ok).toBe(true);
  });

  it.each([
    ["two parts", "example.com/foo+530d903a"],
    ["wrong key id", SPEC_VKEY.replace("530d903a", "530d903b")],
    ["uppercase key id", SPEC_VKEY.replace("530d903a", "530D903A")],
    ["non-canonical base64", SPEC_VKEY.replace("3U2k", "3U2l")],
    ["short key", "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U0="],
    ["unknown type", "example.com/foo+530d903a+B0kyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"],
    ["space in name", "example .com+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"],
    ["empty name", "+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"],
  ])("rejects a verifier key with %s", (_, text) => {
    expect(parseVerifierKey(text).ok).toBe(false);
  });

  it("rejects malformed signer keys and names", () => {
    const { signer } = generateSignerKey("a");
    expect(parseSignerKey(signer.replace("PRIVATE+KEY", "PUBLIC+KEY")).ok).toBe(false);
    expect(parseSignerKey(signer.replace(/\+[0-9a-f]{8}\+/, "+00000000+")).ok).toBe(false);
    expect(() => generateSignerKey("has space")).toThrow();
    expect(() => generateSignerKey("a+b")).toThrow();
  });
});

describe("signed-note parsing and verification", () => {
  const log = generateSignerKey("log.example");
  const other = generateSignerKey("other.example");
  const logKey = vkey(log.verifier);
  const otherKey = vkey(other.verifier);
  const note = signNote("line one\n\nline three\n", log.signer);

  it("splits the text at the last blank line", () => {
    const parsed = parseNote(note);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) {
      expect(parsed.note.text).toBe("line one\n\nline three\n");
      expect(parsed.note.signatures).toHaveLength(1);
    }
  });

  it("ignores unknown signatures but requires a trusted one", () => {
    const cosigned = `${note}${signNote("line one\n\nline three\n", other.signer).split("\n").at(-2)}\n`;
    expect(verifyNote(cosigned, [logKey]).ok).toBe(true);
    expect(verifyNote(cosigned, [otherKey]).ok).toBe(true);
    expect(verifyNote(note, [otherKey])).toMatchObject({ ok: false, reason: "no signature from a trusted key" });
  });

  it("rejects the whole note when a known key's signature fails", () => {
    const forged = note.replace(/ [A-Za-z0-9+/]{8}/, (m) => ` ${m.slice(1, 5)}AAAA`);
    expect(verifyNote(forged, [logKey]).ok).toBe(false);
  });

  it.each([
    ["no final newline", note.slice(0, -1)],
    ["a carriage return", note.replace("line one", "line one\r")],
    ["a tab", note.replace("line one", "line\tone")],
    ["no blank line", note.replace("\n\n—", "\n—")],
    ["no signatures", "text\n\n"],
    ["a hyphen instead of an em dash", note.replace("—", "-")],
    ["two spaces in a signature line", note.replace("— log.example ", "— log.example  ")],
    ["trailing garbage", `${note}junk\n`],
  ])("rejects a note with %s", (_, text) => {
    expect(verifyNote(text, [logKey]).ok).toBe(false);
  });

  it("rejects invalid UTF-8 given as bytes", () => {
    const bytes = Buffer.from(note, "utf8");
    bytes[0] = 0xff;
    expect(parseNote(bytes)).toMatchObject({ ok: false, reason: "note is not valid UTF-8" });
  });
});
