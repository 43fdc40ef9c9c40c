import { describe, expect, it } from "vitest";
import { hasTerminalControls, neutraliseTerminalBytes, neutraliseTerminalText } from "./index";

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
