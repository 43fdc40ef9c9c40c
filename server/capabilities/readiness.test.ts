import { describe, expect, it } from "vitest";

import { parseManifest, type Manifest } from "./manifest-schema";
import { computeHostReadiness, computeReadiness, degradesHubHealth, isReadyOnHost, summariseCapabilityHealth } from "./readiness";
import { ALL_FEATURES, GOOD_DIGEST, hostReport, validManifest, worker } from "./test-fixtures";

const manifest: Manifest = parseManifest(validManifest({ id: "shell", version: "1.0.0", activation: "required" }), "test:shell");
const egressManifest: Manifest = parseManifest(
  validManifest({
    id: "egress-shell",
    version: "1.0.0",
    trust_boundary: "network-egress",
    activation: "opt-in",
    sandbox: { ...(validManifest()["sandbox"] as object), network: { egress: ["10.0.0.0/8:443"] } },
  }),
  "test:egress",
);

describe("computeHostReadiness", () => {
  it("is ready only with digest, matching ABI and version, passed self-test and the kernel features", () => {
    expect(computeHostReadiness(manifest, hostReport("h1", [worker("shell")]))).toEqual({ host: "h1", state: "ready", reasons: [] });
  });

  it.each([
    ["no digest", { digest: null }, "worker content digest not reported"],
    ["a malformed digest", { digest: "sha256:xyz" }, "worker content digest not reported"],
    ["another version", { version: "1.0.1" }, "worker version 1.0.1 differs from manifest version 1.0.0"],
    ["a failed self-test", { self_test: "fail" as const }, "worker self-test failed"],
    ["no self-test", { self_test: "not_run" as const }, "worker self-test not run"],
  ])("is installed, not ready, with %s", (_label, overrides, reason) => {
    const result = computeHostReadiness(manifest, hostReport("h1", [worker("shell", overrides)]));
    expect(result.state).toBe("installed");
    expect(result.reasons).toContain(reason);
  });

  it("is installed when the digest differs from the pinned one", () => {
    const result = computeHostReadiness(manifest, hostReport("h1", [worker("shell")]), { pinnedDigests: { shell: `sha256:${"cd".repeat(32)}` } });
    expect(result).toMatchObject({ state: "installed", reasons: ["worker content digest does not match the pinned digest"] });
    expect(computeHostReadiness(manifest, hostReport("h1", [worker("shell")]), { pinnedDigests: { shell: GOOD_DIGEST } }).state).toBe("ready");
  });

  it("with the manifest's worker_digest pinned: ready on exactly that digest; any other (or none) is installed, not ready, naming both digests and the guest's detail", () => {
    const pinned = parseManifest(validManifest({ id: "apk-static", version: "1.0.0", trust_boundary: "static-analysis", worker_digest: GOOD_DIGEST }), "test:apk");
    expect(computeHostReadiness(pinned, hostReport("h1", [worker("apk-static")]))).toEqual({ host: "h1", state: "ready", reasons: [] });
    const other = `sha256:${"ef".repeat(32)}`;
    const mismatch = computeHostReadiness(pinned, hostReport("h1", [worker("apk-static", { digest: other })]));
    expect(mismatch).toEqual({ host: "h1", state: "installed", reasons: [`worker content digest ${other} differs from the manifest's ${GOOD_DIGEST}`] });
    const missing = computeHostReadiness(pinned, hostReport("h1", [worker("apk-static", { digest: null, self_test: "not_run", detail: "no bundle at /opt/lh/dist/workers/apk-static" })]));
    expect(missing.state).toBe("installed");
    expect(missing.reasons).toEqual(["worker content digest not reported", "worker self-test not run", "guest says: no bundle at /opt/lh/dist/workers/apk-static"]);
    // An operator pin still applies on top of the manifest's.
    expect(computeHostReadiness(pinned, hostReport("h1", [worker("apk-static")]), { pinnedDigests: { "apk-static": other } }).state).toBe("installed");
  });

  it("is unsupported on an incompatible worker ABI or Capability API", () => {
    expect(computeHostReadiness(manifest, hostReport("h1", [worker("shell", { worker_abi: 2 })])).state).toBe("unsupported");
    expect(computeHostReadiness(manifest, hostReport("h1", [worker("shell", { capability_api: 2 })])).state).toBe("unsupported");
  });

  it("is unsupported when the kernel lacks a feature the policy needs, naming it", () => {
    const report = hostReport("h1", [worker("shell")], { kernel_features: ALL_FEATURES.filter((feature) => feature !== "landlock") });
    expect(computeHostReadiness(manifest, report)).toMatchObject({ state: "unsupported", reasons: ["host kernel lacks: landlock"] });
  });

  it("needs tier A or B for an egress allow-list; tier C cannot enforce one", () => {
    expect(computeHostReadiness(egressManifest, hostReport("h1", [worker("egress-shell")], { tier: "C" })).state).toBe("unsupported");
    expect(computeHostReadiness(egressManifest, hostReport("h1", [worker("egress-shell")], { tier: "B" })).state).toBe("ready");
    expect(computeHostReadiness(egressManifest, hostReport("h1", [worker("egress-shell")], { tier: "A" })).state).toBe("ready");
    expect(computeHostReadiness(manifest, hostReport("h1", [worker("shell")], { tier: "C" })).state).toBe("ready");
    expect(computeHostReadiness(manifest, hostReport("h1", [worker("shell")], { tier: null })).state).toBe("unsupported");
  });

  it("is unavailable when the host is offline or its report is stale", () => {
    expect(computeHostReadiness(manifest, hostReport("h1", [worker("shell")], { online: false })).state).toBe("unavailable");
    const now = new Date("2026-12-01T10:05:00.000Z");
    expect(computeHostReadiness(manifest, hostReport("h1", [worker("shell")]), { now }).state).toBe("unavailable");
    expect(computeHostReadiness(manifest, hostReport("h1", [worker("shell")]), { now, maxReportAgeS: 600 }).state).toBe("ready");
    expect(computeHostReadiness(manifest, hostReport("h1", [worker("shell")], { reported_at: "yesterday" }), { now }).state).toBe("unavailable");
  });

  it("is declared when the host has no worker for the capability", () => {
    expect(computeHostReadiness(manifest, hostReport("h1", [worker("code")])).state).toBe("declared");
  });

  it("does not trust a host that reports two workers for one capability", () => {
    expect(computeHostReadiness(manifest, hostReport("h1", [worker("shell"), worker("shell")])).state).toBe("installed");
  });
});

describe("computeReadiness across hosts", () => {
  it("is declared with no reports at all (readiness is never assumed)", () => {
    expect(computeReadiness(manifest, [])).toEqual({ capability: "shell", state: "declared", hosts: [] });
  });

  it("is declared when no host has the worker, and ignores hosts without it", () => {
    expect(computeReadiness(manifest, [hostReport("h1", [])]).state).toBe("declared");
    const result = computeReadiness(manifest, [hostReport("h2", [worker("shell")]), hostReport("h1", [])]);
    expect(result.state).toBe("ready");
    expect(result.hosts.map((host) => host.host)).toEqual(["h2"]);
  });

  it("is ready when every host with the worker is ready", () => {
    const result = computeReadiness(manifest, [hostReport("b", [worker("shell")]), hostReport("a", [worker("shell")])]);
    expect(result.state).toBe("ready");
    expect(result.hosts.map((host) => host.host)).toEqual(["a", "b"]);
    expect(isReadyOnHost(result, "a")).toBe(true);
    expect(isReadyOnHost(result, "c")).toBe(false);
  });

  it("is degraded when one host is ready and another is not", () => {
    const result = computeReadiness(manifest, [hostReport("a", [worker("shell")]), hostReport("b", [worker("shell")], { online: false })]);
    expect(result.state).toBe("degraded");
    expect(isReadyOnHost(result, "b")).toBe(false);
  });

  it("prefers installed, then unsupported, then unavailable when no host is ready", () => {
    const installed = hostReport("a", [worker("shell", { digest: null })]);
    const unsupported = hostReport("b", [worker("shell", { worker_abi: 9 })]);
    const offline = hostReport("c", [worker("shell")], { online: false });
    expect(computeReadiness(manifest, [installed, unsupported, offline]).state).toBe("installed");
    expect(computeReadiness(manifest, [unsupported, offline]).state).toBe("unsupported");
    expect(computeReadiness(manifest, [offline]).state).toBe("unavailable");
  });

  it("is a pure function of its inputs", () => {
    const reports = [hostReport("a", [worker("shell")]), hostReport("b", [worker("shell", { digest: null })])];
    expect(computeReadiness(manifest, reports)).toEqual(computeReadiness(manifest, reports));
  });
});

describe("hub health", () => {
  it("is degraded by a required capability that is not ready", () => {
    expect(degradesHubHealth({ activation: "required" }, { state: "degraded" })).toBe(true);
    expect(degradesHubHealth({ activation: "required" }, { state: "declared" })).toBe(true);
    expect(degradesHubHealth({ activation: "required" }, { state: "ready" })).toBe(false);
    expect(degradesHubHealth({ activation: "optional" }, { state: "unavailable" })).toBe(false);
    expect(degradesHubHealth({ activation: "opt-in" }, { state: "unsupported" })).toBe(false);
  });

  it("summarises which required capabilities degrade the hub", () => {
    expect(
      summariseCapabilityHealth([
        { manifest: { id: "shell", activation: "required" }, readiness: { state: "installed" } },
        { manifest: { id: "code", activation: "optional" }, readiness: { state: "unavailable" } },
        { manifest: { id: "host", activation: "required" }, readiness: { state: "ready" } },
      ]),
    ).toEqual({ status: "degraded", degraded_by: [{ capability: "shell", state: "installed" }] });
    expect(summariseCapabilityHealth([])).toEqual({ status: "ok", degraded_by: [] });
  });
});
