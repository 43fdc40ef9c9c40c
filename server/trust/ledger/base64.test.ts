import { describe, expect, it } from "vitest";
import { decodeBase64Strict, encodeBase64 } from "./base64";

describe("strict base64", () => {
  it("round-trips canonical text", () => {
    for (const length of [0, 1, 2, 3, 4, 31, 32, 33]) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 37) & 0xff);
      expect(decodeBase64Strict(encodeBase64(bytes))).toEqual(bytes);
    }
  });

  it.each([
    ["non-zero padding bits", "AB=="],
    ["missing padding", "AA"],
    ["URL-safe alphabet", "-_8="],
    ["whitespace", "AAAA AAAA"],
    ["a newline", "AAAA\n"],
    ["an invalid character", "AA*A"],
    ["excess padding", "AA==="],
  ])("rejects %s", (_, text) => {
    expect(decodeBase64Strict(text)).toBeUndefined();
  });
});
