import { runInNewContext } from "node:vm";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { asciiText, decodeBase64Loose, encodeBase64, isAscii, usePortableBytesForTests, utf8Length } from "../trust/portable/bytes";
import { sha256, usePortablePrimitivesForTests } from "../trust/portable/crypto";
import { exportLines } from "./export-format";
import { generateSignerKey } from "../trust/ledger/note";
import { buildLog } from "./testdata/log-builder";
import type { VerifyReport } from "./verify";
import { verifyExport } from "./verify";
import { generateCosignerKey } from "../trust/ledger/witness";

/**
 * "The same verification code runs in the browser and in the CLI": these
 * tests hold verify.ts to it. The bundle step fails the moment anything in
 * its import graph imports a node: module (esbuild cannot resolve one for
 * platform "browser"), and the bundle is then run in a bare JavaScript
 * context with only what a browser offers — no process, no Buffer,
 * no require — so the portable code paths are the ones exercised.
 */

const ORIGIN = "leasehold.test/browser";
const log = generateSignerKey(ORIGIN);
const witness = generateCosignerKey("witness.leasehold.test");
const built = buildLog({ origin: ORIGIN, logSigner: log.signer, logVerifier: log.verifier, size: 90, checkpointSizes: [0, 40, 90], witnesses: [witness] });

async function exportText(): Promise<string> {
  let text = "";
  for await (const chunk of exportLines(built.source)) text += chunk;
  return text;
}

async function bundleForBrowser(): Promise<{ code: string; inputs: string[] }> {
  const result = await build({
    stdin: { contents: 'export { verifyExport, describeFailure } from "./server/ledger/verify";', resolveDir: process.cwd(), loader: "ts" },
    bundle: true,
    platform: "browser",
    format: "iife",
    globalName: "LeaseholdVerifier",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  return { code: result.outputFiles[0]!.text, inputs: Object.keys(result.metafile.inputs) };
}

type BrowserVerifier = {
  verifyExport: (chunks: Iterable<Uint8Array>, key: string, options?: object) => Promise<VerifyReport>;
  describeFailure: (failure: NonNullable<VerifyReport["failure"]>) => string;
};

function loadInBareContext(code: string): BrowserVerifier {
  // Only web platform globals: crypto (WebCrypto), TextEncoder/TextDecoder.
  const context: Record<string, unknown> = { crypto: globalThis.crypto, TextEncoder, TextDecoder, console };
  runInNewContext(`${code}\nglobalThis.LeaseholdVerifier = LeaseholdVerifier;`, context);
  expect(context.process).toBeUndefined();
  expect(context.Buffer).toBeUndefined();
  return context.LeaseholdVerifier as BrowserVerifier;
}

describe("the export verifier runs in a browser", () => {
  it("bundles for platform browser: no node: module anywhere in verify.ts's import graph", async () => {
    const { inputs } = await bundleForBrowser();
    expect(inputs.filter((p) => p.startsWith("node:"))).toEqual([]);
    expect(inputs).toContain("server/ledger/verify.ts");
  });

  it("the browser bundle, run without process or Buffer, verifies an export and names the first bad index of a tampered one", async () => {
    const verifier = loadInBareContext((await bundleForBrowser()).code);
    const text = await exportText();
    const bytes = new TextEncoder().encode(text);
    // Fed in small chunks, as a fetch() body stream would be.
    const chunks = Array.from({ length: Math.ceil(bytes.length / 997) }, (_, i) => bytes.subarray(i * 997, (i + 1) * 997));
    const good = await verifier.verifyExport(chunks, log.verifier);
    expect(good).toMatchObject({ ok: true, entries: 90, checkpointsVerified: 3, failure: null });
    expect(good.cosignatures.unchecked).toBe(3);

    // Entry 57's stored bytes changed, its leaf hash left as integrated.
    const lines = text.split("\n");
    const at = lines.findIndex((l) => l.includes('"index":57,'));
    const record = JSON.parse(lines[at]!) as { entry: string };
    const changed = Uint8Array.from(atob(record.entry), (c) => c.charCodeAt(0));
    changed[changed.length - 3] = (changed[changed.length - 3] as number) ^ 1;
    lines[at] = lines[at]!.replace(record.entry, btoa(String.fromCharCode(...changed)));
    const bad = await verifier.verifyExport([new TextEncoder().encode(lines.join("\n"))], log.verifier);
    expect(bad.ok).toBe(false);
    expect(bad.failure?.index).toBe(57);
    expect(verifier.describeFailure(bad.failure!)).toContain("first bad index 57");

    // The wrong pinned key is refused with the CLI's message.
    const other = generateSignerKey(ORIGIN).verifier;
    const refused = await verifier.verifyExport([bytes], other);
    expect(refused.failure?.reason).toBe(`export declares log key ${log.verifier}, but the key given is ${other}`);
  });

  it("reports progress after every chunk: entries checked so far and bytes consumed, ending at the whole export", async () => {
    const bytes = new TextEncoder().encode(await exportText());
    const chunks = Array.from({ length: Math.ceil(bytes.length / 4096) }, (_, i) => bytes.subarray(i * 4096, (i + 1) * 4096));
    const seen: { entries: number; bytes: number }[] = [];
    const report = await verifyExport(chunks, log.verifier, { onProgress: (p) => seen.push(p) });
    expect(report.ok).toBe(true);
    expect(seen).toHaveLength(chunks.length);
    expect(seen.at(-1)).toEqual({ entries: 90, bytes: bytes.length });
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i]!.entries).toBeGreaterThanOrEqual(seen[i - 1]!.entries);
      expect(seen[i]!.bytes).toBeGreaterThan(seen[i - 1]!.bytes);
    }
    expect(seen.some((p) => p.entries > 0 && p.entries < 90)).toBe(true);
  });

  it("Node's fast paths and the portable primitives give identical hashes, base64 and verdicts", async () => {
    const samples = [new Uint8Array(0), new TextEncoder().encode("abc"), Uint8Array.from({ length: 1000 }, (_, i) => (i * 31) & 255)];
    const native = samples.map((s) => [encodeBase64(sha256(s)), encodeBase64(s)]);
    const nativeReport = await verifyExport([await exportText()], log.verifier, { witnessKeys: [witness.verifier] });
    const restoreCrypto = usePortablePrimitivesForTests();
    const restoreBytes = usePortableBytesForTests();
    try {
      expect(samples.map((s) => [encodeBase64(sha256(s)), encodeBase64(s)])).toEqual(native);
      // FIPS 180-4 "abc".
      expect(encodeBase64(sha256(samples[1]!))).toBe("ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
      for (const text of ["", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "+/+/"]) expect(encodeBase64(decodeBase64Loose(text)!)).toBe(text);
      for (const bad of ["Zg=", "Z===", "Zm9v!", "Zg=a"]) {
        const decoded = decodeBase64Loose(bad);
        expect(decoded === undefined || encodeBase64(decoded) !== bad).toBe(true);
      }
      expect(await verifyExport([await exportText()], log.verifier, { witnessKeys: [witness.verifier] })).toEqual(nativeReport);
      for (const text of ["", "plain", "naïve", "日本", "emoji 😀", "lone \ud800 surrogate"]) expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length);
      expect(isAscii(new TextEncoder().encode("plain"))).toBe(true);
      expect(isAscii(new TextEncoder().encode("naïve"))).toBe(false);
      expect(asciiText(new TextEncoder().encode("x".repeat(20_000)))).toBe("x".repeat(20_000));
    } finally {
      restoreBytes();
      restoreCrypto();
    }
    expect(nativeReport.ok).toBe(true);
  });
});
