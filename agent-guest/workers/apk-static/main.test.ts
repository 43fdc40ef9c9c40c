// The worker as the sandbox runs it: bundled into one ESM file by esbuild and
// fed to `node --input-type=module - <operation> <path>` on stdin.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FixtureName, apkFixtures } from "./test/fixtures";

let apks: Record<FixtureName, string>;
let bundle: Buffer;
let workdir: string;

beforeAll(async () => {
  apks = await apkFixtures();
  workdir = mkdtempSync(join(tmpdir(), "apk-worker-run-"));
  const out = join(workdir, "worker.mjs");
  await build({ entryPoints: [resolve(import.meta.dirname, "main.ts")], bundle: true, platform: "node", format: "esm", target: "node20", outfile: out, logLevel: "silent" });
  bundle = readFileSync(out);
}, 300_000);

afterAll(() => {
  rmSync(workdir, { recursive: true, force: true });
});

function runWorker(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const cwd = mkdtempSync(join(tmpdir(), "apk-worker-cwd-"));
  const r = spawnSync(process.execPath, ["--input-type=module", "-", ...args], { input: bundle, cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  // The worker writes nothing anywhere but stdout.
  expect(readdirSync(cwd)).toEqual([]);
  rmSync(cwd, { recursive: true });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("the bundled worker on stdin", () => {
  it("the bundle imports only node builtins", () => {
    const imports = [...bundle.toString("utf8").matchAll(/\bfrom\s+"([^"]+)"/g)].map((m) => m[1]!);
    expect(imports.length).toBeGreaterThan(0);
    for (const spec of imports) expect(spec).toMatch(/^node:(fs|zlib|crypto)$/);
    expect(bundle.toString("utf8")).not.toContain("import.meta.url");
  });

  it("apk_inspect prints exactly one JSON document with the artifact's digest and exits 0", () => {
    const r = runWorker(["apk_inspect", apks.dangerous]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    const doc = JSON.parse(r.stdout) as { schema: string; operation: string; artifact: { sha256: string; bytes: number }; facts: { id: string; state: string }[]; checks?: unknown; limitations: string[] };
    const file = readFileSync(apks.dangerous);
    expect(doc.schema).toBe("leasehold.apk-static.result/1");
    expect(doc.operation).toBe("apk_inspect");
    expect(doc.artifact.bytes).toBe(file.length);
    expect(doc.artifact.sha256).toBe(createHash("sha256").update(file).digest("hex"));
    expect(doc.checks).toBeUndefined();
    expect(doc.limitations).toEqual([]);
    expect(new Set(doc.facts.map((f) => f.state))).toEqual(new Set(["observed", "derived"]));
    expect(doc.facts.find((f) => f.id === "package.name")).toMatchObject({ value: "org.leasehold.fixture.dangerous", state: "observed" });
  });

  it("apk_preflight adds checks and fails REQUIRE_SECURE_ENV", () => {
    const r = runWorker(["apk_preflight", apks.secure_env]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { checks: { id: string; status: string }[] };
    expect(doc.checks.find((c) => c.id === "manifest.require_secure_env")!.status).toBe("fail");
  });

  it("a non-ZIP input exits 3 with an INVALID_ARGUMENT document", () => {
    const junk = join(workdir, "junk.bin");
    writeFileSync(junk, "MZ this is not an APK at all");
    const r = runWorker(["apk_inspect", junk]);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toEqual({ schema: "leasehold.apk-static.result/1", error: { code: "INVALID_ARGUMENT", message: expect.stringContaining("not a ZIP archive") as unknown } });
  });

  it("an unknown operation and a missing file exit 3", () => {
    expect(runWorker(["apk_unpack", apks.minimal]).code).toBe(3);
    const missing = runWorker(["apk_inspect", join(workdir, "absent.apk")]);
    expect(missing.code).toBe(3);
    expect(missing.stdout).toContain("ENOENT");
  });
});
