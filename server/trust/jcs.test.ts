import { describe, expect, it } from "vitest";
import { JcsError, canonicalBytes, canonicalDigest, canonicalize, parseCanonical, sha256Digest, sha256Hex, tryCanonicalize } from "./jcs";

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

function sparseArray(): unknown[] {
  const holes: unknown[] = [];
  holes[0] = 1;
  holes[2] = 3;
  return holes;
}

describe("RFC 8785 canonicalization", () => {
  it("sorts object keys by UTF-16 code units, recursively, without whitespace", () => {
    // 😀 is stored as the surrogates D83D DE00, so it sorts before U+FB33 even
    // though its code point (U+1F600) is larger — the RFC's defining quirk.
    const value = { "\ufb33": 1, "😀": 2, "\u20ac": 3, "\u00f6": 4, "\u0080": 5, "1": 6, "\r": 7, b: { z: [3, { y: 1, x: 2 }], a: null } };
    expect(canonicalize(value)).toBe('{"\\r":7,"1":6,"b":{"a":null,"z":[3,{"x":2,"y":1}]},"\u0080":5,"ö":4,"€":3,"😀":2,"דּ":1}');
  });

  it.each([
    [0, "0"],
    [-0, "0"],
    [1, "1"],
    [-1.5, "-1.5"],
    [4.5, "4.5"],
    [0.002, "0.002"],
    [0.000001, "0.000001"],
    [1e-7, "1e-7"],
    [1e21, "1e+21"],
    [1e23, "1e+23"],
    [295147905179352830000, "295147905179352830000"],
    [Number("333333333.33333329"), "333333333.3333333"],
    [Number("9007199254740993"), "9007199254740992"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [-1e-10, "-1e-10"],
  ])("serialises the number %s as %s (ECMAScript Number::toString)", (value, text) => {
    expect(canonicalize(value)).toBe(text);
  });

  it("escapes only what RFC 8785 requires in strings", () => {
    const value = "\u0000\b\t\n\f\r\"\\/\u001f\u007f\u2028é😀";
    expect(canonicalize(value)).toBe('"\\u0000\\b\\t\\n\\f\\r\\"\\\\/\\u001f\u007f\u2028é😀"');
  });

  it("returns UTF-8 bytes", () => {
    expect(Buffer.from(canonicalBytes({ "€": "é" })).toString("hex")).toBe(Buffer.from('{"€":"é"}', "utf8").toString("hex"));
    expect(canonicalBytes([true, false, null])).toEqual(utf8("[true,false,null]"));
  });

  it.each([
    ["NaN", NaN, ""],
    ["Infinity", { a: [Infinity] }, "/a/0"],
    ["undefined property", { a: undefined }, "/a"],
    ["undefined", undefined, ""],
    ["function", { f: () => 1 }, "/f"],
    ["bigint", { n: 1n }, "/n"],
    ["symbol value", [Symbol("s")], "/0"],
    ["lone high surrogate", { s: "a\ud800b" }, "/s"],
    ["lone low surrogate in a key", { "\udc00": 1 }, "/\udc00"],
    ["Date", { d: new Date(0) }, "/d"],
    ["Map", new Map(), ""],
    ["boxed string", { s: Object("x") as object }, "/s"],
    ["sparse array", sparseArray(), "/1"],
    ["key with slash", { "a/b": { c: NaN } }, "/a~1b/c"],
  ])("rejects %s", (_, value, path) => {
    expect(() => canonicalize(value)).toThrow(JcsError);
    const result = tryCanonicalize(value);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.path).toBe(path);
  });

  it("rejects symbol keys and cycles", () => {
    expect(() => canonicalize({ [Symbol("k")]: 1 })).toThrow(/symbol keys/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalize(cyclic)).toThrow(/cyclic/);
    const shared = { x: 1 };
    expect(canonicalize({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it("accepts null-prototype objects and own __proto__ keys from JSON.parse", () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare.k = 1;
    expect(canonicalize(bare)).toBe('{"k":1}');
    expect(canonicalize(JSON.parse('{"__proto__":1}'))).toBe('{"__proto__":1}');
  });
});

describe("parseCanonical", () => {
  it("accepts canonical bytes", () => {
    expect(parseCanonical(utf8('{"a":[1,"x"],"b":null}'))).toEqual({ ok: true, value: { a: [1, "x"], b: null } });
  });

  it.each([
    ["whitespace", '{ "a":1}'],
    ["key order", '{"b":1,"a":2}'],
    ["number spelling", '{"a":1.0}'],
    ["exponent spelling", "1E3"],
    ["unneeded escape", '"\\u0041"'],
    ["duplicate keys", '{"a":1,"a":1}'],
    ["lone surrogate escape", '"\\ud800"'],
    ["not JSON", "{"],
  ])("rejects %s", (_, text) => {
    expect(parseCanonical(utf8(text)).ok).toBe(false);
  });

  it("rejects invalid UTF-8", () => {
    expect(parseCanonical(Uint8Array.of(0x22, 0xff, 0x22))).toEqual({ ok: false, reason: "not valid UTF-8" });
  });
});

describe("digests", () => {
  it("hash bytes, text and canonical JSON", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256Digest("abc")).toBe("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(canonicalDigest({ b: 1, a: 2 })).toBe(sha256Digest('{"a":2,"b":1}'));
  });
});
