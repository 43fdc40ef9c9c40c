import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BUNDLE_CAPABILITIES } from "../../agent-guest/daemon/bundle-run";
import { BUNDLE_SCHEMA, readBundleDir } from "../trust/bundle";
import { thrownBy } from "../../test/support/refusals";
import { parseManifest } from "./manifest-schema";
import { computeHostReadiness } from "./readiness";
import { validManifest, hostReport, worker } from "./test-fixtures";
import { SHIPPED_BUNDLE_CAPABILITIES, pinShippedBundles } from "./worker-pins";

/**
 * A built-in bundle capability is pinned to the bundle the hub ships: its
 * manifest's worker_digest is the bundleDigest of dist/workers/<id>/, so a
 * host is ready only with those bytes. A missing bundle fails loudly.
 */

const base = fs.mkdtempSync(path.join(os.tmpdir(), "lh-pins-"));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

function shipped(id: string, code: string): string {
  const dir = path.join(base, "workers", id);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "bundle.json"), JSON.stringify({ schema: BUNDLE_SCHEMA, capability: id, version: "1.0.0", runtime: "node", entry: "worker.mjs" }));
  fs.writeFileSync(path.join(dir, "worker.mjs"), code);
  return dir;
}

const source = (id: string, extra: Record<string, unknown> = {}) => ({ source: `builtin:${id}.json`, manifest: validManifest({ id, version: "1.0.0", trust_boundary: "static-analysis", operations: [{ ...(validManifest()["operations"] as object[])[0], name: `${id.replace(/-/g, "_")}_run`, mutating: false }], ...extra }) });

describe("shipped worker bundles pin their built-in manifests", () => {
  it("fills worker_digest from the shipped bundle (the same bundleDigest the guest reports) and leaves other manifests untouched", () => {
    const digest = readBundleDir(shipped("apk-static", "console.log(1)\n")).digest;
    const [pinned, plain] = pinShippedBundles([source("apk-static"), source("shell")], { workersDir: path.join(base, "workers") });
    expect((pinned?.manifest as Record<string, unknown>)["worker_digest"]).toBe(digest);
    expect((plain?.manifest as Record<string, unknown>)["worker_digest"]).toBeUndefined();
    // A manifest that pins a digest itself keeps it.
    const own = `sha256:${"1".repeat(64)}`;
    expect((pinShippedBundles([source("apk-static", { worker_digest: own })], { workersDir: path.join(base, "workers") })[0]?.manifest as Record<string, unknown>)["worker_digest"]).toBe(own);
  });

  it("a host reporting the shipped digest is ready, one with other bytes is installed but not ready", () => {
    const digest = readBundleDir(shipped("apk-static", "console.log(2)\n")).digest;
    const [pinned] = pinShippedBundles([source("apk-static")], { workersDir: path.join(base, "workers") });
    const manifest = parseManifest(pinned!.manifest, pinned!.source);
    expect(manifest.worker_digest).toBe(digest);
    expect(computeHostReadiness(manifest, hostReport("h", [worker("apk-static", { digest })])).state).toBe("ready");
    expect(computeHostReadiness(manifest, hostReport("h", [worker("apk-static", { digest: `sha256:${"9".repeat(64)}` })])).state).toBe("installed");
  });

  it("a shipped-bundle capability without its bundle fails with CONFIG_INVALID naming the build", () => {
    const e = thrownBy(() => pinShippedBundles([source("apk-static")], { workersDir: path.join(base, "nowhere") }));
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.message).toContain("nowhere/apk-static");
    expect(e.hint).toContain("npm run build");
  });

  it("the hub's list of shipped-bundle capabilities is the guest's table of bundle capabilities", () => {
    expect([...SHIPPED_BUNDLE_CAPABILITIES].sort()).toEqual([...BUNDLE_CAPABILITIES]);
  });
});
