import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { givenSeed } from "./tools/lib/test-seed.mjs";

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

// Unit and database tests. Browser tests are Playwright's (e2e/), not vitest's.
export default defineConfig({
  // The `~/` alias of tsconfig.json (`paths`): the repository root.
  resolve: { alias: { "~": path.dirname(fileURLToPath(import.meta.url)) } },
  test: {
    include: ["server/**/*.test.ts", "common/**/*.test.ts", "tools/**/*.test.ts", "test/**/*.test.ts", "native/**/*.test.ts", "agent-guest/**/*.test.ts"],
    exclude: ["node_modules/**", "e2e/**", ".next/**", "dist/**"],
    // Tests run the real executables, which run only the compiled dist/.
    globalSetup: ["tools/lib/vitest-build.mjs"],
    // A fresh PGlite takes seconds to initialise; a real hub start takes longer.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    sequence: { shuffle: true, ...(seed === undefined ? {} : { seed }) },
    reporters: ["default"],
  },
});
