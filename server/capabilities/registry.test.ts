import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { afterEach, describe, expect, it } from "vitest";

import { LeaseholdError } from "../errors/index";
import { builtinAdapterRegistry, createPassthroughAdapter } from "./adapters";
import { createCapabilityRegistry, loadCapabilityRegistry, readManifestDirectory } from "./registry";
import { hostReport, validManifest, worker } from "./test-fixtures";

function thrown(run: () => unknown): LeaseholdError {
  try {
    run();
  } catch (error) {
    if (error instanceof LeaseholdError) return error;
    throw error;
  }
  throw new Error("expected an error");
}

async function rejected(run: () => Promise<unknown>): Promise<LeaseholdError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof LeaseholdError) return error;
    throw error;
  }
  throw new Error("expected an error");
}

const demoAdapter = createPassthroughAdapter("demo", ["demo_run"]);

describe("built-in registry", () => {
  const registry = createCapabilityRegistry();

  it("lists every built-in, with the opt-in one declared but not enabled", () => {
    expect(registry.list().map((entry) => [entry.id, entry.status])).toEqual([
      ["apk-static", "active"],
      ["code", "active"],
      ["egress-shell", "not_enabled"],
      ["host", "active"],
      ["shell", "active"],
      ["workspace", "active"],
    ]);
  });

  it.each([
    ["run_command", "shell"],
    ["run_code", "code"],
    ["fs_read", "workspace"],
    ["fs_list", "workspace"],
    ["fs_write", "workspace"],
    ["host_inspect", "host"],
  ])("resolves %s to its owner %s, with that owner's adapter", (operation, owner) => {
    const resolution = registry.resolveOperation(operation);
    expect(resolution.manifest.id).toBe(owner);
    expect(resolution.operation.name).toBe(operation);
    expect(resolution.adapter.capability).toBe(owner);
    expect(resolution.source).toBe(`builtin:${owner}.json`);
  });

  it("refuses an unknown operation with NOT_FOUND", () => {
    expect(thrown(() => registry.resolveOperation("rm_rf")).code).toBe("NOT_FOUND");
    expect(thrown(() => registry.resolveOperation("health")).code).toBe("NOT_FOUND");
    expect(thrown(() => registry.resolveOperation("__proto__")).code).toBe("NOT_FOUND");
  });

  it("refuses a disabled opt-in capability's operation and exposes none of its tools", () => {
    const error = thrown(() => registry.resolveOperation("run_command_net"));
    expect(error.code).toBe("CAPABILITY_UNAVAILABLE");
    expect(error.message).toContain("egress-shell");
    expect(registry.activeOperations().map((entry) => entry.operation.name)).toEqual([
      "apk_inspect",
      "apk_preflight",
      "fs_list",
      "fs_read",
      "fs_write",
      "host_inspect",
      "rollback",
      "run_code",
      "run_command",
    ]);
  });

  it("returns frozen manifests the caller cannot change", () => {
    const { manifest } = registry.resolveOperation("run_command");
    expect(Object.isFrozen(manifest)).toBe(true);
    expect(Object.isFrozen(manifest.sandbox.exec_allow)).toBe(true);
  });
});

describe("opt-in activation by exact id", () => {
  it("enables an opt-in capability when its exact id is in the enabled set", () => {
    const registry = createCapabilityRegistry({ enabled: ["egress-shell"] });
    expect(registry.resolveOperation("run_command_net").manifest.id).toBe("egress-shell");
    expect(registry.list().find((entry) => entry.id === "egress-shell")?.status).toBe("active");
  });

  it.each([["egress"], ["egress-*"], ["*"], ["EGRESS-SHELL"], [" egress-shell"], ["egress-shell/"], ["egress-shell2"]])("refuses the enabled entry %j", (id) => {
    const error = thrown(() => createCapabilityRegistry({ enabled: [id] }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain(JSON.stringify(id));
  });

  it("refuses enabling a capability that is not opt-in", () => {
    expect(thrown(() => createCapabilityRegistry({ enabled: ["shell"] })).message).toMatch(/only opt-in capabilities are enabled by id/);
  });

  it("enables and disables at run time", () => {
    const registry = createCapabilityRegistry();
    registry.enable("egress-shell");
    expect(registry.isActive("egress-shell")).toBe(true);
    registry.disable("egress-shell");
    expect(thrown(() => registry.resolveOperation("run_command_net")).code).toBe("CAPABILITY_UNAVAILABLE");
  });
});

describe("operation ownership", () => {
  it("fails start-up on an operation claimed twice, naming both manifests and the operation", () => {
    const clash = validManifest({
      id: "other-shell",
      operations: [{ ...(validManifest()["operations"] as object[])[0], name: "run_command" }],
    });
    const error = thrown(() =>
      createCapabilityRegistry({
        manifests: [{ source: "/etc/leasehold/capabilities/other-shell.json", manifest: clash, adapter: createPassthroughAdapter("other-shell", ["run_command"]) }],
      }),
    );
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain('"run_command"');
    expect(error.message).toContain('"shell" (builtin:shell.json)');
    expect(error.message).toContain('"other-shell" (/etc/leasehold/capabilities/other-shell.json)');
  });

  it("fails on a duplicate capability id, naming both sources", () => {
    const error = thrown(() =>
      createCapabilityRegistry({
        includeBuiltins: false,
        manifests: [
          { source: "runtime:a", manifest: validManifest(), adapter: demoAdapter },
          { source: "runtime:b", manifest: validManifest(), adapter: demoAdapter },
        ],
      }),
    );
    expect(error.message).toContain("runtime:a");
    expect(error.message).toContain("runtime:b");
  });

  it("refuses a manifest claiming a reserved name, naming the source and path", () => {
    const reserved = validManifest({ operations: [{ ...(validManifest()["operations"] as object[])[0], name: "list_capabilities" }] });
    const error = thrown(() => createCapabilityRegistry({ manifests: [{ source: "runtime:sneaky", manifest: reserved, adapter: demoAdapter }] }));
    expect(error.message).toContain("runtime:sneaky");
    expect(error.message).toContain("/operations/0/name");
  });

  it("refuses a manifest without an adapter, or whose adapter cannot prepare an operation", () => {
    expect(thrown(() => createCapabilityRegistry({ manifests: [{ source: "runtime:x", manifest: validManifest() }] })).message).toMatch(/no adapter/);
    const wrong = createPassthroughAdapter("demo", ["something_else"]);
    expect(thrown(() => createCapabilityRegistry({ manifests: [{ source: "runtime:x", manifest: validManifest(), adapter: wrong }] })).message).toMatch(
      /cannot prepare demo_run/,
    );
    const otherId = createPassthroughAdapter("not-demo", ["demo_run"]);
    expect(thrown(() => createCapabilityRegistry({ manifests: [{ source: "runtime:x", manifest: validManifest(), adapter: otherId }] })).code).toBe("CONFIG_INVALID");
  });

  it("registers atomically: a refused manifest leaves no operation behind", () => {
    const registry = createCapabilityRegistry();
    const half = validManifest({
      id: "half",
      operations: [
        { ...(validManifest()["operations"] as object[])[0], name: "half_new" },
        { ...(validManifest()["operations"] as object[])[0], name: "fs_read" },
      ],
    });
    expect(() => registry.register({ source: "runtime:half", manifest: half, adapter: createPassthroughAdapter("half", ["half_new", "fs_read"]) })).toThrow(
      /"fs_read"/,
    );
    expect(thrown(() => registry.resolveOperation("half_new")).code).toBe("NOT_FOUND");
    expect(registry.get("half")).toBeUndefined();
  });

  it("validates a copy: changing the input after registration changes nothing", () => {
    const registry = createCapabilityRegistry({ includeBuiltins: false });
    const input = validManifest();
    registry.register({ source: "runtime:demo", manifest: input, adapter: demoAdapter });
    (input["sandbox"] as Record<string, unknown>)["network"] = { egress: ["0.0.0.0/0:443"] };
    expect(registry.resolveOperation("demo_run").manifest.sandbox.network).toBe("none");
  });
});

describe("data-driven resolution", () => {
  it("resolves any number of registered capabilities through the same lookup", () => {
    const registry = createCapabilityRegistry({ includeBuiltins: false });
    for (let i = 0; i < 25; i += 1) {
      const id = `cap-${i}`;
      const name = `op_${i}`;
      const manifest = validManifest({ id, operations: [{ ...(validManifest()["operations"] as object[])[0], name }] });
      registry.register({ source: `runtime:${id}`, manifest, adapter: createPassthroughAdapter(id, [name]) });
    }
    for (let i = 0; i < 25; i += 1) {
      const resolution = registry.resolveOperation(`op_${i}`);
      expect([resolution.manifest.id, resolution.adapter.capability]).toEqual([`cap-${i}`, `cap-${i}`]);
    }
  });

  it("keeps operation names out of the generic code (no if/else trees on them)", async () => {
    const names = ["run_command", "run_command_net", "run_code", "fs_read", "fs_list", "fs_write", "host_inspect"];
    for (const file of ["registry.ts", "readiness.ts", "policy-compile.ts", "manifest-schema.ts", "input-schema.ts"]) {
      const text = await readFile(fileURLToPath(new URL(`./${file}`, import.meta.url)), "utf8");
      for (const name of names) expect(text.includes(`"${name}"`), `${file} mentions ${name}`).toBe(false);
    }
  });
});

describe("listing with readiness and hub health", () => {
  it("reports readiness per capability from host reports", () => {
    const registry = createCapabilityRegistry();
    const reports = [hostReport("h1", [worker("shell"), worker("host"), worker("workspace", { digest: null })])];
    const byId = Object.fromEntries(registry.list({ hostReports: reports }).map((entry) => [entry.id, entry.readiness?.state]));
    expect(byId).toEqual({ "apk-static": "declared", code: "declared", "egress-shell": "declared", host: "ready", shell: "ready", workspace: "installed" });
    expect(registry.list()[0]?.readiness).toBeUndefined();
  });

  it("is degraded by required capabilities only, and healthy once they are ready", () => {
    const registry = createCapabilityRegistry();
    expect(registry.health([hostReport("h1", [worker("shell"), worker("host")])])).toEqual({
      status: "degraded",
      degraded_by: [{ capability: "workspace", state: "declared" }],
    });
    expect(registry.health([hostReport("h1", [worker("shell"), worker("host"), worker("workspace")])])).toEqual({ status: "ok", degraded_by: [] });
  });
});

describe("manifest directories", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  async function dirWith(files: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "leasehold-caps-"));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return dir;
  }

  it("loads <id>.json files next to the built-ins", async () => {
    const dir = await dirWith({ "demo.json": JSON.stringify(validManifest()), "notes.txt": "ignored" });
    const registry = await loadCapabilityRegistry({ manifestDirectory: dir, manifests: [], adapters: new Map([["demo", demoAdapter]]), includeBuiltins: false });
    expect(registry.resolveOperation("demo_run").source).toBe(join(dir, "demo.json"));
  });

  it("names the file and JSON path of an invalid manifest", async () => {
    const dir = await dirWith({ "demo.json": JSON.stringify(validManifest({ version: "one" })) });
    const error = await rejected(() => readManifestDirectory(dir));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain(join(dir, "demo.json"));
    expect(error.message).toContain("/version");
  });

  it("refuses a file whose name is not its id", async () => {
    const dir = await dirWith({ "other.json": JSON.stringify(validManifest()) });
    expect((await rejected(() => readManifestDirectory(dir))).message).toMatch(/name the file demo\.json/);
  });

  it("refuses symlinked manifest files", async () => {
    const target = await dirWith({ "real.json": JSON.stringify(validManifest()) });
    const dir = await dirWith({});
    await symlink(join(target, "real.json"), join(dir, "demo.json"));
    expect((await rejected(() => readManifestDirectory(dir))).message).toMatch(/not a regular file/);
  });

  it("refuses a directory manifest that claims a built-in operation, naming both", async () => {
    const clash = validManifest({ id: "clash", operations: [{ ...(validManifest()["operations"] as object[])[0], name: "fs_write" }] });
    const dir = await dirWith({ "clash.json": JSON.stringify(clash) });
    const adapters = new Map([...builtinAdapterRegistry(), ["clash", createPassthroughAdapter("clash", ["fs_write"])]]);
    const error = await rejected(() => loadCapabilityRegistry({ manifestDirectory: dir, adapters }));
    expect(error.message).toContain("builtin:workspace.json");
    expect(error.message).toContain(join(dir, "clash.json"));
  });

  it("reports an unreadable directory as configuration", async () => {
    expect((await rejected(() => readManifestDirectory("/nonexistent/leasehold-caps"))).code).toBe("CONFIG_INVALID");
  });
});
