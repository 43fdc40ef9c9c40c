#!/usr/bin/env node
// `npm test`: the whole suite from a fresh clone. Installs what the tests
// need (npm packages; Debian's chromium and PostgreSQL when missing), builds,
// type-checks and lints (niced, beside the vitest steps), runs unit and
// database tests against PGlite AND a
// throwaway PostgreSQL server and the browser tests, and ends with one
// summary line. vitest runs three times (test/README.md, "How the suite
// runs"): the shared and parallel groups (two workers); then the serial
// group (SERIAL_WORKERS files at a time) side by side with Playwright (one worker),
// each line of those two prefixed with its runner; then the alone group,
// with the machine to itself. vitest runs in shuffled order (vitest.config.ts) with a seed
// printed at the start and in the summary: LEASEHOLD_TEST_SEED=N repeats it.
// The summary lists the ten slowest test files of both runners, the ten
// vitest files that used the most CPU, how busy the machine was in each
// step, and fails the run when a test was skipped for a reason
// tools/lib/skip-allowlist.mjs does not accept (only absent kernel features
// are: never "needs root"). The
// output ends with every failed test and failed file of both runners, named
// `file › test`, so the tail of a CI log says what failed.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureDebianPackages } from "./lib/apt.mjs";
import { ensureNodeModules } from "./lib/deps.mjs";
import { startTemporaryPostgres } from "./lib/postgres.mjs";
import { watchForLeftoverWorkspaces } from "./lib/leftover-mounts.mjs";
import { chooseSeed, seedLine } from "./lib/test-seed.mjs";
import { failureLines, readPlaywrightReport, readVitestReport, summarise } from "./lib/test-report.mjs";
import { busyShare, machineCpu, readCpuLog } from "./lib/cpu-use.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const cache = path.join(root, ".cache");
fs.mkdirSync(cache, { recursive: true });
process.env.NEXT_TELEMETRY_DISABLED = "1";
// Test fixtures still run TypeScript through tsx (as root here): no compile
// cache in the shared temporary directory, which a local user could pre-create.
process.env.TSX_DISABLE_CACHE = "1";

const results = [];
/** Each vitest file's CPU seconds (tools/lib/cpu-probe.mjs), one JSON line per file. */
const cpuLog = path.join(cache, "cpu-files.jsonl");
fs.rmSync(cpuLog, { force: true });
const totals = { passed: 0, failed: 0, skipped: 0 };
/** What each runner's JSON report says: per-file times and skipped tests (tools/lib/test-report.mjs). */
const readings = [];

async function step(name, fn) {
  console.log(`\n=== ${name} ===`);
  const started = Date.now();
  const cpuBefore = machineCpu();
  let ok = false;
  try {
    ok = (await fn()) !== false;
  } catch (error) {
    console.error(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const seconds = (Date.now() - started) / 1000;
  // The whole machine's share, lanes beside this step included: near 100% means the step waited for CPU.
  const busy = busyShare(cpuBefore, machineCpu());
  results.push({ name, ok, seconds, ...(seconds < 0.5 ? {} : { busy }) });
  // A step that was done before it was awaited (the checks beside the vitest steps) has no share of its own to show.
  const share = seconds < 0.5 ? "" : `, machine ${(busy * 100).toFixed(0)}% busy`;
  console.log(`=== ${name}: ${ok ? "ok" : "FAILED"} (${seconds.toFixed(1)} s${share}) ===`);
  return ok;
}

/**
 * Runs a command on this terminal; resolves true on exit status 0. Not
 * spawnSync: the checks running beside the tests are read through pipes
 * this process must keep draining (and timing) while it waits.
 */
function run(cmd, args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
    child.on("error", (error) => { console.error(`${cmd}: ${error.message}`); resolve(false); });
    child.on("close", (code) => resolve(code === 0));
  });
}

/** Runs a command without a terminal in between; resolves with its exit status and everything it printed. */
function runBuffered(cmd, args) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env: process.env, stdio: ["ignore", "pipe", "pipe"] });
    const chunks = [];
    child.stdout.on("data", (d) => chunks.push(d));
    child.stderr.on("data", (d) => chunks.push(d));
    child.on("error", (error) => resolve({ ok: false, output: `${cmd}: ${error.message}\n`, seconds: 0 }));
    child.on("close", (code) => resolve({ ok: code === 0, output: Buffer.concat(chunks).toString(), seconds: (Date.now() - started) / 1000 }));
  });
}

/**
 * Runs a command beside another, each line it prints prefixed with `tag`
 * (a partial line waits for its end), so two runs' output stays readable
 * interleaved; resolves true on exit status 0.
 */
function runTagged(tag, cmd, args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const pass = (stream, out) => {
      let pending = "";
      stream.setEncoding("utf8");
      stream.on("data", (text) => {
        const lines = (pending + text).split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) out.write(`${tag} ${line}\n`);
      });
      stream.on("end", () => { if (pending !== "") out.write(`${tag} ${pending}\n`); });
    };
    pass(child.stdout, process.stdout);
    pass(child.stderr, process.stderr);
    child.on("error", (error) => { console.error(`${tag} ${cmd}: ${error.message}`); resolve(false); });
    child.on("close", (code) => resolve(code === 0));
  });
}

/** Prints a buffered run's output; true when it succeeded. */
function print(result) {
  process.stdout.write(result.output);
  console.log(`(ran ${result.seconds.toFixed(1)} s, niced, beside the vitest steps)`);
  return result.ok;
}

const bin = (name) => path.join(root, "node_modules", ".bin", name);
const began = Date.now();

// The shuffle seed: LEASEHOLD_TEST_SEED repeats an order, else a fresh one.
let seed;
try {
  seed = chooseSeed();
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(2);
}
console.log(seedLine(seed));
// vitest gets it as --sequence.seed; the hubs and CLIs the tests start refuse unknown LEASEHOLD_* settings.
delete process.env.LEASEHOLD_TEST_SEED;
const cleanUpWorkspaces = watchForLeftoverWorkspaces(root);

await step("setup", () => {
  ensureNodeModules(root);
  ensureDebianPackages(["chromium", "chromium-headless-shell", "iproute2", "e2fsprogs", "python3", "python3-cryptography", "haproxy"]); // haproxy: the replica tests' load balancer (test/support/cluster.ts); iproute2: `ip` for the two-host network-namespace test; e2fsprogs: mkfs.ext4 for the guest's bounded workspace; python3: the sandbox's interpreter-environment test (PYTHONSAFEPATH); python3-cryptography: docs/verify.md's recipe, run by test/guest/verify-recipe-pglite.test.ts
});
const built = await step("build", () => {
  const r = spawnSync(process.execPath, [path.join(root, "tools/build.mjs")], { cwd: root, stdio: "inherit" });
  return r.status === 0;
});
// Typecheck and lint run beside the vitest steps, niced, and are reported
// before the alone step: the vitest steps leave a fifth of both cores idle
// (waiting on hubs, guests and sleeps), which these two single-threaded
// checks fill, instead of holding the tests back by their own ~50 s. Nothing
// the tests write is theirs to read: no test writes source into the checkout
// (the boundary-lint fixtures are linted as text, test/support/boundary-lint.ts).
const eslintCache = path.join(root, "node_modules", ".cache", "eslint");
const typecheck = runBuffered("nice", ["-n", "10", bin("tsc"), "--noEmit", "-p", "tsconfig.json"]);
// --cache re-lints only files whose content or config changed. The typed
// rules also read other files' types, so a type change elsewhere can leave
// a cached file's finding stale until it is edited; the typecheck beside it
// still sees every file.
const lint = runBuffered("nice", ["-n", "10", bin("eslint"), "--max-warnings=0", "--cache", "--cache-strategy", "content", "--cache-location", `${eslintCache}/`, "."]);

let postgres;
await step("start a PostgreSQL test server", async () => {
  postgres = await startTemporaryPostgres();
  console.log(`PostgreSQL test server at ${postgres.url} (${postgres.binDir})`);
});

/**
 * One vitest run of the given projects (vitest.config.ts), with the seed and
 * a JSON report of its own read into the totals and the summary; `tag`
 * prefixes its lines when it runs beside another runner.
 */
async function vitest(projects, report, tag) {
  const out = path.join(cache, report);
  fs.rmSync(out, { force: true });
  const args = ["run", ...projects.flatMap((p) => ["--project", p]), `--sequence.seed=${seed}`, "--reporter=default", "--reporter=json", `--outputFile.json=${out}`];
  // Database tests run on both; without this URL the PostgreSQL half fails.
  const env = { TEST_POSTGRES_URL: postgres?.url ?? "", TEST_CPU_LOG: cpuLog };
  const ok = tag === undefined ? await run(bin("vitest"), args, env) : await runTagged(tag, bin("vitest"), args, env);
  if (!fs.existsSync(out)) return false;
  const parsed = JSON.parse(fs.readFileSync(out, "utf8"));
  totals.passed += parsed.numPassedTests;
  totals.failed += parsed.numFailedTests + (parsed.numFailedTestSuites > 0 && parsed.numFailedTests === 0 ? parsed.numFailedTestSuites : 0);
  totals.skipped += parsed.numPendingTests + parsed.numTodoTests;
  readings.push(readVitestReport(parsed, root));
  return ok;
}

try {
  console.log(seedLine(seed));
  await step("unit and database tests (vitest shared + parallel: PGlite + PostgreSQL)", () => vitest(["shared", "parallel"], "vitest.json"));

  // The serial group (SERIAL_WORKERS files at a time, each waiting on kernel and child
  // processes much of its time) beside the browser tests (about one core).
  // None counts or sweeps what another holds (test/README.md, "How the suite runs").
  await Promise.all([
    step("kernel-resource tests (vitest serial, beside playwright)", () => vitest(["serial"], "vitest-serial.json", "[serial]")),
    step("browser tests (playwright, Debian chromium, beside vitest serial)", async () => {
      if (!built) {
        console.error("skipped: the build failed");
        totals.failed += 1;
        return false;
      }
      const out = path.join(cache, "playwright.json");
      fs.rmSync(out, { force: true });
      const ok = await runTagged("[e2e]", bin("playwright"), ["test", "--reporter=list,json"], { PLAYWRIGHT_JSON_OUTPUT_NAME: out });
      if (!fs.existsSync(out)) return false;
      const report = JSON.parse(fs.readFileSync(out, "utf8"));
      const stats = report.stats;
      readings.push(readPlaywrightReport(report, root));
      totals.passed += stats.expected + stats.flaky;
      totals.failed += stats.unexpected;
      totals.skipped += stats.skipped;
      return ok;
    }),
  ]);

  // Each check's own run time is in its "(ran …)" line; the step's is what was left to wait for.
  await step("typecheck (ran beside the vitest steps)", () => typecheck.then(print));
  await step("lint (ran beside the vitest steps)", () => lint.then(print));
  await step("timed tests with the machine to themselves (vitest alone)", () => vitest(["alone"], "vitest-alone.json"));
} finally {
  postgres?.stop();
  cleanUpWorkspaces();
}

console.log("\n=== summary ===");
// Skips are named, never only counted, and each must be on the allow-list.
const report = summarise(readings);
for (const line of report.lines) console.log(line);
if (fs.existsSync(cpuLog)) {
  const cpu = readCpuLog(fs.readFileSync(cpuLog, "utf8"));
  console.log(`${cpu.top.length} vitest files using the most CPU (of ${cpu.files}; ${cpu.total.toFixed(0)} CPU-s in test files altogether: the file's process and the children it waited for)${cpu.unreadable ? `; ${cpu.unreadable} unreadable line(s)` : ""}:`);
  for (const f of cpu.top) console.log(`  ${f.cpu.toFixed(1).padStart(7)} CPU-s  (${f.self.toFixed(1)} own, ${f.children.toFixed(1)} children)  ${f.file}`);
}
results.push({ name: "skip check (tools/lib/skip-allowlist.mjs)", ok: report.ok, seconds: 0 });
for (const r of results) console.log(`${r.ok ? "ok    " : "FAILED"}  ${r.name} (${r.seconds.toFixed(1)} s${r.busy === undefined ? "" : `, machine ${(r.busy * 100).toFixed(0)}% busy`})`);
const failedSteps = results.filter((r) => !r.ok).length;
console.log(`total time ${((Date.now() - began) / 1000).toFixed(1)} s; ${failedSteps} failed step(s)`);
if (failedSteps > 0 && totals.failed === 0) totals.failed = failedSteps;
console.log(`tests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
console.log(seedLine(seed));
// Last, because a CI log shows only its tail: which tests failed, by name.
for (const line of failureLines(readings)) console.log(line);
process.exit(failedSteps === 0 && totals.failed === 0 ? 0 : 1);
