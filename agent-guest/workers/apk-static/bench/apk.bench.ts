// Worker-only benchmark: apk_inspect on a ~1 MB and a ~50 MB APK, run as the
// sandbox runs it (the esbuild bundle on stdin of `node --input-type=module -`),
// against two baselines on the same file in the same run: `unzip -l` (reads
// the central directory only) and `aapt dump badging` (decodes the manifest
// and resources). Time is wall-clock (median of 3); memory is the peak RSS of
// the child process as GNU time reports it.
//
//   npx tsx agent-guest/workers/apk-static/bench/apk.bench.ts

import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { apkFixtures, ensureAndroidTools } from "../test/fixtures";
import { makeApk } from "./large-apk";
import { reportBench, type BenchFigure } from "../../../../tools/lib/bench-report";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "../../../..");

function ensureTime(): void {
  const script = `import(${JSON.stringify(join(REPO, "tools/lib/apt.mjs"))}).then((m) => m.ensureDebianPackages(["time", "unzip"], { quiet: true }))`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" });
  if (r.status !== 0) throw new Error("installing GNU time and unzip failed");
}

interface Sample {
  seconds: number;
  maxRssKiB: number;
}

function measure(cmd: string, args: string[], input?: Buffer): Sample {
  const r = spawnSync("/usr/bin/time", ["-f", "LEASEHOLD_TIME %e %M", cmd, ...args], { input, maxBuffer: 256 * 1024 * 1024 });
  const m = /LEASEHOLD_TIME ([\d.]+) (\d+)/.exec(r.stderr.toString());
  if (r.status !== 0 || m === null) throw new Error(`${cmd} ${args.join(" ")} failed: ${r.stderr.toString().slice(0, 500)}`);
  return { seconds: Number(m[1]), maxRssKiB: Number(m[2]) };
}

function median3(run: () => Sample): Sample {
  const s = [run(), run(), run()].sort((a, b) => a.seconds - b.seconds);
  return { seconds: s[1]!.seconds, maxRssKiB: Math.max(...s.map((x) => x.maxRssKiB)) };
}

async function main(): Promise<void> {
  ensureAndroidTools();
  ensureTime();
  const fixtures = await apkFixtures();
  const keystore = join(dirname(fixtures.minimal), "signing.p12");
  const dir = mkdtempSync(join(tmpdir(), "apk-bench-"));
  const bundlePath = join(dir, "worker.mjs");
  await build({ entryPoints: [resolve(HERE, "../main.ts")], bundle: true, platform: "node", format: "esm", target: "node20", outfile: bundlePath, logLevel: "silent" });
  const bundle = execFileSync("cat", [bundlePath]);
  const rows: string[][] = [];
  const figures: BenchFigure[] = [];
  for (const mb of [1, 50]) {
    const apk = makeApk(dir, mb, keystore);
    const bytes = statSync(apk).size;
    const check = spawnSync(process.execPath, ["--input-type=module", "-", "apk_inspect", apk], { input: bundle, maxBuffer: 64 * 1024 * 1024 });
    const doc = JSON.parse(check.stdout.toString()) as { facts: { id: string }[]; limitations: string[] };
    if (check.status !== 0 || !doc.facts.some((f) => f.id === "signing.v2")) throw new Error(`worker result on ${apk} is not a full one`);
    const worker = median3(() => measure(process.execPath, ["--input-type=module", "-", "apk_inspect", apk], bundle));
    const nodeEmpty = median3(() => measure(process.execPath, ["--input-type=module", "-e", ""]));
    const unzip = median3(() => measure("unzip", ["-l", apk]));
    const aapt = median3(() => measure("aapt", ["dump", "badging", apk]));
    const size = `${(bytes / 1024 / 1024).toFixed(1)} MB`;
    rows.push([size, "apk_inspect (worker bundle on stdin)", worker.seconds.toFixed(2), (worker.maxRssKiB / 1024).toFixed(1), `${doc.facts.length} facts, ${doc.limitations.length} limitations`]);
    rows.push([size, "node with an empty program (floor)", nodeEmpty.seconds.toFixed(2), (nodeEmpty.maxRssKiB / 1024).toFixed(1), ""]);
    rows.push([size, "baseline: unzip -l", unzip.seconds.toFixed(2), (unzip.maxRssKiB / 1024).toFixed(1), "central directory only"]);
    rows.push([size, "baseline: aapt dump badging", aapt.seconds.toFixed(2), (aapt.maxRssKiB / 1024).toFixed(1), "manifest + resources"]);
    figures.push(
      { name: `apk_inspect worker, ${size}`, value: worker.seconds, unit: "s", baseline: `aapt dump badging, ${size}`, ratio: worker.seconds / aapt.seconds },
      { name: `apk_inspect worker vs unzip -l, ${size}`, value: worker.seconds, unit: "s", baseline: `unzip -l, ${size}`, ratio: worker.seconds / unzip.seconds },
      { name: `apk_inspect worker vs an empty node program, ${size}`, value: worker.seconds, unit: "s", baseline: "node with an empty program", ratio: worker.seconds / nodeEmpty.seconds },
      { name: `apk_inspect worker peak RSS, ${size}`, value: worker.maxRssKiB / 1024, unit: "MiB", baseline: `aapt dump badging peak RSS, ${size}`, ratio: worker.maxRssKiB / aapt.maxRssKiB },
    );
  }
  const head = ["APK", "program", "time s (median of 3)", "peak RSS MiB", "note"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]): string => r.map((c, i) => c.padEnd(widths[i]!)).join(" | ");
  console.log(fmt(head));
  console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
  for (const r of rows) console.log(fmt(r));
  rmSync(dir, { recursive: true, force: true });
  reportBench("apk-worker", { sizes_mb: [1, 50], node: process.version }, figures);
}

await main();
