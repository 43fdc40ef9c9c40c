// Which vitest files may share the machine with another file, which run
// alone, and which may share a process. vitest.config.ts builds its three
// projects from this:
//
//   shared    two workers at once, each running file after file in ONE
//             process (isolate: false): files that start nothing — no hub,
//             sandbox, guest or child process — and change no process-wide
//             state. A database the file opens in its own process (an
//             in-memory PGlite, a scratch database on the test server) is
//             no such thing: the file opens and closes its own. They pay
//             for loading their modules once per worker instead of once
//             per file.
//   parallel  two workers at once, a fresh process per file: hubs, CLIs.
//   serial    SERIAL_WORKERS files at a time (two on two cores), after the others: files that
//             take kernel resources (sandbox launches, cgroups, loop-device
//             workspace volumes, network namespaces, VMs, real guests,
//             leftover-mount sweeps). Each names and counts only what it
//             made itself, so two run side by side, and the group runs
//             beside the browser tests (tools/test.mjs), whose hub runs
//             real sandboxes of its own.
//   alone     serial files that must not share the machine with anything,
//             not even the browser tests: ALONE_FILES, each with why. They
//             run last, one at a time.
//
// A file is serial when it sits under one of SERIAL_FOLDERS, or when its
// first lines carry the marker `test-group: serial` (in a comment, followed
// by the reason) — for a file elsewhere that launches a sandbox or a guest.
// A file that is not serial is shared unless its text shows one of
// ISOLATION_NEEDS (isolationNeed names the first), or it carries the marker
// `test-group: isolated` with its reason. The reading is deliberately
// coarse: a false "needs its own process" costs a second of start-up, a
// false "shared" could leak state between files. What the text cannot show,
// tools/lib/shared-guard.mjs enforces at run time: in the shared group a
// child process is refused, naming the file's way out (the marker).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Where vitest looks for test files. */
export const TEST_FILES = ["server/**/*.test.ts", "common/**/*.test.ts", "tools/**/*.test.ts", "test/**/*.test.ts", "native/**/*.test.ts", "agent-guest/**/*.test.ts"];
export const TEST_EXCLUDE = ["node_modules/**", "e2e/**", ".next/**", "dist/**"];

/** Folders whose every test file is serial: the native sandbox, the guest's workspace volumes, real guests and kernel egress. */
export const SERIAL_FOLDERS = ["native/", "agent-guest/workspace/", "agent-guest/daemon/", "test/guest/", "test/egress/", "test/apk/"];

/**
 * How many serial files run at once, beside the browser tests: one per
 * core, at most two. Each names and counts only the kernel objects it made
 * (cgroups, namespaces, interfaces, loop devices, leases), so a second
 * serial file trips it no more than the browser tests' own guest does (two
 * at once is tested); what cannot be scoped that way is in ALONE_FILES.
 * Two on two cores since the browser tests run in the headless shell: with
 * one, the serial step ran 331 s at 71% busy, 90 s of it alone after the
 * browser tests had ended at 239 s.
 */
export const SERIAL_WORKERS = Math.min(2, os.availableParallelism());

/**
 * Serial files that cannot share the machine even with the browser tests,
 * each with the reason: they time checks a second load on 2 cores stretches.
 * They are out of the serial project and form the "alone" one.
 */
export const ALONE_FILES = [
  { file: "test/replicas/readiness.test.ts", why: "times HAProxy's readiness checks (out within two checks of a fault, back within two of the fix): a second load on 2 cores stretches them" },
  { file: "test/replicas/replicas.test.ts", why: "times HAProxy's readiness check taking a draining replica out within two checks: a second load on 2 cores stretches it" },
];

/** The marker, looked for in a file's first MARKER_LINES lines. */
export const SERIAL_MARKER = /^\s*(?:\/\/|\*|\/\*\*?)\s*test-group: serial\b/m;
const MARKER_LINES = 40;

const ROOTS = [...new Set(TEST_FILES.map((glob) => glob.split("/")[0]))];

function testFilesUnder(root, top) {
  const dir = path.join(root, top);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((rel) => `${top}/${rel.split(path.sep).join("/")}`)
    .filter((rel) => rel.endsWith(".test.ts") && !TEST_EXCLUDE.some((ex) => rel.startsWith(ex.replace("/**", "/"))) && !rel.includes("/node_modules/"));
}

/** Whether the file's head carries the serial marker. */
export function hasSerialMarker(text) {
  return SERIAL_MARKER.test(text.split("\n", MARKER_LINES).join("\n"));
}

/** Test files (relative to `root`, forward slashes) outside SERIAL_FOLDERS that carry the marker. */
export function markedSerialFiles(root) {
  return ROOTS.flatMap((top) => testFilesUnder(root, top)).filter(
    (rel) => !SERIAL_FOLDERS.some((folder) => rel.startsWith(folder)) && hasSerialMarker(fs.readFileSync(path.join(root, rel), "utf8")),
  );
}

/** The include globs of the serial group: its folders and the marked files (the alone ones among them too; the serial project excludes those). */
export function serialGlobs(root) {
  return [...SERIAL_FOLDERS.map((folder) => `${folder}**/*.test.ts`), ...markedSerialFiles(root)];
}

/** The files of the alone group. */
export function aloneFiles() {
  return ALONE_FILES.map((entry) => entry.file);
}

/** The marker that keeps a file out of the shared group whatever its text shows (followed by the reason). */
export const ISOLATED_MARKER = /^\s*(?:\/\/|\*|\/\*\*?)\s*test-group: isolated\b/m;

/**
 * The test support modules that run wholly inside the test's process: no
 * hub, guest, cluster, namespace or child process. databases.ts opens an
 * in-memory PGlite or a scratch database on the test server, and the file
 * that asked closes it (describeEachDatabase's afterAll): measured over 100
 * opens and closes of the migrated template in one process, the resident
 * memory stayed flat (~570 MB): a PGlite is its own WASM instance, and
 * nothing in server/db keeps one past close. Module state such a file
 * reaches is per database or a cache any file may share: the migrated
 * template's dump (read once per process), WeakMaps keyed by a database or
 * a runtime, the host-nonce prune clock (server/hosts/auth.ts), the
 * sign-in timing average (server/admins/admins.ts). Paths from the
 * repository root, without `.ts`; every other support module (hub-process,
 * cluster, netns, tcp-forward, mcp-http, test/mcp/support,
 * test/guest/support) keeps a file out.
 */
export const IN_PROCESS_SUPPORT = ["test/support/random", "test/support/databases", "test/support/refusals", "test/support/count-transactions", "test/support/shell-policy", "test/support/deadline", "test/pipeline/support"];

const SUPPORT_IMPORT = /from\s+["']([^"']*\/support(?:\.ts|\/[\w.-]+)?)["']/g;

/**
 * Whether the text imports a support module outside IN_PROCESS_SUPPORT.
 * With the file's path (relative to the repository root) a relative import
 * is resolved; without it only an import naming the whole path from `test/`
 * (`../../test/support/databases`) can be recognised, and any other counts
 * as one that starts something.
 */
function importsStartingSupport(text, file) {
  for (const match of text.matchAll(SUPPORT_IMPORT)) {
    const spec = match[1].replace(/\.ts$/, "");
    const resolved = file !== undefined && spec.startsWith(".") ? path.posix.join(path.posix.dirname(file), spec) : spec;
    if (!IN_PROCESS_SUPPORT.some((mod) => resolved === mod || resolved.endsWith(`/${mod}`))) return true;
  }
  return false;
}

/**
 * What in a test file's text means it needs a process of its own: it
 * starts something, or it changes state vitest resets only with the
 * process. Each with the words the classification reports. Opening a
 * database is not on the list: see IN_PROCESS_SUPPORT.
 */
export const ISOLATION_NEEDS = [
  { pattern: /\bchild_process\b|\b(?:spawn|spawnSync|execFile|execFileSync|execSync|fork)\(/, why: "starts child processes" },
  { matches: importsStartingSupport, why: "imports a test support module that starts hubs, guests or clusters" },
  { pattern: /from\s+["'](?:\.\.\/)+(?:native|agent-guest)\//, why: "imports the sandbox or the guest" },
  { pattern: /\bworker_threads\b|\bnew Worker\(/, why: "starts threads" },
  // Measured: after one such file the worker's heap stayed ~600 MB larger, and every later file there paid for it in garbage collection (1.4–2.5x its CPU).
  { pattern: /from\s+["']eslint["']/, why: "runs ESLint, whose type-aware program stays in its module caches for the rest of the process" },
  { pattern: /\bvi\.(?:mock|doMock|unmock|doUnmock|hoisted|stubEnv|stubGlobal|spyOn|useFakeTimers|setSystemTime|resetModules)\b/, why: "mocks modules or globals, which vitest resets only with the process" },
  { pattern: /process\.env(?:\.\w+|\[[^\]]+\])\s*(?:=(?!=)|\?\?=|\|\|=)|delete\s+process\.env/, why: "changes the process environment" },
  { pattern: /process\.(?:chdir|on|once|addListener|umask|setuid|setgid|seteuid|setegid|exit)\(|process\.exitCode\s*=/, why: "changes process-wide state" },
  { pattern: /globalThis\.\w+\s*=(?!=)|globalThis\[[^\]]+\]\s*=(?!=)/, why: "sets globals" },
];

/** Why a test file's text needs a process of its own, or undefined when it may share one. `file`: its path from the repository root, to resolve its relative imports. */
export function isolationNeed(text, file) {
  if (ISOLATED_MARKER.test(text.split("\n", MARKER_LINES).join("\n"))) return "marked test-group: isolated";
  return ISOLATION_NEEDS.find((need) => (need.matches ? need.matches(text, file) : need.pattern.test(text)))?.why;
}

const RELATIVE_IMPORT = /(?:from|import)\s*\(?\s*["'](\.\.?\/[^"']+)["']/g;
/** Folders whose modules a test reads as part of itself: helpers that start things live here, product code does not (the guard catches that at run time). */
const HELPER_FOLDERS = ["test/", "tools/"];

/** The helper module a relative import names (test/ or tools/ only, with its extension), or undefined. */
function helperModule(root, from, spec) {
  const base = path.posix.join(path.posix.dirname(from), spec);
  if (!HELPER_FOLDERS.some((folder) => base.startsWith(folder))) return undefined;
  return [base, `${base}.ts`, `${base}.mjs`, `${base}/index.ts`].find((rel) => /\.(?:ts|mjs|js)$/.test(rel) && fs.existsSync(path.join(root, rel)) && fs.statSync(path.join(root, rel)).isFile());
}

/**
 * Why the file at `rel` needs a process of its own, reading with it every
 * helper module under test/ or tools/ it imports, however deep: a file that
 * hands its work to `./hub-suite` or to tools/lib/postgres.mjs starts what
 * they start.
 */
export function fileIsolationNeed(root, rel) {
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return undefined;
    seen.add(file);
    const text = fs.readFileSync(path.join(root, file), "utf8");
    const need = isolationNeed(text, file);
    if (need !== undefined) return file === rel ? need : `${need} (${file})`;
    for (const match of text.matchAll(RELATIVE_IMPORT)) {
      const helper = helperModule(root, file, match[1]);
      const found = helper === undefined ? undefined : visit(helper);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return visit(rel);
}

/** Test files (relative to `root`, forward slashes) of the shared group: neither serial nor in need of a process of their own. */
export function sharedFiles(root) {
  const serial = new Set(markedSerialFiles(root));
  return ROOTS.flatMap((top) => testFilesUnder(root, top))
    .filter((rel) => !SERIAL_FOLDERS.some((folder) => rel.startsWith(folder)) && !serial.has(rel))
    .filter((rel) => fileIsolationNeed(root, rel) === undefined)
    .sort();
}
