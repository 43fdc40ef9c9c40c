// Seeded mutation tests: whatever bytes arrive, the worker answers with a
// result or an INVALID_ARGUMENT refusal — never another exception. The seed
// is fixed so a failure reproduces; the mutated inputs are real APKs.

import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { LeaseholdError } from "../../../server/trust/leasehold-error";
import { AxmlError, parseAxml } from "./axml";
import { FactSet, Limitations } from "./facts";
import { inspectSource } from "./inspect";
import { DEFAULT_LIMITS } from "./limits";
import { manifestFacts } from "./manifest";
import { BufferSource } from "./source";
import { apkFixtures } from "./test/fixtures";
import { ReadBudget, openZip, readEntry } from "./zip";

/** xorshift32: deterministic, no dependency. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

function outcome(buf: Buffer): "result" | "refused" {
  try {
    inspectSource(new BufferSource(buf));
    return "result";
  } catch (err) {
    if (err instanceof LeaseholdError && err.code === "INVALID_ARGUMENT") return "refused";
    throw err;
  }
}

let signed: Buffer;
let nativeApk: Buffer;
let manifest: Buffer;
beforeAll(async () => {
  const apks = await apkFixtures();
  signed = readFileSync(apks.dangerous);
  nativeApk = readFileSync(apks.native_misaligned);
  const lim = new Limitations();
  const zip = openZip(new BufferSource(signed), DEFAULT_LIMITS, lim);
  manifest = readEntry(zip, zip.byName.get("AndroidManifest.xml")!, DEFAULT_LIMITS, new ReadBudget(1 << 20), lim)!;
}, 300_000);

describe("mutated inputs never crash the worker", () => {
  it("400 APKs with 1-16 random bytes changed (signed APK and native-library APK)", () => {
    const next = rng(0x5eed);
    const seen = { result: 0, refused: 0 };
    for (let i = 0; i < 400; i++) {
      const base = i % 2 === 0 ? signed : nativeApk;
      const buf = Buffer.from(base);
      const n = 1 + Math.floor(next() * 16);
      // Half the mutations land in the last 4 KiB: the central directory, EOCD and signing block.
      for (let j = 0; j < n; j++) {
        const pos = next() < 0.5 ? buf.length - 1 - Math.floor(next() * Math.min(4096, buf.length)) : Math.floor(next() * buf.length);
        buf[pos] = Math.floor(next() * 256);
      }
      seen[outcome(buf)]++;
    }
    expect(seen.result + seen.refused).toBe(400);
    expect(seen.result).toBeGreaterThan(0);
  });

  it("every truncation of a signed APK, every 61 bytes", () => {
    for (let len = 0; len < signed.length; len += 61) expect(["result", "refused"]).toContain(outcome(signed.subarray(0, len)));
  });

  it("1000 binary manifests with random bytes changed parse (and yield manifest facts) or fail with AxmlError only", () => {
    const next = rng(0xa11);
    let parsed = 0;
    for (let i = 0; i < 1000; i++) {
      const buf = Buffer.from(manifest);
      const n = 1 + Math.floor(next() * 8);
      for (let j = 0; j < n; j++) buf[Math.floor(next() * buf.length)] = Math.floor(next() * 256);
      try {
        const doc = parseAxml(buf, DEFAULT_LIMITS);
        if (doc.root !== null) manifestFacts(doc.root, new FactSet(), new Limitations());
        parsed++;
      } catch (err) {
        if (!(err instanceof AxmlError)) throw err;
      }
    }
    expect(parsed).toBeGreaterThan(0);
  });
});
