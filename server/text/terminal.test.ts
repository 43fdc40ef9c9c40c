import { describe, expect, it } from "vitest";
import { hasInvisibleCharacters, hasTerminalControls, invisibleCharacterSpans, isInvisibleCodePoint, neutraliseOneLine, neutraliseTerminalBytes, neutraliseTerminalText } from "./index";

// Any character a terminal would act on rather than show.
// eslint-disable-next-line no-control-regex -- the test looks for control characters
const RAW_CONTROL = /[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/;

describe("neutraliseTerminalText", () => {
  it.each([
    ["OSC 52 clipboard write", "a\x1b]52;c;cm0gLXJmIH4=\x07b", "a\\x1b]52;c;cm0gLXJmIH4=\\x07b"],
    ["window title with ST", "\x1b]0;owned\x1b\\", "\\x1b]0;owned\\x1b\\"],
    ["CSI colour and cursor moves", "\x1b[31mred\x1b[0m\x1b[2K\x1b[1A", "\\x1b[31mred\\x1b[0m\\x1b[2K\\x1b[1A"],
    ["8-bit CSI (U+009B)", "x\u009b31my", "x\\x9b31my"],
    ["NUL, backspace, BEL, DEL", "a\x00b\x08c\x07d\x7f", "a\\x00b\\x08c\\x07d\\x7f"],
    ["a bare CR that would overwrite the line", "rm -rf /\rls", "rm -rf /\\x0dls"],
    ["bidi override (trojan source)", "if (a \u202e) {}", "if (a \\u202e) {}"],
  ])("%s is escaped visibly and reported", (_name, input, expected) => {
    const r = neutraliseTerminalText(input);
    expect(r.text).toBe(expected);
    expect(r.controls).toBe(true);
    expect(RAW_CONTROL.test(r.text)).toBe(false);
    expect(hasTerminalControls(input)).toBe(true);
  });

  it("keeps TAB, LF, CRLF and ordinary Unicode, and reports nothing", () => {
    const text = "a\tb\r\nc\nclé ✓ 日本\n";
    expect(neutraliseTerminalText(text)).toEqual({ text, controls: false });
    expect(hasTerminalControls(text)).toBe(false);
  });

  it("bytes: invalid UTF-8 becomes U+FFFD and an ESC in raw output is escaped", () => {
    const r = neutraliseTerminalBytes(Buffer.from([0x61, 0xff, 0x1b, 0x5b, 0x32, 0x4a, 0x62]));
    expect(r).toEqual({ text: "a\ufffd\\x1b[2Jb", controls: true });
  });
});

describe("invisible and direction-changing characters, by Unicode property", () => {
  it.each([
    ["zero-width space (Cf)", "r\u200bm", "r\\u200bm"],
    ["zero-width joiner and word joiner (Cf)", "a\u200db\u2060c", "a\\u200db\\u2060c"],
    ["right-to-left override and isolates (Bidi_Control)", "ftm\u202eexe.sh \u2067x\u2069", "ftm\\u202eexe.sh \\u2067x\\u2069"],
    ["Arabic letter mark (Bidi_Control)", "a\u061cb", "a\\u061cb"],
    ["byte order mark and soft hyphen (Cf)", "\ufeffr\u00adm", "\\ufeffr\\xadm"],
    ["tag characters beyond the BMP (Cf)", "hi\u{e0041}\u{e0042}", "hi\\u{e0041}\\u{e0042}"],
    ["Hangul fillers (Default_Ignorable_Code_Point, letters by category)", "\u3164\u115f", "\\u3164\\u115f"],
    ["variation selector (Default_Ignorable_Code_Point)", "x\ufe0f", "x\\ufe0f"],
    ["line and paragraph separators (Zl, Zp)", "a\u2028b\u2029c", "a\\u2028b\\u2029c"],
    ["a lone surrogate (Cs)", "a\ud800b", "a\\ud800b"],
  ])("%s", (_name, input, expected) => {
    expect(neutraliseTerminalText(input)).toEqual({ text: expected, controls: true });
    expect(neutraliseOneLine(input)).toEqual({ text: expected, controls: true });
    expect(hasTerminalControls(input)).toBe(true);
    expect(hasInvisibleCharacters(input)).toBe(true);
  });

  it("one-line text escapes TAB, LF and CR too; multi-line text keeps them as layout", () => {
    expect(neutraliseOneLine("a\tb\nc\r\nd")).toEqual({ text: "a\\x09b\\x0ac\\x0d\\x0ad", controls: true });
    expect(neutraliseTerminalText("a\tb\nc\r\nd")).toEqual({ text: "a\tb\nc\r\nd", controls: false });
    expect(hasInvisibleCharacters("a\tb")).toBe(true);
    expect(hasTerminalControls("a\tb")).toBe(false);
  });

  it("visible letters, marks, symbols and spaces are left alone", () => {
    const text = "clé ✓ 日本 ﷺ e\u0301 \u00a0 🙂 👍🏽";
    expect(neutraliseOneLine(text)).toEqual({ text, controls: false });
    expect([..."aé✓日"].some((ch) => isInvisibleCodePoint(ch.codePointAt(0) ?? 0))).toBe(false);
  });

  it("the escaped form of a pattern is a regular expression matching the same text", () => {
    const subject = "rm\u200b -rf ftm\u202eexe \u{e0041}\x1b";
    expect(new RegExp(`^${neutraliseOneLine(subject).text}$`, "u").test(subject)).toBe(true);
  });

  it("spans point at each escaped character (CRLF and TAB are not spans)", () => {
    expect(invisibleCharacterSpans("a\u200bb\r\nc\t\u{e0041}")).toEqual([
      { start: 1, end: 2, codePoint: 0x200b },
      { start: 7, end: 9, codePoint: 0xe0041 },
    ]);
  });
});
