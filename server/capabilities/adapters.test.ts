import { describe, expect, it } from "vitest";

import { LeaseholdError } from "../errors/index";
import { BUILTIN_ADAPTERS, createAdapterRegistry, normaliseWorkspacePath, shellAdapter } from "./adapters";
import { validateArguments } from "./input-schema";
import { compileSandboxPolicy } from "./policy-compile";
import { createCapabilityRegistry } from "./registry";

const registry = createCapabilityRegistry({ enabled: ["egress-shell"] });

/** The pipeline's steps 2–4 as a caller would run them, for one operation. */
function prepare(name: string, args: Record<string, unknown>) {
  const { manifest, operation, adapter } = registry.resolveOperation(name);
  const validated = validateArguments(operation, args);
  if (!validated.ok) throw new Error(JSON.stringify(validated.issues));
  const prepared = adapter.prepareArguments(operation, validated.value);
  const policy = compileSandboxPolicy({ manifest, operation: operation.name, request: adapter.sandboxRequest(operation, prepared) });
  return { prepared, policy, job: adapter.jobPayload({ manifest, operation, prepared, policy }), adapter, operation };
}

function code(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof LeaseholdError) return error.code;
    throw error;
  }
  return "none";
}

describe("host path arguments in the built-in adapters", () => {
  const prepareOnly = (name: string, args: Record<string, unknown>) => {
    const { operation, adapter } = registry.resolveOperation(name);
    const validated = validateArguments(operation, args);
    if (!validated.ok) throw new Error(JSON.stringify(validated.issues));
    const prepared = adapter.prepareArguments(operation, validated.value);
    return { prepared, request: adapter.sandboxRequest(operation, prepared), writesWorkspace: adapter.writesWorkspace(operation, prepared) };
  };

  it("spell mounts one way: bare labels as ro, sorted by label, an empty list as none (so they hash alike)", () => {
    const a = prepareOnly("run_command", { host: "h", command: "ls", mounts: [{ label: "logs", mode: "ro" }, { label: "app", mode: "rw" }] }).prepared;
    const b = prepareOnly("run_command", { host: "h", command: "ls", mounts: [{ label: "app", mode: "rw" }, "logs"] }).prepared;
    expect(a).toEqual(b);
    expect(a["mounts"]).toEqual([{ label: "app", mode: "rw" }, { label: "logs", mode: "ro" }]);
    expect(prepareOnly("run_command", { host: "h", command: "ls", mounts: [] }).prepared).toEqual(prepareOnly("run_command", { host: "h", command: "ls" }).prepared);
  });

  it("a label path implies its label with the mode its operation needs, merged upwards with mounts; only label-only writes spare the workspace lease", () => {
    const read = prepareOnly("fs_read", { host: "h", path: "logs:./nginx//error.log" });
    expect(read.prepared).toMatchObject({ path: "logs:nginx/error.log", mounts: [{ label: "logs", mode: "ro" }] });
    expect(read.request.mounts).toEqual([{ label: "logs", mode: "ro" }]);
    const write = prepareOnly("fs_write", { host: "h", path: "app:index.html", content: "x", mounts: ["app"] });
    expect(write.prepared["mounts"]).toEqual([{ label: "app", mode: "rw" }]);
    expect(write.writesWorkspace).toBe(false);
    expect(prepareOnly("fs_write", { host: "h", path: "index.html", content: "x" }).writesWorkspace).toBe(true);
    expect(prepareOnly("run_command", { host: "h", command: "ls", mounts: [{ label: "app", mode: "rw" }] }).writesWorkspace).toBe(true);
  });

  it("a rollback's arguments stay {host, label, snapshot_id}; its rw label is policy", () => {
    const rollback = prepareOnly("rollback", { host: "h", label: "app", snapshot_id: "snap-1" });
    expect(rollback.prepared).toEqual({ host: "h", label: "app", snapshot_id: "snap-1" });
    expect(rollback.request.mounts).toEqual([{ label: "app", mode: "rw" }]);
    expect(rollback.writesWorkspace).toBe(false);
  });
});

describe("built-in adapters", () => {
  it("fill run_command defaults explicitly and sort env keys", () => {
    const { prepared } = prepare("run_command", { host: "h", command: "env", env: { ZED: "1", ALPHA: "2", MID: "3" } });
    expect(prepared).toEqual({ host: "h", command: "env", cwd: ".", env: { ALPHA: "2", MID: "3", ZED: "1" }, stdin: "" });
    expect(Object.keys(prepared["env"] as object)).toEqual(["ALPHA", "MID", "ZED"]);
  });

  it("give equal requests one spelling (so they hash equally)", () => {
    const a = prepare("run_command", { host: "h", command: "ls" }).prepared;
    const b = prepare("run_command", { host: "h", command: "ls", cwd: "./", env: {}, stdin: "" }).prepared;
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  });

  it("never change the command text or code", () => {
    const text = "  echo 'a  b'\t\n";
    expect(prepare("run_command", { host: "h", command: text }).prepared["command"]).toBe(text);
    expect(prepare("run_code", { host: "h", language: "bash", code: text }).prepared["code"]).toBe(text);
  });

  it("are idempotent", () => {
    for (const [name, args] of [
      ["run_command", { host: "h", command: "ls", cwd: "a//b/", env: { B: "1", A: "2" } }],
      ["fs_write", { host: "h", path: "./x//y", content: "aGk=", encoding: "base64" }],
      ["run_command_net", { host: "h", command: "curl", egress: ["10.2.0.0/16:443", "10.1.0.0/16:443"] }],
    ] as const) {
      const { prepared, adapter, operation } = prepare(name, { ...args });
      expect(adapter.prepareArguments(operation, prepared)).toEqual(prepared);
    }
  });

  it("canonicalise workspace paths lexically", () => {
    expect(prepare("fs_list", { host: "h", path: "./a//b/./c/" }).prepared).toEqual({ host: "h", path: "a/b/c", offset: 0, limit: 50 });
    expect(prepare("fs_read", { host: "h", path: "." }).prepared).toEqual({ host: "h", path: ".", offset: 0, limit: 65536, encoding: "utf8" });
    expect(normaliseWorkspacePath("path", "a/b")).toBe("a/b");
    expect(code(() => normaliseWorkspacePath("path", "a/../../etc"))).toBe("INVALID_ARGUMENT");
    expect(code(() => normaliseWorkspacePath("path", "/etc"))).toBe("INVALID_ARGUMENT");
  });

  it("default fs_write to utf8 and refuse malformed base64 or the root as a file", () => {
    expect(prepare("fs_write", { host: "h", path: "a", content: "hi" }).prepared["encoding"]).toBe("utf8");
    expect(code(() => prepare("fs_write", { host: "h", path: "a", content: "not base64!", encoding: "base64" }))).toBe("INVALID_ARGUMENT");
    expect(code(() => prepare("fs_write", { host: "h", path: "./", content: "x" }))).toBe("INVALID_ARGUMENT");
  });

  it("canonicalise and de-duplicate a narrowing egress list, refusing malformed rules", () => {
    const { prepared, policy } = prepare("run_command_net", { host: "h", command: "curl x", egress: ["10.2.0.0/16:443", "10.1.0.0/16:443", "10.1.0.0/16:443"] });
    expect(prepared["egress"]).toEqual(["10.1.0.0/16:443", "10.2.0.0/16:443"]);
    expect(policy.network).toEqual({ mode: "egress", egress: ["10.1.0.0/16:443", "10.2.0.0/16:443"] });
    expect(code(() => prepare("run_command_net", { host: "h", command: "x", egress: ["10.1.0.1/16:443"] }))).toBe("INVALID_ARGUMENT");
  });

  it("accept name:port rules in a narrowing egress list (canonical lower case only) and the schema lets a 253-character name through", () => {
    const { operation, adapter } = registry.resolveOperation("run_command_net");
    const prepared = adapter.prepareArguments(operation, { host: "h", command: "x", egress: ["api.example.test:443", "10.1.0.0/16:443", "api.example.test:443"] });
    expect(prepared["egress"]).toEqual(["10.1.0.0/16:443", "api.example.test:443"]);
    expect(adapter.sandboxRequest(operation, prepared).egress).toEqual(["10.1.0.0/16:443", "api.example.test:443"]);
    expect(code(() => adapter.prepareArguments(operation, { host: "h", command: "x", egress: ["Api.example.test:443"] }))).toBe("INVALID_ARGUMENT");
    const long = `${Array.from({ length: 4 }, () => "a".repeat(62)).join(".")}.test`;
    expect(long.length).toBe(256);
    const longest = long.slice(6);
    expect(validateArguments(registry.resolveOperation("run_command_net").operation, { host: "h", command: "x", egress: [`${longest}:65535`] }).ok).toBe(true);
    // A name is not inside the manifest's default address list: narrowing by it is refused as widening.
    expect(code(() => prepare("run_command_net", { host: "h", command: "x", egress: ["api.example.test:443"] }))).toBe("POLICY_REFUSED");
  });

  it("pass timeout_s and egress to the policy compiler, which refuses widening", () => {
    expect(prepare("run_command", { host: "h", command: "x", timeout_s: 5 }).policy.timeout_s).toBe(5);
    expect(code(() => prepare("run_command", { host: "h", command: "x", timeout_s: 301 }))).toBe("POLICY_REFUSED");
    expect(code(() => prepare("run_command_net", { host: "h", command: "x", egress: ["8.8.8.0/24:443"] }))).toBe("POLICY_REFUSED");
  });

  it("build a job payload whose policy is the single source of timeout and egress", () => {
    const { job, policy } = prepare("run_command_net", {
      host: "web-1",
      command: "curl https://10.1.2.3",
      timeout_s: 20,
      egress: ["10.1.0.0/16:443"],
      idempotency_key: "abc",
    });
    expect(job).toEqual({
      schema: "leasehold.job-payload/1",
      host: "web-1",
      capability: { id: "egress-shell", version: "1.0.0", worker_abi: 1 },
      operation: "run_command_net",
      mutating: true,
      arguments: { command: "curl https://10.1.2.3", cwd: ".", env: {}, stdin: "" },
      sandbox: policy,
    });
    expect(policy.timeout_s).toBe(20);
  });

  it("cover every built-in operation", () => {
    for (const capability of registry.list()) {
      const adapter = BUILTIN_ADAPTERS.find((entry) => entry.capability === capability.id);
      expect(adapter?.operations.slice().sort()).toEqual(capability.operations.map((op) => op.name).sort());
    }
  });

  it("refuse two adapters for one capability", () => {
    expect(code(() => createAdapterRegistry([shellAdapter, shellAdapter]))).toBe("CONFIG_INVALID");
  });
});

describe("apk-static adapter", () => {
  const ref = { sha256: "ab".repeat(32), bytes: 1234 };

  it.each(["apk_inspect", "apk_preflight"])("%s passes the resolved {sha256, bytes} through to the job payload's arguments", (name) => {
    const { manifest, operation, adapter } = registry.resolveOperation(name);
    const prepared = adapter.prepareArguments(operation, { host: "h", artifact: ref, timeout_s: 30 });
    expect(prepared).toEqual({ host: "h", artifact: ref, timeout_s: 30 });
    expect(adapter.sandboxRequest(operation, prepared)).toEqual({ timeout_s: 30 });
    const policy = compileSandboxPolicy({ manifest, operation: name, request: adapter.sandboxRequest(operation, prepared) });
    const payload = adapter.jobPayload({ manifest, operation, prepared, policy });
    expect(payload.arguments).toEqual({ artifact: ref });
    expect(payload.mutating).toBe(false);
    expect(payload.sandbox.network).toEqual({ mode: "none" });
  });

  it.each([
    { base64: "UEsDBA==" },
    { sha256: "ab".repeat(32) },
    { ...ref, name: "x.apk" },
    { sha256: "AB".repeat(32), bytes: 1 },
    { sha256: "ab".repeat(32), bytes: 0 },
  ])("refuses an artifact the pipeline did not resolve: %j", (artifact) => {
    const { operation, adapter } = registry.resolveOperation("apk_inspect");
    expect(() => adapter.prepareArguments(operation, { host: "h", artifact })).toThrow(/must be resolved to a stored artifact/);
  });
});
