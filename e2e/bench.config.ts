/**
 * Benchmarks in the browser (printed, never asserted): the approvals latency
 * bench and any later `*.bench.ts`. The default config matches only
 * `*.spec.ts`, so `npm test` never runs these. Run:
 *   E2E_PORT=8801 npx playwright test -c e2e/bench.config.ts
 */
import path from "node:path";
import { defineConfig } from "@playwright/test";
import base from "../playwright.config";

export default defineConfig({
  ...base,
  testDir: ".",
  testMatch: "**/*.bench.ts",
  timeout: 30 * 60_000,
  outputDir: path.join(import.meta.dirname, "..", "test-results"),
  // Only the project of the headless shell: the full-browser project exists for a spec file, which is no bench.
  projects: (base.projects ?? []).filter((project) => project.name === "chromium-headless-shell"),
  // The hub refuses LEASEHOLD_ variables it does not know; LEASEHOLD_BENCH_JSON (set by `npm run bench`) is for
  // this bench process (tools/lib/bench-report.ts), not for the hub: undefined drops it from the server's environment.
  webServer:
    base.webServer === undefined || Array.isArray(base.webServer)
      ? base.webServer
      : { ...base.webServer, cwd: path.join(import.meta.dirname, ".."), env: { ...base.webServer.env, LEASEHOLD_BENCH_JSON: undefined as unknown as string } },
});
