import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testVerifiedJob } from "../../test/support/shell-policy";
import { runJob, type RunnerContext } from "./runner";
import { testRunnerContext } from "../../test/support/runner-context";

/**
 * fs_read pages of a binary file (bulk download): `encoding:
 * "base64"` returns base64 of the exact bytes after scrubbing, so a client
 * reassembles the file from its pages; utf8 (the default) stays text.
 */

let ws: string;
let ctx: RunnerContext;
// Every byte value, then an AWS key id the scrubber must still see inside binary data, then more bytes.
const SECRET = "AKIAIOSFODNN7EXAMPLE";
const binary = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.from(` ${SECRET} `), Buffer.from(Array.from({ length: 256 }, (_, i) => 255 - i))]);

// Fake credentials, assembled so this file does not look like a leaked one.
const GHP = "gh" + "p_" + "Zq8vRk2mXw7TnB4cYp1sLd9fGh3jKa6eUo5i";
const LH = "lh" + "_" + "N3vQx8Rk2mWz7TnB4cYp1sLd9fGh3jKa";
// More filler than the context read around a page, so the context really comes from the file.
const FILLER = "x".repeat(200_000);
const creds = `${FILLER}\nGITHUB_TOKEN ${GHP}\nhub ${LH}\n${FILLER}`;

beforeAll(() => {
  ws = fs.mkdtempSync(path.join(os.tmpdir(), "lh-fs-read-"));
  fs.writeFileSync(path.join(ws, "blob.bin"), binary);
  fs.writeFileSync(path.join(ws, "creds.txt"), creds);
  ctx = testRunnerContext(ws);
});

afterAll(() => fs.rmSync(ws, { recursive: true, force: true }));

const read = (args: Record<string, unknown>) =>
  runJob(testVerifiedJob({ operation: "fs_read", capability: { id: "workspace", version: "1.0.0" }, arguments: { host: "local", path: "blob.bin", ...args } }), ctx);

describe("runner: fs_read of a binary file, paged", () => {
  it("encoding base64: pages concatenate to the exact bytes, with the credential inside redacted before encoding; the evidence digest covers what was returned", async () => {
    const pages: Buffer[] = [];
    let offset = 0;
    for (;;) {
      const out = await read({ offset, limit: 200, encoding: "base64" });
      expect(out.error).toBeNull();
      expect(out.structured).toMatchObject({ encoding: "base64", offset });
      const text = out.streams.stdout.toString("latin1");
      expect(text).toMatch(/^[A-Za-z0-9+/]*={0,2}$/);
      pages.push(Buffer.from(text, "base64"));
      expect(out.evidence.envelope.artifacts[0]?.sha256).toBe(createHash("sha256").update(out.streams.stdout).digest("hex"));
      offset += Number(out.structured?.["bytes"]);
      if (out.structured?.["has_more"] !== true) break;
    }
    const whole = Buffer.concat(pages);
    expect(whole.includes(Buffer.from(SECRET))).toBe(false);
    expect(whole.toString("latin1")).toContain("[REDACTED:aws_access_key]");
    // Outside the redaction every byte came back unchanged (the first 256 and the last 256).
    expect(whole.subarray(0, 256)).toEqual(binary.subarray(0, 256));
    expect(whole.subarray(whole.length - 256)).toEqual(binary.subarray(binary.length - 256));
  });

  it("encoding utf8 (the default) returns text, where invalid UTF-8 cannot be recovered: base64 is the way for binary", async () => {
    const out = await read({ offset: 128, limit: 64 });
    expect(out.structured).toMatchObject({ encoding: "utf8" });
    expect(out.streams.stdout).toEqual(binary.subarray(128, 192));
    expect(Buffer.from(out.streams.stdout.toString("utf8"), "utf8").equals(binary.subarray(128, 192))).toBe(false);
  });
});

describe("runner: fs_read pages are scrubbed as windows of the file", () => {
  const readCreds = (offset: number, limit: number) =>
    runJob(testVerifiedJob({ operation: "fs_read", capability: { id: "workspace", version: "1.0.0" }, arguments: { host: "local", path: "creds.txt", offset, limit } }), ctx);

  it("a read starting three bytes into a token returns a marker, not the token's body", async () => {
    for (const token of [GHP, LH]) {
      const at = creds.indexOf(token) + 3;
      const out = await readCreds(at, 64);
      expect(out.error).toBeNull();
      const text = out.streams.stdout.toString("latin1");
      expect(text.startsWith("[REDACTED:")).toBe(true);
      expect(text).not.toContain(token.slice(3, 13));
      expect(out.structured).toMatchObject({ offset: at, bytes: 64, has_more: true });
      expect(out.evidence.envelope.redactions.count).toBeGreaterThanOrEqual(1);
    }
  });

  it("at every offset and page size across a token, no page returns a run of its body", async () => {
    const start = creds.indexOf(GHP);
    for (let at = start - 2; at < start + GHP.length; at += 1) {
      for (const limit of [1, 3, 7, 20, GHP.length]) {
        const text = (await readCreds(at, limit)).streams.stdout.toString("latin1");
        for (let k = 0; k + 4 <= GHP.length; k++) expect(text).not.toContain(GHP.slice(k, k + 4));
      }
    }
  });

  it("pages that split a token at their boundary each carry a marker, and the bytes around pass unchanged", async () => {
    const cut = creds.indexOf(LH) + 10;
    const first = (await readCreds(cut - 20, 20)).streams.stdout.toString("latin1");
    const second = (await readCreds(cut, 40)).streams.stdout.toString("latin1");
    expect(first).toBe("[REDACTED:github_token]\nhub [REDACTED:leasehold_token]");
    expect(second).toBe("[REDACTED:leasehold_token]\n" + "x".repeat(14));
  });
});
