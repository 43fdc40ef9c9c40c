import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseManifest } from "../../server/capabilities/manifest-schema";
import { computeHostReadiness } from "../../server/capabilities/readiness";
import { ALL_FEATURES, validManifest } from "../../server/capabilities/test-fixtures";
import { parseCeiling } from "../ceiling/index";
import { BUNDLE_SCHEMA, readBundleDir } from "../../server/trust/bundle";
import { storeEntryName } from "../workers/bundle";
import { installShippedBundles } from "./bundle-run";
import { healthReport, summariseCeiling, type Measured } from "./health";

/**
 * The daemon installs the shipped bundles at start and the health report
 * carries each bundle capability's verified digest; a missing bundle leaves
 * that capability (only) not ready, with the reason.
 */

const base = fs.mkdtempSync(path.join(os.tmpdir(), "lh-health-bundles-"));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));
const RUNNER_DIGEST = `sha256:${"2".repeat(64)}`;
const ceiling = parseCeiling({ version: 1, workspace_root: "/srv/ws", exec_dirs: ["/usr/bin"], egress: [], max: { memory_bytes: 1 << 30, cpus: 2, pids: 512, timeout_ms: 60_000, output_bytes: 8 << 20, tmpfs_bytes: 64 << 20, tmpfs_inodes: 4096 } });

function measured(bundles: Measured["bundles"]): Measured {
  return { tier: "C", bpf: null, ceiling: summariseCeiling(ceiling), host_paths: [], kernel_features: ALL_FEATURES, probe: { error: "not probed in this test" }, self_test: "pass", self_test_detail: "", digest: RUNNER_DIGEST, bundles, agent_shell: null };
}

function shipApkStatic(workersDir: string): string {
  const dir = path.join(workersDir, "apk-static");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "bundle.json"), JSON.stringify({ schema: BUNDLE_SCHEMA, capability: "apk-static", version: "1.0.0", runtime: "node", entry: "worker.mjs" }));
  fs.writeFileSync(path.join(dir, "worker.mjs"), 'console.log("{}")\n');
  return readBundleDir(dir).digest;
}

const apkManifest = (digest: string) => parseManifest(validManifest({ id: "apk-static", version: "1.0.0", trust_boundary: "static-analysis", worker_digest: digest }), "test:apk-static");
const report = (m: Measured) => ({ host: "h", online: true, reported_at: new Date().toISOString(), tier: m.tier, kernel_features: m.kernel_features, workers: healthReport(m, { size: 0, failure: null }, true).workers });

describe("health report: bundle capabilities", () => {
  it("reports the installed bundle's verified digest for apk-static and the runner digest for the others; the hub finds it ready against the shipped pin", () => {
    const workers = path.join(base, "ok", "workers");
    const digest = shipApkStatic(workers);
    const bundles = installShippedBundles(path.join(base, "ok", "state-workers"), workers);
    expect(bundles).toEqual({ "apk-static": { digest, version: "1.0.0", detail: null } });
    const m = measured(bundles);
    const byCap = Object.fromEntries(healthReport(m, { size: 0, failure: null }, true).workers.map((w) => [w.capability, w]));
    expect(byCap["apk-static"]).toEqual({ capability: "apk-static", capability_api: 1, worker_abi: 1, version: "1.0.0", digest, self_test: "pass" });
    expect(byCap["shell"]).toMatchObject({ digest: RUNNER_DIGEST, self_test: "pass" });
    expect(computeHostReadiness(apkManifest(digest), report(m)).state).toBe("ready");
    expect(computeHostReadiness(apkManifest(`sha256:${"3".repeat(64)}`), report(m))).toMatchObject({ state: "installed", reasons: [`worker content digest ${digest} differs from the manifest's sha256:${"3".repeat(64)}`] });
  });

  it("a missing bundle: apk-static reports no digest, not_run and why; every other capability is unaffected", () => {
    const bundles = installShippedBundles(path.join(base, "missing", "state-workers"), path.join(base, "missing", "workers"));
    expect(bundles["apk-static"]).toMatchObject({ digest: null, detail: expect.stringContaining("no worker bundle at") });
    const m = measured(bundles);
    const workers = healthReport(m, { size: 0, failure: null }, true).workers;
    expect(workers.find((w) => w.capability === "apk-static")).toMatchObject({ digest: null, self_test: "not_run", detail: expect.stringContaining("npm run build") });
    expect(workers.filter((w) => w.capability !== "apk-static").every((w) => w.digest === RUNNER_DIGEST && w.self_test === "pass")).toBe(true);
    const readiness = computeHostReadiness(apkManifest(`sha256:${"3".repeat(64)}`), report(m));
    expect(readiness.state).toBe("installed");
    expect(readiness.reasons.join("; ")).toContain("guest says: no worker bundle at");
  });

  it("a store entry tampered with between starts is re-verified at the next start and replaced by the shipped bytes", () => {
    const workers = path.join(base, "restart", "workers");
    const digest = shipApkStatic(workers);
    const store = path.join(base, "restart", "state-workers");
    installShippedBundles(store, workers);
    const entry = path.join(store, storeEntryName(digest));
    fs.chmodSync(entry, 0o755);
    fs.chmodSync(path.join(entry, "worker.mjs"), 0o644);
    fs.writeFileSync(path.join(entry, "worker.mjs"), "process.exit(0)\n");
    expect(installShippedBundles(store, workers)["apk-static"]).toEqual({ digest, version: "1.0.0", detail: null });
    expect(fs.readFileSync(path.join(entry, "worker.mjs"), "utf8")).toBe('console.log("{}")\n');
  });
});

describe("health report host paths", () => {
  it("reports the ceiling's host paths whole and the snapshots given, most recent first as given", () => {
    const withPaths = parseCeiling({ version: 1, workspace_root: "/srv/ws", exec_dirs: ["/usr/bin"], egress: [], host_paths: [{ label: "logs", path: "/var/log", mode: "ro" }], max: { memory_bytes: 1 << 30, cpus: 2, pids: 512, timeout_ms: 60_000, output_bytes: 8 << 20, tmpfs_bytes: 64 << 20, tmpfs_inodes: 4096 } });
    const snapshot = { id: "s1", label: "app", created_at: new Date(0).toISOString(), bytes: 3, files: 1, tree_digest: `sha256:${"a".repeat(64)}` };
    const report = healthReport({ ...measured({}), host_paths: withPaths.host_paths ?? [] }, { size: 0, failure: null }, true, [snapshot]);
    expect(report.host_paths).toEqual([{ label: "logs", path: "/var/log", mode: "ro" }]);
    expect(report.snapshots).toEqual([snapshot]);
    expect(healthReport(measured({}), { size: 0, failure: null }, true).host_paths).toEqual([]);
  });
});
