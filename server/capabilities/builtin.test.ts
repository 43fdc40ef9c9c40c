import { realpathSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { describe, expect, it } from "vitest";

import { BUILTIN_MANIFESTS } from "./builtin";
import { artifactArgumentNames, validateArguments } from "./input-schema";
import { parseManifest, type Manifest } from "./manifest-schema";

const manifests = new Map<string, Manifest>(BUILTIN_MANIFESTS.map(({ source, manifest }) => {
  const parsed = parseManifest(manifest, source);
  return [parsed.id, parsed];
}));

function operation(name: string) {
  for (const manifest of manifests.values()) {
    const found = manifest.operations.find((entry) => entry.name === name);
    if (found !== undefined) return found;
  }
  throw new Error(`no built-in operation ${name}`);
}

function accepts(name: string, args: unknown): boolean {
  return validateArguments(operation(name), args).ok;
}

describe("built-in manifests", () => {
  it("ship every JSON file in builtin/, each named after its id", async () => {
    const files = (await readdir(fileURLToPath(new URL("./builtin/", import.meta.url)))).filter((name) => name.endsWith(".json")).sort();
    expect(BUILTIN_MANIFESTS.map((entry) => entry.source.replace("builtin:", "")).sort()).toEqual(files);
    for (const { source, manifest } of BUILTIN_MANIFESTS) expect(`builtin:${(manifest as { id: string }).id}.json`).toBe(source);
  });

  it("declare the capabilities docs/design.md#operations lists, with their boundaries and activation", () => {
    const summary = [...manifests.values()].map((m) => [m.id, m.trust_boundary, m.activation, m.operations.map((op) => `${op.name}:${op.mutating ? "mutating" : "read-only"}`)]);
    expect(summary).toEqual([
      ["shell", "host-exec", "required", ["run_command:mutating"]],
      ["code", "host-exec", "optional", ["run_code:mutating"]],
      ["workspace", "host-exec", "required", ["fs_read:read-only", "fs_list:read-only", "fs_write:mutating", "rollback:mutating"]],
      ["host", "read-only", "required", ["host_inspect:read-only"]],
      ["egress-shell", "network-egress", "opt-in", ["run_command_net:mutating"]],
      ["apk-static", "static-analysis", "optional", ["apk_inspect:read-only", "apk_preflight:read-only"]],
    ]);
  });

  it("have network none everywhere except egress-shell", () => {
    for (const manifest of manifests.values()) {
      if (manifest.id === "egress-shell") expect(manifest.sandbox.network).toHaveProperty("egress");
      else expect(manifest.sandbox.network).toBe("none");
    }
  });

  it.each([
    // The table in docs/design.md#operations plus `lease` ("write"), the hub-only opt-out of the observe scope (server/policy/decide.ts).
    ["run_command", ["host", "command", "cwd", "env", "stdin", "timeout_s", "lease", "mounts", "idempotency_key"], ["host", "command"]],
    ["run_command_net", ["host", "command", "cwd", "env", "stdin", "timeout_s", "egress", "idempotency_key"], ["host", "command"]],
    ["run_code", ["host", "language", "code", "stdin", "timeout_s", "idempotency_key"], ["host", "language", "code"]],
    ["fs_read", ["host", "path", "mounts", "offset", "limit", "encoding"], ["host", "path"]],
    ["fs_list", ["host", "path", "mounts", "offset", "limit"], ["host", "path"]],
    ["fs_write", ["host", "path", "mounts", "content", "encoding", "idempotency_key"], ["host", "path", "content"]],
    ["rollback", ["host", "label", "snapshot_id", "idempotency_key"], ["host", "label", "snapshot_id"]],
    ["host_inspect", ["host"], ["host"]],
    ["apk_inspect", ["host", "artifact", "timeout_s"], ["host", "artifact"]],
    ["apk_preflight", ["host", "artifact", "timeout_s"], ["host", "artifact"]],
  ])("%s takes exactly the arguments of the operations table in docs/design.md#operations", (name, properties, required) => {
    const schema = operation(name).input_schema;
    expect(Object.keys(schema.properties ?? {})).toEqual(properties);
    expect(schema.required).toEqual(required);
  });

  it("gives idempotency_key to every mutating operation", () => {
    for (const manifest of manifests.values()) {
      for (const op of manifest.operations) {
        if (op.mutating) expect(Object.keys(op.input_schema.properties ?? {})).toContain("idempotency_key");
      }
    }
  });
});

describe("built-in argument bounds", () => {
  const command = { host: "web-1", command: "ls -la" };

  it("accepts ordinary calls", () => {
    expect(accepts("run_command", { ...command, cwd: "src", env: { LANG: "C" }, stdin: "", timeout_s: 30, idempotency_key: "k-1" })).toBe(true);
    expect(accepts("run_command_net", { ...command, egress: ["10.1.0.0/16:443"] })).toBe(true);
    expect(accepts("run_code", { host: "web-1", language: "python3", code: "print(1)" })).toBe(true);
    expect(accepts("fs_read", { host: "web-1", path: "notes/a.txt", offset: 0, limit: 100 })).toBe(true);
    expect(accepts("fs_list", { host: "web-1", path: "." })).toBe(true);
    expect(accepts("fs_write", { host: "web-1", path: "a.txt", content: "", encoding: "base64" })).toBe(true);
    expect(accepts("host_inspect", { host: "web-1" })).toBe(true);
  });

  it("accepts host path labels as bare strings (read-only) or {label, mode}", () => {
    expect(accepts("run_command", { ...command, mounts: ["logs", { label: "app", mode: "rw" }] })).toBe(true);
    expect(accepts("fs_read", { host: "web-1", path: "logs:nginx/access.log", mounts: ["app"] })).toBe(true);
    expect(accepts("rollback", { host: "web-1", label: "app", snapshot_id: "snap-20261206-1" })).toBe(true);
  });

  it.each([
    ["an upper-case label", ["Logs"]],
    ["a label with a slash", ["logs/x"]],
    ["a label starting with a digit", ["1logs"]],
    ["a 33-character label", ["l".repeat(33)]],
    ["an unknown mode", [{ label: "app", mode: "rwx" }]],
    ["a mode without a label", [{ mode: "ro" }]],
    ["a label object without its mode", [{ label: "app" }]],
    ["an extra field", [{ label: "app", mode: "ro", path: "/etc" }]],
    ["a number", [7]],
    ["33 labels", Array.from({ length: 33 }, (_, i) => `l${i}`)],
  ])("refuses mounts with %s", (_what, mounts) => {
    expect(accepts("run_command", { ...command, mounts })).toBe(false);
  });

  it.each(["", "../x", "snap shot", "-x", "Snap-1", "s".repeat(65)])("refuses the snapshot id %j", (snapshot_id) => {
    expect(accepts("rollback", { host: "web-1", label: "app", snapshot_id })).toBe(false);
  });

  it("bounds the command at 64 KiB", () => {
    expect(accepts("run_command", { ...command, command: "x".repeat(65536) })).toBe(true);
    expect(accepts("run_command", { ...command, command: "x".repeat(65537) })).toBe(false);
    expect(accepts("run_command", { ...command, command: "ls\u0000rm" })).toBe(false);
  });

  it("bounds file content at 4 MiB", () => {
    expect(accepts("fs_write", { host: "h", path: "a", content: "A".repeat(4 * 1024 * 1024) })).toBe(true);
    expect(accepts("fs_write", { host: "h", path: "a", content: "A".repeat(4 * 1024 * 1024 + 1) })).toBe(false);
  });

  it.each(["", "Web-1", "-web", "web 1", "a".repeat(64), "web/1"])("refuses the host name %j", (host) => {
    expect(accepts("host_inspect", { host })).toBe(false);
  });

  it.each(["/etc/passwd", "..", "../x", "a/../../x", "a/..", "a\u0000b", ""])("refuses the workspace path %j", (path) => {
    expect(accepts("fs_read", { host: "h", path })).toBe(false);
  });

  it("allows names that merely contain dots", () => {
    expect(accepts("fs_read", { host: "h", path: "a/..b/c..d/.hidden" })).toBe(true);
  });

  it.each([
    ["run_code", { host: "h", language: "ruby", code: "x" }],
    ["fs_write", { host: "h", path: "a", content: "x", encoding: "latin1" }],
    ["fs_list", { host: "h", path: ".", limit: 201 }],
    ["fs_read", { host: "h", path: "a", limit: 1048577 }],
    ["run_command", { ...command, timeout_s: 0 }],
    ["run_command", { ...command, env: { "BAD-NAME": "x" } }],
    ["run_command", { ...command, idempotency_key: "has space" }],
    ["run_command", { ...command, risk: "read_only" }],
    ["run_command", { ...command, egress: ["10.0.0.0/8:443"] }],
    ["run_command_net", { ...command, egress: Array.from({ length: 65 }, () => "10.0.0.0/8:443") }],
    ["host_inspect", { host: "h", verbose: true }],
  ])("refuses %s with %j", (name, args) => {
    expect(accepts(name, args)).toBe(false);
  });
});

describe("apk-static", () => {
  const apk = manifests.get("apk-static")!;
  const sha256 = "0a".repeat(32);

  it("is a no-network, read-only-root, bounded sandbox whose exec_allow holds the directory of the node the guest runs", () => {
    expect(apk.sandbox).toEqual({ network: "none", read_only_root: true, memory: "512m", cpus: "1", pids_limit: 32, tmpfs_tmp: "16m", timeout_s: 120, exec_allow: ["/usr/bin"] });
    // The worker runs under the guest's own node (process.execPath); its real directory must be allowed.
    expect(apk.sandbox.exec_allow).toContain(path.dirname(realpathSync(process.execPath)));
  });

  it("marks the artifact argument with the artifact keyword, and accepts exactly one of base64 and sha256", () => {
    for (const name of ["apk_inspect", "apk_preflight"]) {
      expect(artifactArgumentNames(operation(name).input_schema)).toEqual(["artifact"]);
      expect(accepts(name, { host: "h", artifact: { sha256 } })).toBe(true);
      expect(accepts(name, { host: "h", artifact: { base64: "UEsDBA==" }, timeout_s: 60 })).toBe(true);
      expect(accepts(name, { host: "h", artifact: { base64: "UEsDBA==", sha256 } })).toBe(false);
      expect(accepts(name, { host: "h", artifact: {} })).toBe(false);
      expect(accepts(name, { host: "h", artifact: { sha256, name: "../../etc/passwd" } })).toBe(false);
      expect(accepts(name, { host: "h", artifact: { sha256: sha256.toUpperCase() } })).toBe(false);
      expect(accepts(name, { host: "h", artifact: { sha256 }, timeout_s: 121 })).toBe(false);
      expect(accepts(name, { host: "h" })).toBe(false);
    }
  });
});

describe("shell dialect: the text runs under bash, the dialect the risk gate parses", () => {
  it.each(["run_command", "run_command_net"])("%s names /bin/bash (never /bin/sh) in its description and its command's", (name) => {
    const op = operation(name);
    expect(op.description).toContain("/bin/bash");
    const command = (op.input_schema.properties ?? {})["command"] as { description?: string };
    expect(command.description).toContain("/bin/bash --norc --noprofile -c");
    expect(command.description).not.toContain("run by /bin/sh");
  });

  it.each(["run_command", "run_command_net"])("%s refuses env variables bash reads at start-up; others pass", (name) => {
    for (const variable of ["BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT", "BASH_COMPAT"]) {
      expect(accepts(name, { host: "h", command: "true", env: { [variable]: "/tmp/x" } })).toBe(false);
    }
    expect(accepts(name, { host: "h", command: "true", env: { ENVIRONMENT: "x", MY_ENV: "y", BASH_ENVX: "z" } })).toBe(true);
  });
});
