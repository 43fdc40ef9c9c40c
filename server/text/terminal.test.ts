import { describe, expect, it } from "vitest";
import { describeInvisibleCharacters, escapeInvisible, logLine, hasInvisibleCharacters, hasTerminalControls, invisibleCharacterSpans, isInvisibleCodePoint, neutraliseOneLine, neutraliseTerminalBytes, neutraliseTerminalText } from "./index";

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

/**
 * The whole code space, against the property sets themselves: every code
 * point that is Default_Ignorable, Cf, Cc, Co, Cn, Cs, Zl, Zp or Bidi_Control
 * must come out as a visible escape in every notation, and every other code
 * point must come out as itself.
 */
describe("the full Unicode property sets, every code point from U+0000 to U+10FFFF", () => {
  const PROPERTIES: Array<[string, RegExp]> = [
    ["Default_Ignorable_Code_Point", /\p{Default_Ignorable_Code_Point}/u],
    ["Cf", /\p{Cf}/u],
    ["Cc", /\p{Cc}/u],
    ["Co", /\p{Co}/u],
    ["Cn", /\p{Cn}/u],
    ["Cs", /\p{Cs}/u],
    ["Zl", /\p{Zl}/u],
    ["Zp", /\p{Zp}/u],
    ["Bidi_Control", /\p{Bidi_Control}/u],
  ];
  const inSet = (ch: string): boolean => PROPERTIES.some(([, re]) => re.test(ch));
  /** Any raw member of the sets in a string (a lone surrogate included). */
  const ANY_RAW = new RegExp(`[${PROPERTIES.map(([, re]) => re.source).join("")}]`, "u");
  const hex = (cp: number): string => cp.toString(16);

  it("each member becomes its escape in both notations and nothing raw survives; every other code point is unchanged", () => {
    const wrong: string[] = [];
    const counts = new Map<string, number>(PROPERTIES.map(([name]) => [name, 0]));
    let escaped = 0;
    for (let cp = 0; cp <= 0x10ffff; cp += 1) {
      const ch = String.fromCodePoint(cp);
      const member = inSet(ch);
      const regex = escapeInvisible(`a${ch}b`);
      const named = escapeInvisible(`a${ch}b`, { notation: "named" });
      const multi = neutraliseTerminalText(`a${ch}b`);
      if (member) {
        escaped += 1;
        for (const [name, re] of PROPERTIES) if (re.test(ch)) counts.set(name, (counts.get(name) ?? 0) + 1);
        const token = cp <= 0xff ? `\\x${hex(cp).padStart(2, "0")}` : cp <= 0xffff ? `\\u${hex(cp).padStart(4, "0")}` : `\\u{${hex(cp)}}`;
        const keptAsLayout = cp === 0x09 || cp === 0x0a;
        if (regex.text !== `a${token}b` || !regex.controls) wrong.push(`U+${hex(cp)} regex → ${JSON.stringify(regex.text)}`);
        if (ANY_RAW.test(named.text) || !named.text.startsWith("a⟨") || !named.controls) wrong.push(`U+${hex(cp)} named → ${JSON.stringify(named.text)}`);
        if (keptAsLayout ? multi.text !== `a${ch}b` : multi.text !== `a${token}b`) wrong.push(`U+${hex(cp)} multi-line → ${JSON.stringify(multi.text)}`);
        if (!hasInvisibleCharacters(ch) || !isInvisibleCodePoint(cp)) wrong.push(`U+${hex(cp)} not detected`);
      } else {
        const bracket = cp === 0x27e6 || cp === 0x27e7 || cp === 0x27e8;
        if (regex.text !== `a${ch}b` || regex.controls || multi.text !== `a${ch}b`) wrong.push(`U+${hex(cp)} visible but changed`);
        if (!bracket && named.text !== `a${ch}b`) wrong.push(`U+${hex(cp)} visible but changed (named)`);
        if (hasInvisibleCharacters(ch) || isInvisibleCodePoint(cp)) wrong.push(`U+${hex(cp)} visible but detected`);
      }
      if (wrong.length > 20) break;
    }
    expect(wrong).toEqual([]);
    // Each property contributed (the engine's tables are present), e.g. all 6,400 + 131,068 private-use code points.
    expect(counts.get("Co")).toBe(137_468);
    for (const [name, count] of counts) expect(count, name).toBeGreaterThan(0);
    expect(escaped).toBeGreaterThan(900_000);
  });

  it("a string holding every member at once comes out with none of them raw", () => {
    let all = "";
    for (let cp = 0; cp <= 0x10ffff; cp += 1) {
      const ch = String.fromCodePoint(cp);
      if (inSet(ch)) all += ch;
    }
    for (const shown of [escapeInvisible(all).text, escapeInvisible(all, { notation: "named" }).text, escapeInvisible(all, { keep: "lf", notation: "named" }).text.replaceAll("\n", "")]) {
      expect(ANY_RAW.test(shown)).toBe(false);
    }
    // Multi-line keeps only TAB and LF as layout.
    expect(neutraliseTerminalText(all).text.replace(/[\t\n]/g, "")).not.toMatch(ANY_RAW);
  });

  it("ordinary text round-trips unchanged: accented letters (precomposed and combining), CJK, Arabic, Devanagari, emoji with skin tones", () => {
    const text = "Ça déjà vu — naïve e\u0301 日本語の文 中文 한국어 العربية हिन्दी Ελληνικά 👍🏽 🙂 ✓ €";
    expect(escapeInvisible(text)).toEqual({ text, controls: false });
    expect(escapeInvisible(text, { notation: "named" })).toEqual({ text, controls: false });
  });

  it("emoji ZWJ sequences and emoji presentation selectors are shown with their joiners and selectors escaped (U+200D and U+FE0F are Default_Ignorable)", () => {
    expect(neutraliseOneLine("👩\u200d💻 ❤\ufe0f").text).toBe("👩\\u200d💻 ❤\\ufe0f");
  });

  it("the refusal message names each code point and its position", () => {
    expect(describeInvisibleCharacters("r\u200bm \u{e0041}")).toBe("U+200B at 2, U+E0041 at 5");
    expect(describeInvisibleCharacters("\u200b".repeat(10), 2)).toBe("U+200B at 1, U+200B at 2 and 8 more");
  });
});

describe("logLine: the hub's own log lines", () => {
  it("hostile: an error message carrying an ESC sequence, a newline that would forge a second line and a bidi override is one visible line", () => {
    const line = logLine("leasehold: mcp tool run_command failed: host web\u202e1 \x1b[2K\nleasehold: all good");
    expect(line).toBe("leasehold: mcp tool run_command failed: host web\\u202e1 \\x1b[2K\\x0aleasehold: all good");
    expect(line).not.toMatch(/[\p{Cc}\p{Cf}]/u);
  });
});
