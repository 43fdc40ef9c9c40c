import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { LeaseholdError } from "../index";
import { EvidenceEnvelope } from "../evidence/envelope";
import { builtinKinds, builtinPatterns, DLP_LIMITS, Scrubber, compileDlpPatterns, createScrubStream, scrubBuffer } from "./index";
import { ALL_CASES, CORPUS, FAKE, FAKE12, FAKE30 } from "./test/corpus";
import { DEFAULT_IGNORABLE } from "./scrubber";
// Deterministic (mulberry32), so a failing chunking can be replayed from its seed.
import { seededRandom as rng } from "../../../test/support/random";

const bytes = (v: string | Buffer) => (typeof v === "string" ? Buffer.from(v, "utf8") : v);


function scrubChunked(input: Buffer, cuts: number[], dlp?: unknown) {
  const s = new Scrubber(dlp === undefined ? {} : { dlp });
  const out: Buffer[] = [];
  let prev = 0;
  for (const c of [...cuts, input.length]) {
    out.push(s.push(input.subarray(prev, c)));
    prev = c;
  }
  out.push(s.end());
  return { output: Buffer.concat(out), report: s.report() };
}

function randomCuts(r: () => number, length: number, maxPieces: number): number[] {
  const n = Math.floor(r() * maxPieces);
  const cuts = Array.from({ length: n }, () => Math.floor(r() * (length + 1)));
  return cuts.sort((a, b) => a - b);
}

describe("scrub corpus", () => {
  it("has at least 60 cases, with near-misses", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(60);
    expect(CORPUS.filter((c) => c.count === 0).length).toBeGreaterThanOrEqual(25);
  });

  it.each(ALL_CASES.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const { output, report } = scrubBuffer(bytes(c.input));
    expect(output.toString("latin1")).toBe(bytes(c.expect).toString("latin1"));
    expect(report).toEqual({ count: c.count, kinds: c.kinds });
  });

  it.each(ALL_CASES.filter((c) => c.count > 0).map((c) => [c.name, c] as const))("split at every byte: %s", (_name, c) => {
    const input = bytes(c.input);
    const expected = bytes(c.expect);
    for (let cut = 0; cut <= input.length; cut++) {
      expect(scrubChunked(input, [cut]).output.equals(expected)).toBe(true);
    }
  });
});

describe("encoded variants of every token format", () => {
  const tokens = [FAKE.ghp, FAKE.glpat, FAKE.xoxb, FAKE.skLive, FAKE.aiza, FAKE.ya29, FAKE.jwt, FAKE.lh, FAKE.awsId,
    FAKE12.openaiProj, FAKE12.anthropic, FAKE12.npm, FAKE12.vault, FAKE12.sendgrid, FAKE12.digitalocean];
  const inserts = ["\x1b[0m", "\x1b[38;5;196m", "\x00", "\x07", "\x08", "\x1b(B"];
  it("an escape sequence or control byte inserted at any position is redacted with the token", () => {
    for (const t of tokens) {
      for (const ins of inserts) {
        for (let k = 1; k < t.length; k++) {
          const { output } = scrubBuffer(Buffer.from(`v ${t.slice(0, k)}${ins}${t.slice(k)}\n`, "latin1"));
          const text = output.toString("latin1");
          const piece = [...Array(t.length - 5).keys()].map((i) => t.slice(i, i + 6)).find((p) => text.includes(p));
          if (piece !== undefined) throw new Error(`${JSON.stringify(ins)} at ${k} in ${t.slice(0, 6)}…: ${JSON.stringify(text)}`);
        }
      }
    }
  });

  const more = [...tokens, FAKE30.lha, FAKE30.lhr, FAKE30.lhe, FAKE30.age, FAKE30.pypi];
  const leaks = (t: string, text: string) => [...Array(t.length - 5).keys()].map((i) => t.slice(i, i + 6)).find((p) => text.includes(p));

  it("a default-ignorable character (as UTF-8 or as a \\u escape) inserted at any position is redacted with the token", () => {
    const invisible = ["\u200b", "\u00ad", "\u2060", "\ufeff", "\u{e0041}", "\ufe0f", "\u180e", "\u034f", "\u3164"];
    for (const t of more) {
      for (const ins of [...invisible.map((c) => Buffer.from(c, "utf8").toString("latin1")), "\\u200b", "\\u00AD", "\\x00"]) {
        for (let k = 1; k < t.length; k++) {
          const text = scrubBuffer(Buffer.from(`v ${t.slice(0, k)}${ins}${t.slice(k)}\n`, "latin1")).output.toString("latin1");
          const piece = leaks(t, text);
          if (piece !== undefined) throw new Error(`${JSON.stringify(ins)} at ${k} in ${t.slice(0, 6)}…: ${JSON.stringify(text)}`);
        }
      }
    }
  });

  it("any one character of a token written as a \\uXXXX or \\xXX escape is redacted with the token, escape included", () => {
    for (const t of more) {
      for (let k = 0; k < t.length; k++) {
        const code = t.charCodeAt(k).toString(16);
        for (const esc of [`\\u${code.padStart(4, "0")}`, `\\x${code.padStart(2, "0")}`, `\\u${code.padStart(4, "0").toUpperCase()}`]) {
          const text = scrubBuffer(Buffer.from(`"${t.slice(0, k)}${esc}${t.slice(k + 1)}"`, "latin1")).output.toString("latin1");
          if (!/^"\[REDACTED:[a-z_0-9]+\]"$/.test(text)) throw new Error(`${esc} at ${k} in ${t.slice(0, 6)}…: ${JSON.stringify(text)}`);
        }
      }
    }
  });

  it("the ignorable set is exactly Unicode's Default_Ignorable_Code_Point, over the whole code space, and each one inside a token is dropped", () => {
    const di = /^\p{Default_Ignorable_Code_Point}$/u;
    let n = 0;
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const is = di.test(String.fromCodePoint(cp));
      if (is !== DEFAULT_IGNORABLE.has(cp)) throw new Error(`U+${cp.toString(16)}: property ${is}, scrubber ${DEFAULT_IGNORABLE.has(cp)}`);
      if (!is) continue;
      n++;
      const input = Buffer.from(`${FAKE30.lh.slice(0, 7)}${String.fromCodePoint(cp)}${FAKE30.lh.slice(7)}`, "utf8");
      expect(scrubBuffer(input).output.toString("latin1")).toBe("[REDACTED:leasehold_token]");
    }
    expect(n).toBeGreaterThan(4000);
  });

  it.each([["utf16le"], ["utf16be"]] as const)("written as %s, each is redacted and the text stays NUL-interleaved", (enc) => {
    for (const t of tokens) {
      let input = Buffer.from(`key: ${t}\n`, "utf16le");
      if (enc === "utf16be") input = Buffer.from(input).swap16();
      const { output, report } = scrubBuffer(input);
      expect(report.count).toBe(1);
      const le = enc === "utf16le" ? output : Buffer.from(output).swap16();
      expect(le.toString("utf16le")).toMatch(/^key: \[REDACTED:[a-z_0-9]+\]\n$/);
    }
  });
});

describe("streaming equals whole-text scrubbing", () => {
  const material = [
    ...ALL_CASES.map((c) => bytes(c.input)),
    Buffer.from(" \n\t"),
    Buffer.from("AKIA"),
    Buffer.from("-----BEGIN "),
    Buffer.from("\x1b[0m"),
    Buffer.from("\x1b]0;"),
    Buffer.from([0x1b]),
    Buffer.from([0]),
    Buffer.from("\x07"),
  ];

  it("for random documents under random chunkings (including 1-byte chunks)", () => {
    const r = rng(42);
    for (let iter = 0; iter < 300; iter++) {
      const pieces: Buffer[] = [];
      const n = 1 + Math.floor(r() * 12);
      for (let i = 0; i < n; i++) {
        if (r() < 0.2) pieces.push(Buffer.from(Array.from({ length: Math.floor(r() * 40) }, () => Math.floor(r() * 256))));
        else pieces.push(material[Math.floor(r() * material.length)] ?? Buffer.alloc(0));
      }
      const input = Buffer.concat(pieces);
      const whole = scrubBuffer(input);
      const cuts = iter % 10 === 0 ? Array.from({ length: input.length }, (_, i) => i) : randomCuts(r, input.length, 20);
      const chunked = scrubChunked(input, cuts);
      if (!chunked.output.equals(whole.output)) throw new Error(`seed 42 iteration ${iter}: stream differs from whole-text`);
      expect(chunked.report).toEqual(whole.report);
    }
  });

  it("at a cut too (end({ partial: true })), and a cut never releases more of a secret than the whole text", () => {
    const r = rng(1212);
    for (let iter = 0; iter < 300; iter++) {
      const pieces: Buffer[] = [];
      const n = 1 + Math.floor(r() * 8);
      for (let i = 0; i < n; i++) pieces.push(material[Math.floor(r() * material.length)] ?? Buffer.alloc(0));
      const full = Buffer.concat(pieces);
      // Cut the document anywhere: what is left must scrub the same whole or streamed.
      const input = full.subarray(0, Math.floor(r() * (full.length + 1)));
      const whole = new Scrubber();
      const wholeOut = Buffer.concat([whole.push(input), whole.end({ partial: true })]);
      const s = new Scrubber();
      const parts: Buffer[] = [];
      let prev = 0;
      for (const c of [...randomCuts(r, input.length, 12), input.length]) {
        parts.push(s.push(input.subarray(prev, c)));
        prev = c;
      }
      parts.push(s.end({ partial: true }));
      if (!Buffer.concat(parts).equals(wholeOut)) throw new Error(`seed 1212 iteration ${iter}: stream differs from whole-text at a cut`);
      expect(s.report()).toEqual(whole.report());
    }
  });

  it("with DLP patterns too", () => {
    const dlp = [
      { name: "ssn", pattern: "\\b\\d{3}-\\d{2}-\\d{4}\\b" },
      { name: "customer_id", pattern: "CUST-[0-9]{6}", flags: "i" },
    ];
    const r = rng(7);
    const parts = ["ssn 123-45-6789 ", "cust-000123", "1234-56-7890", FAKE.ghp, " x ", "123-45-678", "99"];
    for (let iter = 0; iter < 200; iter++) {
      const input = Buffer.from(Array.from({ length: 1 + Math.floor(r() * 10) }, () => parts[Math.floor(r() * parts.length)]).join(""));
      const whole = scrubBuffer(input, { dlp });
      const chunked = scrubChunked(input, randomCuts(r, input.length, 12), dlp);
      expect(chunked.output.toString("latin1")).toBe(whole.output.toString("latin1"));
      expect(chunked.report).toEqual(whole.report);
    }
    expect(scrubBuffer(Buffer.from("id 123-45-6789, CUST-004242"), { dlp }).output.toString()).toBe("id [REDACTED:ssn], [REDACTED:customer_id]");
  });

  it("an AWS secret split across chunks after an access key in an earlier chunk", () => {
    const input = Buffer.from(`${FAKE.awsId}\n${"x".repeat(100)} ${FAKE.awsSecret} tail`);
    const expected = `[REDACTED:aws_access_key]\n${"x".repeat(100)} [REDACTED:aws_secret_key] tail`;
    for (let cut = 0; cut <= input.length; cut += 3) {
      expect(scrubChunked(input, [cut, Math.min(input.length, cut + 50)]).output.toString()).toBe(expected);
    }
    // Outside the 256-byte window it is just a 40-character string.
    const far = Buffer.from(`${FAKE.awsId}\n${"x".repeat(300)} ${FAKE.awsSecret}`);
    expect(scrubBuffer(far).output.toString()).toBe(`[REDACTED:aws_access_key]\n${"x".repeat(300)} ${FAKE.awsSecret}`);
  });
});

describe("byte exactness and bounds", () => {
  it("random binary without credentials passes through byte for byte", () => {
    const r = rng(99);
    for (let iter = 0; iter < 50; iter++) {
      const input = Buffer.from(Array.from({ length: 2000 }, () => Math.floor(r() * 256)));
      const { output, report } = scrubChunked(input, randomCuts(r, input.length, 30));
      if (report.count === 0) expect(output.equals(input)).toBe(true);
    }
  });

  it("holds back at most holdbackLimit bytes, and almost nothing when no trigger is in the tail", () => {
    const s = new Scrubber();
    const line = Buffer.from("2024-01-01T00:00:00Z INFO request served in 12ms path=/api/v1/items status=200\n");
    let maxHeld = 0;
    for (let i = 0; i < 2000; i++) {
      const out = s.push(line);
      expect(out.length).toBeGreaterThan(0);
      maxHeld = Math.max(maxHeld, s.heldBytes);
    }
    expect(maxHeld).toBeLessThan(32);
    // An unterminated PEM header forces the long hold-back, but never past the limit.
    const pem = new Scrubber();
    pem.push(Buffer.from("-----BEGIN RSA PRIVATE KEY-----\n"));
    for (let i = 0; i < 1000; i++) {
      pem.push(Buffer.from("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=\n"));
      expect(pem.heldBytes).toBeLessThanOrEqual(pem.holdbackLimit);
    }
    expect(pem.end().toString()).not.toContain("QUJD");
  });

  it("splits one huge chunk internally and still equals the whole-text result", () => {
    const big = Buffer.concat([Buffer.alloc((1 << 20) - 10, 0x61), Buffer.from(` ${FAKE.ghp} `), Buffer.alloc(1 << 20, 0x62)]);
    const { output, report } = scrubBuffer(big);
    expect(report.count).toBe(1);
    expect(output.length).toBe(big.length - FAKE.ghp.length + "[REDACTED:github_token]".length);
  });

  it("works as a node Transform stream and reports once at the end", async () => {
    const reports: unknown[] = [];
    const chunks: Buffer[] = [];
    const src = Readable.from([Buffer.from("x gh"), Buffer.from(FAKE.ghp.slice(2, 10)), Buffer.from(`${FAKE.ghp.slice(10)} y`)]);
    const t = createScrubStream({ onReport: (r) => reports.push(r) });
    t.on("data", (c: Buffer) => chunks.push(c));
    await pipeline(src, t);
    expect(Buffer.concat(chunks).toString()).toBe("x [REDACTED:github_token] y");
    expect(reports).toEqual([{ count: 1, kinds: ["github_token"] }]);
  });

  it("built-in patterns all have bounded matches and at least one byte, and bounded look-behind", () => {
    for (const p of builtinPatterns()) {
      expect(p.bounds.minLength).toBeGreaterThan(0);
      expect(p.bounds.maxLength).toBeLessThanOrEqual(16_600);
      expect(p.bounds.lookbehind).toBeLessThanOrEqual(2048);
    }
  });

  it("every built-in kind (plus a full set of DLP names) is a valid evidence redactions.kinds list", () => {
    const redactions = EvidenceEnvelope.shape.redactions;
    const dlpNames = Array.from({ length: DLP_LIMITS.maxPatterns }, (_, i) => `dlp_${i}`);
    expect(redactions.safeParse({ count: 1, kinds: [...builtinKinds(), ...dlpNames] }).success).toBe(true);
    expect(builtinKinds()).toEqual(expect.arrayContaining(["openai_key", "anthropic_key", "npm_token", "vault_token", "sendgrid_key", "digitalocean_token", "secret_assignment", "docker_auth", "mysql_password"]));
  });

  it("refuses push after end", () => {
    const s = new Scrubber();
    s.end();
    expect(() => s.push(Buffer.from("x"))).toThrow();
  });
});

describe("DLP pattern validation", () => {
  const refused: Array<[string, unknown]> = [
    ["matches empty (optional)", [{ name: "a", pattern: "a?" }]],
    ["matches empty ({0,3})", [{ name: "a", pattern: "x{0,3}" }]],
    ["matches empty (empty group)", [{ name: "a", pattern: "(?:)" }]],
    ["matches empty (alternation)", [{ name: "a", pattern: "abc|" }]],
    ["unbounded *", [{ name: "a", pattern: "a.*b" }]],
    ["unbounded +", [{ name: "a", pattern: "\\d+" }]],
    ["unbounded {n,}", [{ name: "a", pattern: "\\d{3,}" }]],
    ["anchor ^", [{ name: "a", pattern: "^abc" }]],
    ["anchor $", [{ name: "a", pattern: "abc$" }]],
    ["nested quantifier", [{ name: "a", pattern: "(?:a{1,5}){1,5}" }]],
    ["catastrophic classic", [{ name: "a", pattern: "(a|a){1,30}b" }]],
    ["back-reference", [{ name: "a", pattern: "(a)\\1" }]],
    ["look-ahead", [{ name: "a", pattern: "a(?=b)" }]],
    ["look-behind", [{ name: "a", pattern: "(?<=a)b" }]],
    ["named group", [{ name: "a", pattern: "(?<x>ab)" }]],
    ["too long a match", [{ name: "a", pattern: "a{4097}" }]],
    ["too expensive", [{ name: "a", pattern: "\\w{1,100}\\w{1,100}\\w{1,100}x" }]],
    ["non-ASCII literal", [{ name: "a", pattern: "é{2}" }]],
    ["unicode escape", [{ name: "a", pattern: "\\u00e9" }]],
    ["property escape", [{ name: "a", pattern: "\\p{L}{2}" }]],
    ["invalid syntax", [{ name: "a", pattern: "(ab" }]],
    ["bad name", [{ name: "Bad-Name", pattern: "abc" }]],
    ["duplicate name", [{ name: "a", pattern: "abc" }, { name: "a", pattern: "def" }]],
    ["shadows a built-in kind", [{ name: "jwt", pattern: "abc" }]],
    ["unknown flag", [{ name: "a", pattern: "abc", flags: "g" }]],
    ["unknown field", [{ name: "a", pattern: "abc", replace: "x" }]],
    ["too many patterns", Array.from({ length: DLP_LIMITS.maxPatterns + 1 }, (_, i) => ({ name: `p${i}`, pattern: "abc" }))],
    ["not an array", { name: "a", pattern: "abc" }],
  ];
  it.each(refused)("refuses %s", (_name, dlp) => {
    let error: unknown;
    try {
      compileDlpPatterns(dlp);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LeaseholdError);
    expect((error as LeaseholdError).code).toBe("INVALID_ARGUMENT");
    expect((error as LeaseholdError).tier).toBe("guest");
    expect(() => new Scrubber({ dlp })).toThrow(LeaseholdError);
  });

  it("accepts bounded, non-empty patterns", () => {
    const compiled = compileDlpPatterns([
      { name: "ssn", pattern: "\\b\\d{3}-\\d{2}-\\d{4}\\b" },
      { name: "card", pattern: "\\d{4}[ -]?\\d{4}[ -]?\\d{4}[ -]?\\d{4}" },
      { name: "project", pattern: "(?:proj|prj)-[a-z0-9]{8}", flags: "i" },
      { name: "bytes", pattern: "\\xff\\xfe[\\x80-\\x9f]{4}" },
    ]);
    expect(compiled.map((c) => c.bounds.maxLength)).toEqual([11, 19, 13, 6]);
    // Patterns see the normalised view: C0 controls are not in it, C1 bytes are.
    const out = scrubBuffer(Buffer.from([0x41, 0xff, 0xfe, 0x81, 0x82, 0x83, 0x84, 0x42]), {
      dlp: [{ name: "bytes", pattern: "\\xff\\xfe[\\x80-\\x9f]{4}" }],
    });
    expect(out.output.toString("latin1")).toBe("A[REDACTED:bytes]B");
  });
});
