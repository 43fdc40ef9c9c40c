import { describe, expect, it } from "vitest";
import { checkClientName, mixesScripts, nameWarnings } from "./client-name";

describe("checkClientName", () => {
  it.each([
    ["a zero-width space", "Claude\u200b Code", "U+200B"],
    ["a zero-width joiner", "Claude\u200dCode", "U+200D"],
    ["a right-to-left override", "Safe\u202eevil", "U+202E"],
    ["a first-strong isolate", "Safe\u2068evil", "U+2068"],
    ["a soft hyphen", "Clau\u00adde", "U+00AD"],
    ["a variation selector", "Claude\ufe0f", "U+FE0F"],
    ["a tag character", "Claude\u{e0041}", "U+E0041"],
    // NFKC maps the compatibility filler U+3164 to U+1160, which is refused as itself.
    ["a Hangul filler", "Claude\u3164", "U+1160"],
    ["a combining grapheme joiner", "Cla\u034fude", "U+034F"],
    ["a line feed", "Claude\nCode", "U+000A"],
    ["a carriage return", "Claude\rCode", "U+000D"],
    ["a next-line (C1)", "Claude\u0085Code", "U+0085"],
    ["a line separator", "Claude\u2028Code", "U+2028"],
    ["a paragraph separator", "Claude\u2029Code", "U+2029"],
    ["an escape", "\u001b[31mAdmin", "U+001B"],
    ["a lone surrogate", "Claude\ud800", "U+D800"],
  ])("refuses %s, naming the code point", (_why, sent, code) => {
    const result = checkClientName(sent);
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.reason).toContain(code);
  });

  it("refuses an empty or over-long name, counted after NFKC", () => {
    expect(checkClientName("   ").ok).toBe(false);
    expect(checkClientName("n".repeat(201)).ok).toBe(false);
    // U+FDFA is one code unit that NFKC spells as 18 characters.
    expect(checkClientName("\ufdfa".repeat(12)).ok).toBe(false);
  });

  it("returns the NFKC form, trimmed", () => {
    expect(checkClientName("  \uff23\uff4c\uff41\uff55\uff44\uff45 Code  ")).toEqual({ ok: true, name: "Claude Code" });
    expect(checkClientName("\ufb01le tool")).toEqual({ ok: true, name: "file tool" });
    expect(checkClientName("MCP Inspector")).toEqual({ ok: true, name: "MCP Inspector" });
    expect(checkClientName("Café 2")).toEqual({ ok: true, name: "Café 2" });
  });
});

describe("mixesScripts", () => {
  it.each([
    ["Latin with a Cyrillic а", "P\u0430ypal"],
    ["Latin with a Greek ο", "Cl\u03bfude"],
    ["Cyrillic with a Latin o", "\u041c\u043eo\u0441\u043a\u0432\u0430"],
    ["Latin with Armenian", "Claud\u0565"],
    ["Latin with Han", "Claude \u4e2d"],
  ])("flags %s", (_why, name) => {
    expect(mixesScripts(name)).toBe(true);
  });

  it.each([
    ["plain Latin with digits and punctuation", "Claude Code 2.0 (beta)"],
    ["Latin with accents, precomposed and combining", "Cafe\u0301 Crème"],
    ["all Cyrillic", "\u041c\u043e\u0441\u043a\u0432\u0430"],
    ["all Greek", "\u0395\u03bb\u03bb\u03ac\u03b4\u03b1"],
    ["Japanese: Han, Hiragana, Katakana and the prolonged sound mark", "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u30fc"],
    ["Korean: Hangul with Han", "\ud55c\uad6d\u8a9e"],
    ["no letters at all", "1234 - _"],
  ])("does not flag %s", (_why, name) => {
    expect(mixesScripts(name)).toBe(false);
  });
});

describe("nameWarnings", () => {
  it("warns about mixed scripts and about a name sent in another form than shown, and about nothing else", () => {
    expect(nameWarnings("Claude Code", "Claude Code")).toEqual([]);
    expect(nameWarnings("Claude Code", null)).toEqual([]);
    expect(nameWarnings("Claude Code", "  Claude Code ")).toEqual([]);
    const mixed = nameWarnings("Cl\u03bfude Code", "Cl\u03bfude Code");
    expect(mixed).toHaveLength(1);
    expect(mixed[0]).toContain("mixes letters of different scripts");
    const folded = nameWarnings("Claude Code", "\uff23laude Code");
    expect(folded).toHaveLength(1);
    expect(folded[0]).toContain("NFKC");
    expect(folded[0]).toContain("\uff23laude Code");
  });
});
