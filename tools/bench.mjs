#!/usr/bin/env node
// `npm run bench`: every benchmark in turn, each printing its own table as it
// runs (streamed), and each writing its figures as JSON through
// tools/lib/bench-report.ts. The hub benches run twice: on embedded PGlite
// (what a new install gets) and on a throwaway PostgreSQL server started for
// that run (tools/lib/postgres.mjs). Results land in bench-results/
// (git-ignored): <bench>.json per bench and summary.json for the whole run.
// Figures are printed and written, never judged: a bench "fails" only when
// it exits non-zero or writes no figures.
//
//   npm run bench                      everything, full sizes
//   npm run bench -- --quick           smaller N everywhere (minutes, noisier);
//                                      `npm run bench --quick` works too
//   npm run bench -- --only mcp,launch only these (names below; --list prints them)
//   npm run bench -- --docs            also rewrite, in docs/benchmarks.md, the section
//                                      of each bench that prints one (report meta
//                                      `markdown`) between its <!-- bench:NAME --> markers;
//                                      only from a run that passed
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { staleReason } from "../bin/compiled.mjs";
import { freePort, startTemporaryPostgres } from "./lib/postgres.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const results = path.join(root, "bench-results");

/**
 * needs: "root" (sandbox launches, cgroups, BPF), "build" (the hub's built
 * web app and dist/ executables: `node tools/build.mjs`), "chromium" (Playwright).
 * databases: which databases a hub bench runs on; a bench without it runs once
 * and uses none (or, like `ledger`, starts its own).
 * args/env: (quick) => what to pass; quick sizes keep a whole run to minutes.
 */
const BENCHES = [
  { name: "launch", file: "native/bench/launch.bench.ts", needs: ["root"], env: (q) => ({ BENCH_N: q ? "50" : "200" }) },
  { name: "egress", file: "native/bench/egress.bench.ts", needs: ["root"], env: (q) => ({ BENCH_N: q ? "15" : "50" }) },
  { name: "bpf", file: "native/bench/bpf.bench.ts", needs: ["root"], env: (q) => (q ? { BENCH_ROUNDS: "2", BENCH_N: "100" } : {}) },
  // 1 GiB / 10,000 files by default: needs ~3 GiB free under /tmp/leasehold-bench while it runs.
  { name: "snapshots", file: "agent-guest/bench/snapshots.bench.ts", needs: ["root"], env: (q) => (q ? { BENCH_MB: "64", BENCH_FILES: "1000", BENCH_ROUNDS: "2", BENCH_N: "10" } : {}) },
  { name: "scrub", file: "server/trust/scrub/bench/scrub.bench.ts", needs: [], env: (q) => (q ? { BENCH_MB: "8", BENCH_SECRETLINT_MB: "1" } : {}) },
  { name: "apk-worker", file: "agent-guest/workers/apk-static/bench/apk.bench.ts", needs: [] },
  // Rates the legit (false-hold) and must-hold corpora with the risk gate and three peer models: seconds, no quick mode needed.
  { name: "risk", file: "server/policy/risk/bench-risk/main.ts", needs: [] },
  { name: "verify", file: "server/ledger/bench/verify.bench.ts", needs: [], args: (q) => (q ? ["100000"] : []) },
  // Starts its own throwaway PostgreSQL (fsync on): PostgreSQL only by design.
  { name: "ledger", file: "server/ledger/bench/ledger.bench.ts", needs: [], env: (q) => (q ? { BENCH_SECONDS: "1", BENCH_ENTRIES: "20000" } : {}) },
  { name: "mcp", file: "server/mcp/bench/mcp.bench.ts", needs: ["build"], databases: ["pglite", "postgres"], args: (q) => [q ? "3" : "5"] },
  // The long forms of test/mcp/hub-suite.ts's hostile fuzz and test/hub/http-hardening.test.ts's keep-alive and session checks.
  { name: "mcp-fuzz", file: "server/mcp/bench/fuzz.ts", needs: ["build"], databases: ["pglite", "postgres"], args: (q) => [q ? "5000" : "100000"] },
  { name: "http-soak", file: "test/hub/bench/http-soak.bench.ts", needs: ["build"], env: (q) => (q ? { BENCH_CALLS: "34" } : {}) },
  // Calls the pipeline on the hub's database from the bench process: PostgreSQL only (TEST_POSTGRES_URL).
  { name: "e2e", file: "agent-guest/bench/e2e.bench.ts", needs: ["root", "build"], databases: ["postgres"], args: (q) => [q ? "20" : "60"] },
  { name: "apk-e2e", file: "agent-guest/bench/apk-e2e.bench.ts", needs: ["root", "build"], databases: ["pglite", "postgres"], env: (q) => (q ? { BENCH_APK_MB: "1" } : {}) },
  { name: "mcp-e2e", file: "agent-guest/bench/mcp-e2e.bench.ts", needs: ["root", "build"], databases: ["pglite", "postgres"], args: (q) => (q ? ["20"] : []) },
  // Playwright against `leasehold start` on PGlite (playwright.config.ts's web server).
  { name: "approvals-latency", playwright: "e2e/bench.config.ts", file: "e2e/approvals-latency.bench.ts", needs: ["root", "build", "chromium"], env: (q) => (q ? { BENCH_ACTIONS: "10" } : {}) },
];

function usage(message) {
  if (message) console.error(`bench: ${message}`);
  console.error(`usage: npm run bench -- [--quick] [--docs] [--only ${BENCHES.map((b) => b.name).join(",")}] [--list]`);
  process.exit(2);
}

function parseArgs(argv, env) {
  // `npm run bench --quick` (no `--`) hands npm the flag, which passes it on as npm_config_quick.
  const options = { quick: env.npm_config_quick === "true", only: undefined, list: false, docs: env.npm_config_docs === "true" };
  if (env.npm_config_only) options.only = env.npm_config_only.split(",").map((s) => s.trim()).filter(Boolean);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--quick") options.quick = true;
    else if (arg === "--list") options.list = true;
    else if (arg === "--docs") options.docs = true;
    else if (arg === "--only" || arg.startsWith("--only=")) {
      const value = arg === "--only" ? argv[++i] : arg.slice("--only=".length);
      if (value === undefined || value === "") usage("--only needs a comma-separated list of bench names");
      options.only = value.split(",").map((s) => s.trim()).filter(Boolean);
    } else usage(`unknown argument ${arg}`);
  }
  return options;
}

/** What is missing for these benches, as sentences that say what to do. */
function missingPrerequisites(benches) {
  const needs = new Set(benches.flatMap((b) => b.needs));
  const missing = [];
  const who = (need) => benches.filter((b) => b.needs.includes(need)).map((b) => b.name).join(", ");
  if (needs.has("root") && process.getuid?.() !== 0) missing.push(`root is needed (sandbox launches, cgroups, BPF) by: ${who("root")} — run as root, or leave them out with --only`);
  if (needs.has("build")) {
    const stale = fs.existsSync(path.join(root, ".next", "BUILD_ID")) ? staleReason() : "the web app is not built (.next/BUILD_ID is missing)";
    if (stale) missing.push(`the built hub is needed by: ${who("build")} — ${stale}; run \`node tools/build.mjs\` first`);
  }
  if (needs.has("chromium") && !fs.existsSync("/usr/bin/chromium-headless-shell")) missing.push(`Debian's chromium headless shell (/usr/bin/chromium-headless-shell, playwright.config.ts) is needed by: ${who("chromium")} — apt-get install chromium-headless-shell, or run \`npm test\` once`);
  for (const bench of benches) {
    if (!fs.existsSync(path.join(root, bench.file))) missing.push(`${bench.name}: ${bench.file} is missing`);
  }
  return missing;
}

function commandFor(bench, quick) {
  const args = bench.args?.(quick) ?? [];
  if (bench.playwright) return [process.execPath, [path.join(root, "node_modules", "@playwright", "test", "cli.js"), "test", "-c", bench.playwright, "--reporter=list"]];
  return [process.execPath, [path.join(root, "node_modules", "tsx", "dist", "cli.mjs"), bench.file, ...args]];
}

function readReports(file) {
  if (!fs.existsSync(file)) return [];
  const parsed = JSON.parse(fs.readFileSync(file, "utf8"));
  return Array.isArray(parsed) ? parsed : [parsed];
}

async function runOne(bench, database, quick) {
  const partsDir = path.join(results, ".parts");
  fs.mkdirSync(partsDir, { recursive: true });
  const jsonFile = path.join(partsDir, `${bench.name}${database ? `.${database}` : ""}.json`);
  fs.rmSync(jsonFile, { force: true });
  const env = { ...process.env, ...(bench.env?.(quick) ?? {}), LEASEHOLD_BENCH_JSON: jsonFile, NEXT_TELEMETRY_DISABLED: "1" };
  // A hub bench picks its database from DATABASE_URL (TEST_POSTGRES_URL for e2e): never inherit the caller's.
  delete env.DATABASE_URL;
  delete env.TEST_POSTGRES_URL;
  let pg;
  if (bench.playwright) env.E2E_PORT = String(await freePort());
  const label = `${bench.name}${database ? ` (${database})` : ""}`;
  console.log(`\n=== bench ${label} ===`);
  const started = Date.now();
  let status = null;
  let error;
  try {
    if (database === "postgres") {
      pg = await startTemporaryPostgres();
      env.DATABASE_URL = pg.url;
      env.TEST_POSTGRES_URL = pg.url;
    }
    const [cmd, args] = commandFor(bench, quick);
    console.log(`$ ${[path.relative(root, args[0]) || args[0], ...args.slice(1)].join(" ")}`);
    const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env });
    status = r.status;
    if (r.error) error = r.error.message;
    else if (r.status !== 0) error = r.signal ? `killed by ${r.signal}` : `exited with status ${r.status}`;
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  } finally {
    pg?.stop();
  }
  let reports = [];
  try {
    reports = readReports(jsonFile);
  } catch (e) {
    error ??= `its JSON (${jsonFile}) does not parse: ${e instanceof Error ? e.message : String(e)}`;
  }
  if (error === undefined && reports.length === 0) error = "it wrote no figures (LEASEHOLD_BENCH_JSON): is it wired to tools/lib/bench-report.ts?";
  const seconds = (Date.now() - started) / 1000;
  console.log(`=== bench ${label}: ${error ? `FAILED — ${error}` : "ok"} (${seconds.toFixed(1)} s) ===`);
  return { bench: bench.name, database: database ?? null, ok: error === undefined, error: error ?? null, exit_code: status, seconds, reports };
}

/**
 * Replaces the text between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`
 * in `doc` with `markdown`. Throws when the markers are missing or repeated:
 * figures are never appended somewhere a reader would not look.
 */
export function spliceBenchSection(doc, name, markdown) {
  const open = `<!-- bench:${name} -->`;
  const close = `<!-- /bench:${name} -->`;
  const start = doc.indexOf(open);
  const end = doc.indexOf(close);
  if (start < 0 || end < start || doc.indexOf(open, start + 1) >= 0) throw new Error(`docs/benchmarks.md needs exactly one ${open} … ${close} pair for the ${name} bench's figures`);
  return `${doc.slice(0, start + open.length)}\n${markdown.trim()}\n${doc.slice(end)}`;
}

function writeDocs(runs) {
  const file = path.join(root, "docs", "benchmarks.md");
  let doc = fs.readFileSync(file, "utf8");
  for (const run of runs) {
    const markdown = run.reports.map((r) => r.meta?.markdown).filter((m) => typeof m === "string").join("\n\n");
    if (markdown === "") continue;
    if (!run.ok) {
      console.error(`bench: docs/benchmarks.md keeps its ${run.bench} section: this run failed`);
      continue;
    }
    doc = spliceBenchSection(doc, run.bench, markdown);
    console.log(`bench: docs/benchmarks.md — ${run.bench} section rewritten from this run`);
  }
  fs.writeFileSync(file, doc);
}

async function main() {
  const options = parseArgs(process.argv.slice(2), process.env);
  if (options.list) {
    for (const b of BENCHES) console.log(`${b.name.padEnd(18)} ${b.file}${b.databases ? `  [${b.databases.join(", ")}]` : ""}${b.needs.length ? `  needs ${b.needs.join(", ")}` : ""}`);
    return;
  }
  const unknown = (options.only ?? []).filter((n) => !BENCHES.some((b) => b.name === n));
  if (unknown.length > 0) usage(`unknown bench ${unknown.join(", ")} (known: ${BENCHES.map((b) => b.name).join(", ")})`);
  const selected = options.only ? BENCHES.filter((b) => options.only.includes(b.name)) : BENCHES;
  const missing = missingPrerequisites(selected);
  if (missing.length > 0) {
    for (const m of missing) console.error(`bench: ${m}`);
    process.exit(2);
  }
  const began = new Date();
  const runs = [];
  for (const bench of selected) {
    const perBench = [];
    for (const database of bench.databases ?? [undefined]) perBench.push(await runOne(bench, database, options.quick));
    fs.writeFileSync(path.join(results, `${bench.name}.json`), JSON.stringify({ bench: bench.name, quick: options.quick, runs: perBench }, null, 2) + "\n");
    runs.push(...perBench);
  }
  fs.rmSync(path.join(results, ".parts"), { recursive: true, force: true });
  const failed = runs.filter((r) => !r.ok);
  const summary = {
    at: began.toISOString(),
    seconds: (Date.now() - began.getTime()) / 1000,
    quick: options.quick,
    host: { cpus: os.cpus().length, load_1m_at_end: os.loadavg()[0], node: process.version, kernel: os.release() },
    ok: failed.length === 0,
    failed: failed.map((r) => ({ bench: r.bench, database: r.database, error: r.error })),
    runs: runs.map((r) => ({ bench: r.bench, database: r.database, ok: r.ok, seconds: r.seconds, figures: r.reports.flatMap((rep) => rep.figures) })),
  };
  fs.writeFileSync(path.join(results, "summary.json"), JSON.stringify(summary, null, 2) + "\n");
  console.log(`\nbench: ${runs.length - failed.length}/${runs.length} runs ok in ${summary.seconds.toFixed(0)} s; figures in ${path.relative(process.cwd(), results) || results}/`);
  for (const f of failed) console.error(`bench: FAILED ${f.bench}${f.database ? ` (${f.database})` : ""}: ${f.error}`);
  if (options.docs) writeDocs(runs);
  if (failed.length > 0) process.exitCode = 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
