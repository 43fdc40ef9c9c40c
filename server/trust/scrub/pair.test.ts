import { describe, expect, it } from "vitest";
import { Scrubber, cutScrubbed, scrubBuffer, scrubPair } from "./index";
import { ALL_CASES, FAKE, FAKE12, OUT_OF_REACH } from "./test/corpus";

const MiB = 1024 * 1024;
const b = (s: string) => Buffer.from(s, "latin1");
const latin = (x: Buffer) => x.toString("latin1");

/** Every overlapping piece of `secret` of `n` bytes: none may appear in what is released. */
function leaksAny(output: Buffer, secret: string, n = 8): string | null {
  const text = latin(output);
  for (let i = 0; i + n <= secret.length; i++) if (text.includes(secret.slice(i, i + n))) return secret.slice(i, i + n);
  return null;
}

describe("stdout/stderr pair: a token split between the two streams", () => {
  const t = FAKE.ghp;
  it.each([4, 9, 20, 39])("stdout's end + stderr's start (split after %i bytes) is redacted in both", (k) => {
    const r = scrubPair({ stdout: b(`log line\ntoken ${t.slice(0, k)}`), stderr: b(`${t.slice(k)}\nwarning: x\n`) });
    expect(leaksAny(Buffer.concat([r.stdout, r.stderr]), t, 4)).toBeNull();
    expect(latin(r.stdout)).toBe("log line\ntoken [REDACTED:github_token]");
    expect(latin(r.stderr)).toBe("[REDACTED:github_token]\nwarning: x\n");
    expect(r.report.kinds).toEqual(["github_token"]);
  });

  it("every token format split at every byte between the two streams (both orders) releases no 8 bytes of it", () => {
    const tokens = [FAKE.ghp, FAKE.glpat, FAKE.xoxb, FAKE.skLive, FAKE.aiza, FAKE.jwt, FAKE.lh, FAKE.awsId, FAKE12.openaiProj, FAKE12.anthropic, FAKE12.npm, FAKE12.vault, FAKE12.sendgrid, FAKE12.digitalocean];
    for (const t of tokens) {
      for (let k = 1; k < t.length; k++) {
        const ab = scrubPair({ stdout: b(`v ${t.slice(0, k)}`), stderr: b(`${t.slice(k)}\n`) });
        const ba = scrubPair({ stdout: b(`${t.slice(k)}\n`), stderr: b(`v ${t.slice(0, k)}`) });
        for (const r of [ab, ba]) {
          const leak = leaksAny(r.stdout, t) ?? leaksAny(r.stderr, t);
          if (leak !== null) throw new Error(`${t.slice(0, 6)}… split after ${k}: ${leak} released`);
        }
      }
    }
  });

  it("stderr's end + stdout's start is redacted in both", () => {
    const k = FAKE12.openaiProj.length >> 1;
    const r = scrubPair({ stdout: b(`${FAKE12.openaiProj.slice(k)} done\n`), stderr: b(`key=${FAKE12.openaiProj.slice(0, k)}`) });
    expect(latin(r.stdout)).toBe("[REDACTED:openai_key] done\n");
    expect(latin(r.stderr)).toBe("key=[REDACTED:openai_key]");
  });

  it("a scheme in stdout and its token in stderr: the token is redacted in stderr", () => {
    const r = scrubPair({ stdout: b("Authorization: Bearer"), stderr: b(` ${FAKE.lh}\n`) });
    expect(leaksAny(r.stderr, FAKE.lh)).toBeNull();
    expect(latin(r.stdout)).toBe("Authorization: Bearer");
  });

  it("the split token is released by scrubbing each stream alone (what the pair scan adds)", () => {
    const alone = latin(Buffer.concat([scrubBuffer(b(`token ${t.slice(0, 9)}`)).output, scrubBuffer(b(`${t.slice(9)}\n`)).output]));
    expect(alone).toContain(t.slice(0, 9));
  });

  it("streams that end in a newline are not joined (no over-redaction)", () => {
    const r = scrubPair({ stdout: b("abc\n"), stderr: b(`${t.slice(4)}\n`) });
    expect(latin(r.stdout)).toBe("abc\n");
    expect(r.report.count).toBe(0);
  });

  it("each stream's own secrets are still redacted and counted once", () => {
    const r = scrubPair({ stdout: b(`${FAKE.awsId}\n`), stderr: b(`${FAKE12.npm}\n`) });
    expect(latin(r.stdout)).toBe("[REDACTED:aws_access_key]\n");
    expect(latin(r.stderr)).toBe("[REDACTED:npm_token]\n");
    expect(r.report).toEqual({ count: 2, kinds: ["aws_access_key", "npm_token"] });
  });
});

describe("capture → scrub → cut", () => {
  it("a token straddling the returned size is cut whole (no first part released)", () => {
    for (const before of [1, 4, 10, 30]) {
      const raw = Buffer.concat([Buffer.alloc(MiB - before, 0x61), b(` ${FAKE.ghp} and the rest of the line\n`)]);
      const r = scrubPair({ stdout: raw, stderr: Buffer.alloc(0) }, { returnMax: MiB });
      expect(r.stdout.length).toBeLessThanOrEqual(MiB);
      expect(r.stdoutTruncated).toBe(true);
      expect(leaksAny(r.stdout.subarray(MiB - 64), FAKE.ghp, 4)).toBeNull();
      expect(latin(r.stdout.subarray(-4))).not.toContain("[");
    }
  });

  it("cutting raw bytes first (the old order) released the token's first part", () => {
    const raw = Buffer.concat([Buffer.alloc(MiB - 10, 0x61), b(` ${FAKE.ghp} tail\n`)]);
    const old = scrubBuffer(raw.subarray(0, MiB)).output;
    expect(latin(old.subarray(-9))).toBe(FAKE.ghp.slice(0, 9));
  });

  it("cutScrubbed never ends inside a marker", () => {
    const s = b("abc [REDACTED:github_token] def");
    for (let max = 0; max <= s.length; max++) {
      const { output } = cutScrubbed(s, max);
      const text = latin(output);
      expect(text.length).toBeLessThanOrEqual(max);
      if (text.includes("[")) expect(text).toContain("]");
    }
  });

  it("a capture cut by the launcher mid-token: the partial tail is redacted", () => {
    for (const k of [4, 12, 30]) {
      const raw = b(`ok\nexport T=x\n${FAKE.ghp.slice(0, k)}`);
      const r = scrubPair({ stdout: raw, stderr: Buffer.alloc(0), stdoutCut: true });
      expect(latin(r.stdout)).toBe("ok\nexport T=x\n[REDACTED:github_token]");
      // Not told it was cut, the same bytes are a too-short near-miss and pass.
      expect(latin(scrubPair({ stdout: raw, stderr: Buffer.alloc(0) }).stdout)).toContain(FAKE.ghp.slice(0, k));
    }
  });

  it("every token format cut anywhere past its longest trigger (12 bytes) releases none of it at a cut", () => {
    const tokens = [FAKE.ghp, FAKE.ghPat, FAKE.glpat, FAKE.xoxb, FAKE.skLive, FAKE.aiza, FAKE.ya29, FAKE.jwt, FAKE.lh, FAKE.awsId,
      FAKE12.openaiProj, FAKE12.openaiLegacy, FAKE12.anthropic, FAKE12.npm, FAKE12.vault, FAKE12.sendgrid, FAKE12.digitalocean];
    for (const t of tokens) {
      for (let k = 12; k <= t.length; k++) {
        const r = scrubPair({ stdout: b(`line\nvalue ${t.slice(0, k)}`), stderr: Buffer.alloc(0), stdoutCut: true });
        if (latin(r.stdout).includes(t.slice(0, 8))) throw new Error(`${t.slice(0, 6)}… cut after ${k} bytes leaked: ${latin(r.stdout)}`);
      }
    }
  });

  it("an AWS secret cut right after its key id (the proximity rule) is redacted to the end", () => {
    for (const k of [8, 20, 39]) {
      const r = scrubPair({ stdout: b(`${FAKE.awsId},${FAKE.awsSecret.slice(0, k)}`), stderr: Buffer.alloc(0), stdoutCut: true });
      expect(latin(r.stdout)).toBe("[REDACTED:aws_access_key],[REDACTED:aws_secret_key]");
    }
  });

  it("a cut PEM body and a cut Bearer token are redacted to the end", () => {
    const pem = scrubPair({ stdout: b(`x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow`), stderr: Buffer.alloc(0), stdoutCut: true });
    expect(latin(pem.stdout)).toBe("x\n[REDACTED:private_key]");
    const bearer = scrubPair({ stdout: Buffer.alloc(0), stderr: b(`curl -H Bearer abcd`), stderrCut: true });
    expect(latin(bearer.stderr)).toBe("curl -H [REDACTED:bearer_token]");
  });

  it("a cut capture with no credential trigger near its end passes byte for byte", () => {
    const raw = b("2024-01-01 INFO served /api/items in 12ms\nnext line is cut here");
    const r = scrubPair({ stdout: raw, stderr: Buffer.alloc(0), stdoutCut: true });
    expect(r.stdout.equals(raw)).toBe(true);
    expect(r.report.count).toBe(0);
  });

  it("a settled secret before the cut is redacted alone, the text after it passes", () => {
    const r = scrubPair({ stdout: b(`${FAKE.awsId} is set\nand more`), stderr: Buffer.alloc(0), stdoutCut: true });
    expect(latin(r.stdout)).toBe("[REDACTED:aws_access_key] is set\nand more");
  });
});

describe("terminal controls are reported", () => {
  it.each([
    ["OSC 52 clipboard write", "\x1b]52;c;ZWNobyBoaQ==\x07"],
    ["window title", "\x1b]0;pwned\x07"],
    ["CSI colour", "\x1b[31mred\x1b[0m"],
    ["a bare NUL", "a\x00b"],
  ])("%s", (_name, s) => {
    expect(scrubPair({ stdout: b(`x${s}y`), stderr: Buffer.alloc(0) }).terminalControls).toBe(true);
    expect(scrubPair({ stdout: Buffer.alloc(0), stderr: b(s) }).terminalControls).toBe(true);
  });

  it("plain text with tabs, CR and LF is not", () => {
    expect(scrubPair({ stdout: b("a\tb\r\nc\n"), stderr: Buffer.from("é ✓\n", "utf8") }).terminalControls).toBe(false);
  });

  it("an unterminated CSI does not hide what follows it", () => {
    const s = new Scrubber();
    const out = Buffer.concat([s.push(b(`\x1b[${";".repeat(100)}${FAKE.ghp}\n`)), s.end()]);
    expect(latin(out)).not.toContain(FAKE.ghp);
  });
});

describe("out of reach by design (documented limits)", () => {
  it.each(OUT_OF_REACH.map((c) => [c.name, c.input] as const))("%s passes unchanged", (_name, input) => {
    const r = scrubBuffer(input);
    expect(r.output.equals(input)).toBe(true);
    expect(r.report.count).toBe(0);
  });
});

describe("both streams", () => {
  it("every corpus row is scrubbed alike in stdout and in stderr, and as the whole text", () => {
    for (const c of ALL_CASES) {
      const input = typeof c.input === "string" ? Buffer.from(c.input, "utf8") : c.input;
      const expected = latin(typeof c.expect === "string" ? Buffer.from(c.expect, "utf8") : c.expect);
      const inOut = scrubPair({ stdout: input, stderr: Buffer.alloc(0) }, { returnMax: 1 << 20 });
      const inErr = scrubPair({ stdout: Buffer.alloc(0), stderr: input }, { returnMax: 1 << 20 });
      expect(latin(inOut.stdout), c.name).toBe(expected);
      expect(latin(inErr.stderr), c.name).toBe(expected);
      expect(inOut.report.count, c.name).toBe(c.count);
      expect(inErr.report.count, c.name).toBe(c.count);
    }
  });
});
