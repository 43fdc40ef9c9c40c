import { describe, expect, it } from "vitest";

import { LeaseholdError } from "../errors/index";
import { parseManifest, parseManifestText, RESERVED_OPERATION_NAMES, safeParseManifest } from "./manifest-schema";
import { validManifest } from "./test-fixtures";

function issuesOf(input: unknown): { path: string; message: string }[] {
  const result = safeParseManifest(input);
  if (result.ok) throw new Error("expected the manifest to be refused");
  return result.issues;
}

function withSandbox(changes: Record<string, unknown>): Record<string, unknown> {
  const manifest = validManifest();
  return { ...manifest, sandbox: { ...(manifest["sandbox"] as object), ...changes } };
}

function withOperation(changes: Record<string, unknown>, index = 0): Record<string, unknown> {
  const manifest = validManifest();
  const operations = [...(manifest["operations"] as Record<string, unknown>[])];
  operations[index] = { ...operations[0], ...changes };
  return { ...manifest, operations };
}

describe("manifest v1 strictness", () => {
  it("accepts the minimal valid manifest", () => {
    expect(safeParseManifest(validManifest()).ok).toBe(true);
  });

  it("refuses an unknown top-level field, naming its path", () => {
    expect(issuesOf(validManifest({ adapter: "x" }))).toContainEqual({ path: "/adapter", message: "unknown field" });
  });

  it("accepts an optional worker_digest only as sha256:<64 lower-case hex>", () => {
    const digest = `sha256:${"0a".repeat(32)}`;
    const parsed = safeParseManifest(validManifest({ worker_digest: digest }));
    expect(parsed.ok && parsed.manifest.worker_digest).toBe(digest);
    for (const bad of [`sha256:${"0A".repeat(32)}`, `sha256:${"0a".repeat(31)}`, "0a".repeat(32), `sha512:${"0a".repeat(32)}`, 42]) {
      expect(issuesOf(validManifest({ worker_digest: bad }))[0]?.path).toBe("/worker_digest");
    }
  });

  it("refuses unknown fields inside sandbox and operations", () => {
    expect(issuesOf(withSandbox({ drop_all_capabilities: true }))).toContainEqual({ path: "/sandbox/drop_all_capabilities", message: "unknown field" });
    expect(issuesOf(withOperation({ risk: "low" }))).toContainEqual({ path: "/operations/0/risk", message: "unknown field" });
  });

  it.each(["id", "capability_api", "worker_abi", "version", "trust_boundary", "activation", "operations", "sandbox"])(
    "refuses a manifest missing %s",
    (field) => {
      const manifest = validManifest();
      delete manifest[field];
      expect(issuesOf(manifest).some((issue) => issue.path === `/${field}`)).toBe(true);
    },
  );

  it.each(["network", "read_only_root", "memory", "cpus", "pids_limit", "tmpfs_tmp", "timeout_s", "exec_allow"])(
    "refuses a sandbox missing %s",
    (field) => {
      const manifest = validManifest();
      const sandbox = { ...(manifest["sandbox"] as Record<string, unknown>) };
      delete sandbox[field];
      expect(issuesOf({ ...manifest, sandbox }).some((issue) => issue.path === `/sandbox/${field}`)).toBe(true);
    },
  );

  it.each([
    ["id", 7],
    ["id", "Shell"],
    ["id", "shell--x"],
    ["id", "-shell"],
    ["capability_api", 2],
    ["capability_api", "1"],
    ["worker_abi", 0],
    ["version", "1.0"],
    ["version", "01.0.0"],
    ["version", "v1.0.0"],
    ["trust_boundary", "framework-static"],
    ["activation", "enabled"],
    ["operations", []],
  ])("refuses %s = %j", (field, value) => {
    expect(issuesOf(validManifest({ [field]: value })).some((issue) => issue.path.startsWith(`/${field}`))).toBe(true);
  });

  it("accepts semver with pre-release and build metadata", () => {
    expect(safeParseManifest(validManifest({ version: "2.0.0-rc.1+build.5" })).ok).toBe(true);
  });

  it.each([
    ["memory", "512"],
    ["memory", "512M"],
    ["memory", "0.5g"],
    ["memory", "8m"],
    ["memory", "65g"],
    ["memory", 512],
    ["tmpfs_tmp", "512k"],
    ["tmpfs_tmp", "17g"],
    ["cpus", 1],
    ["cpus", "0"],
    ["cpus", "65"],
    ["cpus", "1.2345"],
    ["cpus", "01"],
    ["pids_limit", 0],
    ["pids_limit", 1.5],
    ["pids_limit", 40000],
    ["timeout_s", 0],
    ["timeout_s", 86401],
    ["timeout_s", "60"],
    ["read_only_root", "true"],
    ["exec_allow", ["usr/bin"]],
    ["exec_allow", ["/usr/bin/"]],
    ["exec_allow", ["/usr/../bin"]],
    ["exec_allow", ["/usr//bin"]],
    ["exec_allow", ["/bin", "/bin"]],
    ["network", "host"],
    ["network", { egress: [] }],
  ])("refuses sandbox.%s = %j", (field, value) => {
    expect(issuesOf(withSandbox({ [field]: value })).some((issue) => issue.path.startsWith(`/sandbox/${field}`))).toBe(true);
  });

  it("accepts fractional cpus and gigabyte sizes", () => {
    expect(safeParseManifest(withSandbox({ cpus: "0.25", memory: "2g", tmpfs_tmp: "1g" })).ok).toBe(true);
  });

  it("refuses a network egress list unless trust_boundary is network-egress", () => {
    const issues = issuesOf(withSandbox({ network: { egress: ["10.0.0.0/8:443"] } }));
    expect(issues).toContainEqual({ path: "/sandbox/network", message: 'network must be "none" unless trust_boundary is "network-egress"' });
  });

  it("requires network-egress capabilities to be opt-in", () => {
    const manifest = { ...withSandbox({ network: { egress: ["10.0.0.0/8:443"] } }), trust_boundary: "network-egress", activation: "optional" };
    expect(issuesOf(manifest)).toContainEqual({ path: "/activation", message: 'a "network-egress" capability must have activation "opt-in"' });
    expect(safeParseManifest({ ...manifest, activation: "opt-in" }).ok).toBe(true);
  });

  it.each(["10.0.0.1/8:443", "10.0.0.0/8", "10.0.0.0/8:0", "10.0.0.0/33:443", "[2001:DB8::/32]:443", "[2001:db8:0::/32]:443"])(
    "refuses the non-canonical egress rule %s",
    (rule) => {
      const manifest = { ...withSandbox({ network: { egress: [rule] } }), trust_boundary: "network-egress", activation: "opt-in" };
      expect(issuesOf(manifest).some((issue) => issue.path === "/sandbox/network/egress/0")).toBe(true);
    },
  );

  it("accepts observe_scope only on a mutating operation of a capability without network", () => {
    const message = "observe_scope is for a mutating operation of a capability without network (a network lease always needs a person)";
    expect(safeParseManifest(withOperation({ mutating: true, observe_scope: true })).ok).toBe(true);
    expect(issuesOf(withOperation({ mutating: false, observe_scope: true }))).toContainEqual({ path: "/operations/0/observe_scope", message });
    const networked: Record<string, unknown> = { ...withSandbox({ network: { egress: ["10.0.0.0/8:443"] } }), trust_boundary: "network-egress", activation: "opt-in" };
    const operations = (networked["operations"] as Record<string, unknown>[]).map((op) => ({ ...op, mutating: true, observe_scope: true }));
    expect(issuesOf({ ...networked, operations })).toContainEqual({ path: "/operations/0/observe_scope", message });
    expect(issuesOf(withOperation({ observe_scope: "yes" })).some((issue) => issue.path === "/operations/0/observe_scope")).toBe(true);
  });

  it("refuses a mutating operation in a read-only capability", () => {
    expect(issuesOf(validManifest({ trust_boundary: "read-only" }))).toContainEqual({
      path: "/operations/0/mutating",
      message: 'a capability with trust_boundary "read-only" cannot declare a mutating operation',
    });
  });

  it.each([...RESERVED_OPERATION_NAMES])("refuses the reserved operation name %s", (name) => {
    expect(issuesOf(withOperation({ name }))).toContainEqual({ path: "/operations/0/name", message: "this operation name is reserved by the hub" });
  });

  it.each(["Run", "run-command", "run__x", "_run", "9run", "", "a".repeat(65)])("refuses the operation name %j", (name) => {
    expect(issuesOf(withOperation({ name })).some((issue) => issue.path === "/operations/0/name")).toBe(true);
  });

  it("refuses an operation declared twice in one manifest", () => {
    const manifest = withOperation({}, 1);
    expect(issuesOf(manifest)).toContainEqual({ path: "/operations/1/name", message: 'operation "demo_run" is declared twice (first at /operations/0)' });
  });

  it("refuses wrong operation field types and bounds", () => {
    expect(issuesOf(withOperation({ mutating: "yes" })).some((issue) => issue.path === "/operations/0/mutating")).toBe(true);
    expect(issuesOf(withOperation({ description: "" })).some((issue) => issue.path === "/operations/0/description")).toBe(true);
    expect(issuesOf(withOperation({ description: "x".repeat(1025) })).some((issue) => issue.path === "/operations/0/description")).toBe(true);
  });

  it("refuses an input_schema that allows unknown fields, with its JSON path", () => {
    const schema = { type: "object", properties: { host: { type: "string", maxLength: 10 } } };
    expect(issuesOf(withOperation({ input_schema: schema }))).toContainEqual({
      path: "/operations/0/input_schema",
      message: 'an input_schema must be {"type": "object", "additionalProperties": false, ...}',
    });
  });

  it("refuses an input_schema keyword outside the subset, pointing at it", () => {
    const schema = {
      type: "object",
      additionalProperties: false,
      properties: { host: { type: "string", maxLength: 10, format: "hostname" } },
    };
    expect(issuesOf(withOperation({ input_schema: schema }))).toContainEqual({
      path: "/operations/0/input_schema/properties/host/format",
      message: 'keyword "format" is outside the supported JSON Schema subset for type string',
    });
  });

  it("parseManifest throws CONFIG_INVALID naming the source and JSON path", () => {
    let caught: unknown;
    try {
      parseManifest(withSandbox({ memory: "lots" }), "/etc/leasehold/capabilities/demo.json");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(LeaseholdError);
    const error = caught as LeaseholdError;
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain("/etc/leasehold/capabilities/demo.json");
    expect(error.message).toContain("/sandbox/memory");
  });

  it("parseManifestText refuses invalid JSON and oversized files with the source named", () => {
    expect(() => parseManifestText("{", "x.json")).toThrow(/x\.json is not valid JSON/);
    expect(() => parseManifestText(" ".repeat(300 * 1024), "big.json")).toThrow(/big\.json is larger than/);
  });
});
