import { defineConfig } from "vitest/config";

// Unit and database tests. Browser tests are Playwright's (e2e/), not vitest's.
export default defineConfig({
  test: {
    include: ["server/**/*.test.ts", "tools/**/*.test.ts", "test/**/*.test.ts", "native/**/*.test.ts", "agent-guest/**/*.test.ts"],
    exclude: ["node_modules/**", "e2e/**", ".next/**", "dist/**"],
    // Tests run the real executables, which run only the compiled dist/.
    globalSetup: ["tools/lib/vitest-build.mjs"],
    // A fresh PGlite takes seconds to initialise; a real hub start takes longer.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    reporters: ["default"],
  },
});
