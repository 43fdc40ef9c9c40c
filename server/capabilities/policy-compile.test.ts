import { describe, expect, it } from "vitest";

import { LeaseholdError } from "../errors/index";
import { parseManifest, type Manifest } from "./manifest-schema";
import { capabilityPolicy, compileSandboxPolicy } from "./policy-compile";
import { validManifest } from "./test-fixtures";

const shellLike: Manifest = parseManifest(validManifest(), "test:shell-like");
const egressLike: Manifest = parseManifest(
  validManifest({
    id: "net-demo",
    trust_boundary: "network-egress",
    activation: "opt-in",
    sandbox: { ...(validManifest()["sandbox"] as object), network: { egress: ["10.0.0.0/8:443", "192.168.0.0/16:443"] } },
  }),
  "test:net-demo",
);

function refusal(run: () => unknown): LeaseholdError {
  try {
    run();
  } catch (error) {
    if (error instanceof LeaseholdError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("capability policy", () => {
  it("normalises the manifest sandbox into integers and sorted lists", () => {
    expect(capabilityPolicy(shellLike, "demo_run")).toEqual({
      schema: "leasehold.sandbox-policy/1",
      capability: "demo",
      capability_version: "1.2.3",
      operation: "demo_run",
      network: { mode: "none" },
      read_only_root: true,
      memory_bytes: 536870912,
      tmpfs_tmp_bytes: 67108864,
      cpu_millis: 1000,
      pids_limit: 128,
      timeout_s: 60,
      exec_allow: ["/bin", "/usr/bin"],
      mounts: [],
      requires: {
        min_tier: "C",
        kernel_features: [
          "user_namespaces",
          "mount_namespaces",
          "pid_namespaces",
          "network_namespaces",
          "seccomp",
          "no_new_privs",
          "landlock",
          "cgroup_memory",
          "cgroup_pids",
          "cgroup_cpu",
        ],
      },
    });
  });

  it("refuses an operation the manifest does not declare", () => {
    expect(refusal(() => capabilityPolicy(shellLike, "other")).code).toBe("CONFIG_INVALID");
  });
});

describe("compileSandboxPolicy: capability ∩ scopes ∩ request", () => {
  it("lets a request narrow the timeout", () => {
    expect(compileSandboxPolicy({ manifest: shellLike, operation: "demo_run", request: { timeout_s: 10 } }).timeout_s).toBe(10);
  });

  it("accepts a request equal to the ceiling", () => {
    expect(compileSandboxPolicy({ manifest: shellLike, operation: "demo_run", request: { timeout_s: 60 } }).timeout_s).toBe(60);
  });

  it("refuses a request that widens the timeout, naming the field and the hub tier", () => {
    const error = refusal(() => compileSandboxPolicy({ manifest: shellLike, operation: "demo_run", request: { timeout_s: 61 } }));
    expect(error.code).toBe("POLICY_REFUSED");
    expect(error.tier).toBe("hub");
    expect(error.details).toMatchObject({ field: "timeout_s", requested: 61, allowed: 60 });
    expect(error.message).toContain("timeout_s");
  });

  it("caps by the token scope silently, then judges the request against the capped value", () => {
    const scopes = [{ name: "token scope", limits: { timeout_s: 30, memory_bytes: 1024 ** 3 } }];
    const policy = compileSandboxPolicy({ manifest: shellLike, operation: "demo_run", scopes });
    expect(policy.timeout_s).toBe(30);
    expect(policy.memory_bytes).toBe(536870912); // scope above the ceiling does not widen
    const error = refusal(() => compileSandboxPolicy({ manifest: shellLike, operation: "demo_run", scopes, request: { timeout_s: 45 } }));
    expect(error.code).toBe("POLICY_REFUSED");
    expect(error.details).toMatchObject({ field: "timeout_s", allowed: 30 });
  });

  it("refuses a malformed scope as configuration and a malformed request as an argument error", () => {
    expect(refusal(() => compileSandboxPolicy({ manifest: shellLike, operation: "demo_run", scopes: [{ name: "token scope", limits: { timeout_s: 0 } }] })).code).toBe("CONFIG_INVALID");
    expect(refusal(() => compileSandboxPolicy({ manifest: shellLike, operation: "demo_run", request: { timeout_s: 2.5 } })).code).toBe("INVALID_ARGUMENT");
    expect(refusal(() => compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", request: { egress: ["10.0.0.1/8:443"] } })).code).toBe("INVALID_ARGUMENT");
  });

  it("uses the capability's egress list when the request names none, and needs tier B for it", () => {
    const policy = compileSandboxPolicy({ manifest: egressLike, operation: "demo_run" });
    expect(policy.network).toEqual({ mode: "egress", egress: ["10.0.0.0/8:443", "192.168.0.0/16:443"] });
    expect(policy.requires.min_tier).toBe("B");
    expect(policy.requires.kernel_features).not.toContain("network_namespaces");
  });

  it("lets a request narrow the egress list", () => {
    const policy = compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", request: { egress: ["10.20.0.0/16:443"] } });
    expect(policy.network).toEqual({ mode: "egress", egress: ["10.20.0.0/16:443"] });
  });

  it("compiles an empty egress request to no network, enforceable in tier C", () => {
    const policy = compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", request: { egress: [] } });
    expect(policy.network).toEqual({ mode: "none" });
    expect(policy.requires.min_tier).toBe("C");
  });

  it.each([["11.0.0.0/8:443"], ["10.0.0.0/8:80"], ["0.0.0.0/0:443"], ["10.0.0.0/7:443"]])("refuses the widening egress rule %s", (text) => {
    const error = refusal(() => compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", request: { egress: [text] } }));
    expect(error.code).toBe("POLICY_REFUSED");
    expect(error.details).toMatchObject({ field: "egress", requested: [text] });
  });

  it("intersects a scope's egress list (a token's scope) before judging the request", () => {
    const scopes = [{ name: "token scope", limits: { egress: ["10.5.0.0/16:443", "172.16.0.0/12:443"] } }];
    expect(compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", scopes }).network).toEqual({ mode: "egress", egress: ["10.5.0.0/16:443"] });
    const error = refusal(() => compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", scopes, request: { egress: ["10.6.0.0/16:443"] } }));
    expect(error.code).toBe("POLICY_REFUSED");
  });

  it("the admin's egress configuration replaces the manifest's default list, names included; a request narrows it by the same names", () => {
    const configuredEgress = { name: "admin egress configuration", egress: ["api.example.test:443", "203.0.113.0/24:8443", "api.example.test:443"] };
    const policy = compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", configuredEgress });
    expect(policy.network).toEqual({ mode: "egress", egress: ["203.0.113.0/24:8443", "api.example.test:443"] });
    expect(policy.requires.min_tier).toBe("B");
    // The manifest's 10.0.0.0/8:443 no longer applies.
    expect(refusal(() => compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", configuredEgress, request: { egress: ["10.1.0.0/16:443"] } })).code).toBe("POLICY_REFUSED");
    expect(compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", configuredEgress, request: { egress: ["api.example.test:443"] } }).network).toEqual({
      mode: "egress",
      egress: ["api.example.test:443"],
    });
    expect(compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", configuredEgress, request: { egress: ["203.0.113.8/30:8443"] } }).network).toEqual({
      mode: "egress",
      egress: ["203.0.113.8/30:8443"],
    });
    expect(compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", configuredEgress: null }).network).toEqual({ mode: "egress", egress: ["10.0.0.0/8:443", "192.168.0.0/16:443"] });
  });

  it.each([
    ["another name", "other.example.test:443"],
    ["the name on another port", "api.example.test:80"],
    ["an address the name might resolve to", "203.0.114.7/32:443"],
  ])("a request cannot widen a named list with %s", (_what, text) => {
    const configuredEgress = { name: "admin egress configuration", egress: ["api.example.test:443", "203.0.113.0/24:8443"] };
    const error = refusal(() => compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", configuredEgress, request: { egress: [text] } }));
    expect(error.code).toBe("POLICY_REFUSED");
    expect(error.details).toMatchObject({ field: "egress", requested: [text] });
  });

  it("a name under an address list is refused (a name is never inside an address block), and a scope intersects names by name", () => {
    expect(refusal(() => compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", request: { egress: ["api.example.test:443"] } })).code).toBe("POLICY_REFUSED");
    const configuredEgress = { name: "admin egress configuration", egress: ["a.example.test:443", "b.example.test:443"] };
    const scopes = [{ name: "token scope", limits: { egress: ["b.example.test:443", "c.example.test:443"] } }];
    expect(compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", configuredEgress, scopes }).network).toEqual({ mode: "egress", egress: ["b.example.test:443"] });
  });

  it("an admin configuration for a capability without network, or with a malformed rule, is CONFIG_INVALID naming it", () => {
    expect(refusal(() => compileSandboxPolicy({ manifest: shellLike, operation: "demo_run", configuredEgress: { name: "admin egress configuration", egress: ["a.test:1"] } })).code).toBe("CONFIG_INVALID");
    const error = refusal(() => compileSandboxPolicy({ manifest: egressLike, operation: "demo_run", configuredEgress: { name: "admin egress configuration", egress: ["A.test:1"] } }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain("admin egress configuration");
  });

  it("refuses any egress request on a capability without network", () => {
    const error = refusal(() => compileSandboxPolicy({ manifest: shellLike, operation: "demo_run", request: { egress: ["10.0.0.0/8:443"] } }));
    expect(error.code).toBe("POLICY_REFUSED");
    expect(error.details).toMatchObject({ field: "egress" });
  });

  it.each(["memory_bytes", "tmpfs_tmp_bytes", "cpu_millis", "pids_limit"] as const)("narrows and refuses widening of %s", (field) => {
    const ceiling = capabilityPolicy(shellLike, "demo_run")[field];
    expect(compileSandboxPolicy({ manifest: shellLike, operation: "demo_run", request: { [field]: ceiling - 1 } })[field]).toBe(ceiling - 1);
    expect(refusal(() => compileSandboxPolicy({ manifest: shellLike, operation: "demo_run", request: { [field]: ceiling + 1 } })).details).toMatchObject({ field });
  });

  describe("host path mounts", () => {
    const host = { name: "web-1", hostPaths: [{ label: "logs", path: "/var/log", mode: "ro" as const }, { label: "app", path: "/srv/app", mode: "rw" as const }] };

    it("compiles each requested label to the ceiling's path, sorted by label", () => {
      const policy = compileSandboxPolicy({ manifest: shellLike, operation: "demo_run", host, request: { mounts: [{ label: "logs", mode: "ro" }, { label: "app", mode: "rw" }] } });
      expect(policy.mounts).toEqual([{ label: "app", path: "/srv/app", mode: "rw" }, { label: "logs", path: "/var/log", mode: "ro" }]);
    });

    it.each([
      ["an unlisted label", { label: "etc", mode: "ro" as const }, host, /lists no host path labelled etc/],
      ["rw on a ro label", { label: "logs", mode: "rw" as const }, host, /lists logs \(\/var\/log\) read-only/],
      ["any label on a host that reports none", { label: "logs", mode: "ro" as const }, { name: "web-2", hostPaths: null }, /host web-2 reports no host paths/],
    ])("refuses %s with POLICY_REFUSED naming the label, never narrowing it", (_what, mount, target, message) => {
      const error = refusal(() => compileSandboxPolicy({ manifest: shellLike, operation: "demo_run", host: target, request: { mounts: [mount] } }));
      expect(error.code).toBe("POLICY_REFUSED");
      expect(error.message).toMatch(message);
      expect(error.details).toMatchObject({ field: "mounts", label: mount.label });
    });
  });
});
