import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { givenSeed } from "./tools/lib/test-seed.mjs";
import { aloneFiles, SERIAL_WORKERS, serialGlobs, sharedFiles, TEST_EXCLUDE, TEST_FILES } from "./tools/lib/test-groups.mjs";

/**
 * Shuffled order, always: test files and the cases inside each file run in
 * a random order, so a case that leans on what another left behind (a log
 * entry, a lease, a row) fails here rather than by luck elsewhere. The seed
 * makes an order reproducible: `npm test` (tools/test.mjs) picks one, prints
 * it and passes it as --sequence.seed; LEASEHOLD_TEST_SEED=N repeats it, with
 * `npm test` or with `npx vitest run <files>`. Without either, vitest picks
 * one and prints it ("Running tests with seed N").
 */
const seed = givenSeed();

/**
 * Four groups (tools/lib/test-groups.mjs says which file is in which, and
 * test/README.md why): "shared" and "parallel" run side by side, two files
 * at a time; then "serial" runs the files that take kernel resources
 * (sandboxes, guests, volumes, namespaces, VMs) SERIAL_WORKERS at a time; then
 * "alone" the few timed ones that need the machine to themselves. `npm
 * test` runs them as three vitest runs (--project), the serial one beside
 * the browser tests. A "parallel", "serial" or "alone" file gets a fresh
 * process; "shared" files — those that start nothing — run one after
 * another in each worker's one process, loading their modules once
 * (tools/lib/shared-guard.mjs refuses a child process there).
 */
// A `--sequence.*` option on the command line (tools/test.mjs passes the seed
// that way) replaces each project's `sequence` whole, groupOrder included;
// vitest still runs a single-worker project after the others then, so the
// alone group runs last either way; the serial group (SERIAL_WORKERS) then
// runs beside the others, which is why `npm test` gives it a vitest run of
// its own (--project serial).
const serial = serialGlobs(import.meta.dirname);
const alone = aloneFiles();
const shared = sharedFiles(import.meta.dirname);
// One figure for both: vitest runs projects of one groupOrder together only when their maxWorkers agree.
const PARALLEL_WORKERS = 2;
// Each file's CPU seconds, when TEST_CPU_LOG names a file (tools/test.mjs's summary lists the ten heaviest).
const CPU_PROBE = "tools/lib/cpu-probe.mjs";

// Unit and database tests. Browser tests are Playwright's (e2e/), not vitest's.
export default defineConfig({
  // The `~/` alias of tsconfig.json (`paths`): the repository root.
  resolve: { alias: { "~": path.dirname(fileURLToPath(import.meta.url)) } },
  test: {
    // Tests run the real executables, which run only the compiled dist/.
    globalSetup: ["tools/lib/vitest-build.mjs"],
    // A fresh PGlite takes seconds to initialise; a real hub start takes longer.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    sequence: { shuffle: true, ...(seed === undefined ? {} : { seed }) },
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: shared,
          exclude: TEST_EXCLUDE,
          isolate: false,
          setupFiles: ["tools/lib/shared-guard.mjs", CPU_PROBE],
          maxWorkers: PARALLEL_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "parallel",
          setupFiles: [CPU_PROBE],
          include: TEST_FILES,
          exclude: [...TEST_EXCLUDE, ...serial, ...shared],
          maxWorkers: PARALLEL_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "serial",
          setupFiles: [CPU_PROBE],
          include: serial,
          exclude: [...TEST_EXCLUDE, ...alone],
          maxWorkers: SERIAL_WORKERS,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: "alone",
          setupFiles: [CPU_PROBE],
          include: alone,
          exclude: TEST_EXCLUDE,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
