#!/usr/bin/env node
// What `npm test` reads from the runners' JSON reports (vitest's `json`
// reporter, Playwright's `json` reporter): how long each test file took,
// which tests were skipped and why, and which failed. A skip is accepted only
// when it matches an entry of tools/lib/skip-allowlist.mjs; any other fails
// the run, named. The failures are listed by name at the very end of the
// run's output (failureLines), where a CI log's tail shows them.
//
// Also a command, to check recorded reports without running the suite:
//   node tools/lib/test-report.mjs [--vitest FILE] [--playwright FILE]
// prints the slowest files, the skip check and the failures; exit 1 on an
// unexplained skip or a failure.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ALLOWED_SKIPS } from "./skip-allowlist.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Repository-relative path with forward slashes. */
function relative(file, base) {
  return path.relative(base, path.resolve(base, file)).split(path.sep).join("/");
}

/** The first non-empty line of an error message, cut to a length a summary line can carry. */
function firstLine(message) {
  const line = String(message ?? "").split("\n").map((l) => l.trim()).find((l) => l !== "") ?? "";
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * Per test file: seconds it ran, its skipped tests, and what failed: each
 * failed test, and a file that failed outside its tests (an import, a
 * beforeAll) with the first line of its error.
 * @param {any} report vitest's JSON report
 * @returns {import("./test-report.d.mts").ReportReading}
 */
export function readVitestReport(report, base = root) {
  const files = [];
  const skips = [];
  const failures = [];
  for (const result of report.testResults ?? []) {
    const file = relative(result.name, base);
    const seconds = typeof result.startTime === "number" && typeof result.endTime === "number" ? (result.endTime - result.startTime) / 1000 : 0;
    files.push({ runner: "vitest", file, seconds });
    const name = (t) => t.fullName ?? [...(t.ancestorTitles ?? []), t.title].join(" ");
    for (const t of result.assertionResults ?? []) {
      // "todo" is a test that was never written: as much a hole as a skip.
      if (t.status === "skipped" || t.status === "pending" || t.status === "todo") skips.push({ runner: "vitest", file, name: name(t) });
      if (t.status === "failed") failures.push({ runner: "vitest", file, name: name(t) });
    }
    if (result.status === "failed" && firstLine(result.message) !== "") failures.push({ runner: "vitest", file, name: `(the file failed: ${firstLine(result.message)})` });
  }
  return { files, skips, failures };
}

/**
 * The same from Playwright's JSON report: a file's time is the sum of its
 * tests' attempts (retries included); a skip's name carries its description.
 * @param {any} report Playwright's JSON report
 */
export function readPlaywrightReport(report, base = root) {
  const testDir = report.config?.rootDir ?? base;
  const seconds = new Map();
  const skips = [];
  const failures = [];
  const walk = (suite, titles) => {
    for (const spec of suite.specs ?? []) {
      const file = relative(path.resolve(testDir, spec.file ?? suite.file), base);
      for (const test of spec.tests ?? []) {
        const ms = (test.results ?? []).reduce((sum, r) => sum + (r.duration ?? 0), 0);
        seconds.set(file, (seconds.get(file) ?? 0) + ms / 1000);
        const project = test.projectName ? ` [${test.projectName}]` : "";
        // "unexpected": failed on every attempt; "flaky" passed on a retry and is no failure.
        if (test.status === "unexpected") failures.push({ runner: "playwright", file, name: `${[...titles, spec.title].join(" ")}${project}` });
        if (test.status === "skipped") {
          const why = [...(test.annotations ?? []), ...(test.results ?? []).flatMap((r) => r.annotations ?? [])]
            .filter((a) => a.type === "skip" && a.description)
            .map((a) => a.description);
          skips.push({ runner: "playwright", file, name: `${[...titles, spec.title].join(" ")}${project}${why.length ? ` — ${[...new Set(why)].join("; ")}` : ""}` });
        }
      }
    }
    for (const child of suite.suites ?? []) walk(child, [...titles, child.title]);
  };
  // A top-level suite is the file itself: its title is the file name, not part of a test's name.
  for (const suite of report.suites ?? []) walk(suite, []);
  // Errors outside any test: global setup, the web server, a spec that does not load.
  for (const error of report.errors ?? []) {
    const at = error.location?.file ? relative(path.resolve(testDir, error.location.file), base) : "(the run)";
    failures.push({ runner: "playwright", file: at, name: `(error outside a test: ${firstLine(error.message)})` });
  }
  return { files: [...seconds].map(([file, s]) => ({ runner: "playwright", file, seconds: s })), skips, failures };
}

/**
 * The lines that end `npm test`'s output: every failed test and failed file,
 * `file › test`, under a header that counts them; none when nothing failed.
 * @param {import("./test-report.d.mts").ReportReading[]} reports
 */
export function failureLines(reports) {
  const failures = reports.flatMap((r) => r.failures ?? []);
  if (failures.length === 0) return [];
  return [`failed (${failures.length}; file › test):`, ...failures.map((f) => `  ${f.runner.padEnd(10)} ${f.file} › ${f.name}`)];
}

/**
 * Splits skips into those an allow-list entry explains and the rest.
 * @param {{runner: string, file: string, name: string}[]} skips
 * @param {ReadonlyArray<import("./skip-allowlist.d.mts").AllowedSkip>} allowList
 * @param {Record<string, string | undefined>} env the environment the suite ran in
 */
export function checkSkips(skips, allowList = ALLOWED_SKIPS, env = process.env) {
  const allowed = [];
  const unexplained = [];
  for (const skip of skips) {
    const entry = allowList.find((e) => e.file === skip.file && e.name.test(skip.name) && Object.entries(e.env ?? {}).every(([k, v]) => env[k] === v));
    if (entry) allowed.push({ ...skip, why: entry.why });
    else unexplained.push(skip);
  }
  return { allowed, unexplained };
}

/** The `count` slowest files, slowest first. */
export function slowestFiles(files, count = 10) {
  return [...files].sort((a, b) => b.seconds - a.seconds).slice(0, count);
}

/**
 * The summary's lines about the reports, and whether the skip check passed.
 * @param {{files: any[], skips: any[]}[]} reports
 */
export function summarise(reports, env = process.env) {
  const files = reports.flatMap((r) => r.files);
  const skips = reports.flatMap((r) => r.skips);
  const lines = [];
  const total = files.reduce((s, f) => s + f.seconds, 0);
  lines.push(`${Math.min(10, files.length)} slowest test files (of ${files.length}; ${total.toFixed(1)} s in test files altogether):`);
  for (const f of slowestFiles(files)) lines.push(`  ${f.seconds.toFixed(1).padStart(7)} s  ${f.runner.padEnd(10)} ${f.file}`);
  const { allowed, unexplained } = checkSkips(skips, ALLOWED_SKIPS, env);
  for (const s of allowed) lines.push(`skipped (allowed: ${s.why}): ${s.file} › ${s.name}`);
  for (const s of unexplained) lines.push(`SKIPPED WITHOUT AN ALLOWED REASON: ${s.file} › ${s.name}`);
  if (unexplained.length > 0) {
    lines.push(`skip check FAILED: ${unexplained.length} test(s) skipped for a reason not on the allow-list (tools/lib/skip-allowlist.mjs lists the kernel features a test may be skipped for; run as root, or fix the test)`);
  }
  return { lines, ok: unexplained.length === 0, allowed, unexplained };
}

function main(argv) {
  const reports = [];
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    const file = argv[i + 1];
    if ((flag !== "--vitest" && flag !== "--playwright") || file === undefined) {
      console.error("usage: node tools/lib/test-report.mjs [--vitest FILE] [--playwright FILE]");
      return 2;
    }
    const report = JSON.parse(fs.readFileSync(file, "utf8"));
    reports.push(flag === "--vitest" ? readVitestReport(report) : readPlaywrightReport(report));
  }
  if (reports.length === 0) {
    console.error("usage: node tools/lib/test-report.mjs [--vitest FILE] [--playwright FILE]");
    return 2;
  }
  const { lines, ok } = summarise(reports);
  const failed = failureLines(reports);
  for (const line of [...lines, ...failed]) console.log(line);
  return ok && failed.length === 0 ? 0 : 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exit(main(process.argv.slice(2)));
