import { defineConfig } from "@playwright/test";
import { E2E_BASE_URL, E2E_DATA_DIR, E2E_PORT } from "./e2e/support/hub";

/**
 * Browser tests in Debian's chromium (never a downloaded browser). The hub is
 * started exactly as a user starts it, on its own port and a throwaway data
 * directory that is wiped before each run.
 */
const port = E2E_PORT;
const dataDir = E2E_DATA_DIR;
const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"];
/** Tests tagged so need the full browser (see the projects below). */
const FULL_BROWSER = /@full-browser/;

export default defineConfig({
  testDir: "e2e",
  testMatch: "**/*.spec.ts",
  timeout: 60_000,
  // CI machines are shared and noisy (2 cores): a sign-in hashes with argon2id, so allow page transitions time.
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: "list",
  use: {
    baseURL: E2E_BASE_URL,
    trace: "off",
  },
  projects: [
    // Debian's old headless shell (package chromium-headless-shell): the same Blink and V8 as the full
    // browser without its browser UI layer; on two cores the console spec took 32-37 chromium CPU-s
    // here against 37-49 in the full chromium.
    { name: "chromium-headless-shell", grepInvert: FULL_BROWSER, use: { launchOptions: { executablePath: "/usr/bin/chromium-headless-shell", args: CHROMIUM_ARGS } } },
    // The shell keeps no notifications (a service worker's showNotification leaves getNotifications
    // empty): the push test that reads them is tagged @full-browser and runs in the full browser.
    { name: "chromium", grep: FULL_BROWSER, use: { launchOptions: { executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS } } },
  ],
  webServer: {
    // A hub killed before it stopped its local guest leaves the guest's
    // workspace image mounted inside the data directory: unmount it first,
    // or rm -rf would empty the image and then fail on the busy mount point.
    command: `(umount -l '${dataDir}/workspace' 2>/dev/null || true) && rm -rf '${dataDir}' && node bin/leasehold.mjs start`,
    url: `http://127.0.0.1:${port}/api/health`,
    reuseExistingServer: false,
    // SIGTERM, not SIGKILL: the hub stops its local guest, which unmounts the workspace image.
    gracefulShutdown: { signal: "SIGTERM", timeout: 15_000 },
    timeout: 120_000,
    stdout: "pipe",
    // A 12 s orphan window (default 30 s, at least 10 s): e2e/liveness.spec.ts waits it out, and no other spec reads liveness.
    env: { LEASEHOLD_PORT: String(port), LEASEHOLD_DATA_DIR: dataDir, NEXT_TELEMETRY_DISABLED: "1", LEASEHOLD_APPROVAL_ORPHANED_S: "12" },
  },
});
