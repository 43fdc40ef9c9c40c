import { describe, expect, it } from "vitest";
import { LeaseholdError } from "../errors";
import { assertPatternVisible, escapeRegExp } from "./propose";

describe("allow similar: the proposed pattern shows every character it matches", () => {
  it("metacharacters are escaped, and invisible, bidi and control characters are written as regex escapes", () => {
    const subject = "cp ftm\u202eexe.sh /tmp && r\u200bm -rf x\u{e0041}\tz";
    const pattern = escapeRegExp(subject);
    expect(pattern).toBe(String.raw`cp ftm\u202eexe\.sh \/tmp && r\u200bm -rf x\u{e0041}\x09z`);
    // Still the narrowest grant: it matches exactly the subject, as the grant matcher compiles it.
    expect(new RegExp(`^(?:${pattern})$`, "u").test(subject)).toBe(true);
    expect(new RegExp(`^(?:${pattern})$`, "u").test("cp ftmexe.sh /tmp && rm -rf x\tz")).toBe(false);
  });

  it("a pattern holding such a character as itself is refused; written as an escape it is accepted", () => {
    expect(() => assertPatternVisible("r\u200bm -rf x")).toThrow(LeaseholdError);
    expect(() => assertPatternVisible("ftm\u202eexe")).toThrow(/\\u202e/);
    expect(() => assertPatternVisible("a\nb")).toThrow(LeaseholdError);
    expect(() => assertPatternVisible(String.raw`r\u200bm -rf x|ftm\u202eexe`)).not.toThrow();
    expect(() => assertPatternVisible("clé ✓ 日本")).not.toThrow();
  });
});
