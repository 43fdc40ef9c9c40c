import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testVerifiedJob } from "../../test/support/shell-policy";
import { runJob, type RunnerContext } from "./runner";
import { testRunnerContext } from "../../test/support/runner-context";

/**
 * fs_read pages of a binary file (issue 15, bulk download): `encoding:
 * "base64"` returns base64 of the exact bytes after scrubbing, so a client
 * reassembles the file from its pages; utf8 (the default) stays text.
 */

let ws: string;
let ctx: RunnerContext;
// Every byte value, then an AWS key id the scrubber must still see inside binary data, then more bytes.
const SECRET = "AKIAIOSFODNN7EXAMPLE";
const binary = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.from(` ${SECRET} `), Buffer.from(Array.from({ length: 256 }, (_, i) => 255 - i))]);

beforeAll(() => {
  ws = fs.mkdtempSync(path.join(os.tmpdir(), "lh-fs-read-"));
  fs.writeFileSync(path.join(ws, "blob.bin"), binary);
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
