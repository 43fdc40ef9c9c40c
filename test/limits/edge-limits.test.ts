/**
 * One set of limits, checked at the edge: every size a later stage enforces
 * (the sandbox launcher's argv/env bounds and config pipe, the kernel's
 * per-argument limit) is in the operation's input schema and refused there
 * with INVALID_ARGUMENT naming the limit — before a host is resolved, an
 * approval is held or a job is dispatched.
 */
import { readFileSync } from "node:fs";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { submitAction } from "../../server/actions";
import { BUILTIN_MANIFESTS } from "../../server/capabilities/builtin";
import { validateArguments } from "../../server/capabilities";
import { actions, jobs } from "../../server/db/schema";
import { LeaseholdError } from "../../server/errors";
import { describeEachDatabase } from "../support/databases";
import { insertHost, insertToken, testDeps } from "../pipeline/support";

function operation(name: string) {
  for (const source of BUILTIN_MANIFESTS) {
    const manifest = source.manifest as { operations: { name: string; input_schema: unknown }[] };
    const op = manifest.operations.find((o) => o.name === name);
    if (op !== undefined) return op;
  }
  throw new Error(`no builtin operation ${name}`);
}

function refusal(name: string, args: Record<string, unknown>): string {
  const result = validateArguments(operation(name), args);
  if (result.ok) throw new Error(`${name} accepted arguments the sandbox would refuse`);
  return result.issues.map((i) => `${i.path} ${i.message}`).join("; ");
}

const env = (entries: number, valueBytes: number) => Object.fromEntries(Array.from({ length: entries }, (_, i) => [`V${i}`, "x".repeat(valueBytes)]));

describe("limits at the edge (builtin manifests)", () => {
  it("run_code with 65,537 characters of code is refused naming the 65536 limit; 65,536 is accepted", () => {
    expect(refusal("run_code", { host: "local", language: "bash", code: "x".repeat(65_537) })).toMatch(/\/code .*65536/);
    expect(validateArguments(operation("run_code"), { host: "local", language: "bash", code: "x".repeat(65_536) }).ok).toBe(true);
  });

  it("run_code whose UTF-8 bytes exceed the kernel's per-argument limit is refused naming the byte limit", () => {
    // 65,536 UTF-16 units of a 3-byte character: within maxLength, 196,608 bytes as an argv string.
    expect(refusal("run_code", { host: "local", language: "bash", code: "€".repeat(65_536) })).toMatch(/\/code .*131071 bytes/);
  });

  it("an env of 2 MiB (64 entries of 32 KiB) is refused naming the total-bytes limit", () => {
    for (const name of ["run_command", "run_command_net"]) {
      expect(refusal(name, { host: "local", command: "true", env: env(64, 32 * 1024) })).toMatch(/\/env .*262144 bytes/);
    }
  });

  it("an env with 300 entries is refused naming the entry limit", () => {
    expect(refusal("run_command", { host: "local", command: "true", env: env(300, 1) })).toMatch(/\/env .*64/);
  });

  it("a command whose UTF-8 bytes exceed the per-argument limit is refused naming it", () => {
    expect(refusal("run_command", { host: "local", command: "€".repeat(60_000) })).toMatch(/\/command .*131071 bytes/);
  });
});

describe("the edge's limits are at most the later stages'", () => {
  const protocol = readFileSync(new URL("../../native/src/protocol.h", import.meta.url), "utf8");
  const define = (name: string): number => {
    const m = new RegExp(`#define ${name} \\(?(\\d+)u?(?: << (\\d+))?\\)?`).exec(protocol);
    if (m === null) throw new Error(`${name} not found in native/src/protocol.h`);
    return m[2] === undefined ? Number(m[1]) : Number(m[1]) * 2 ** Number(m[2]);
  };
  const MAX_ARG_STRLEN = 131_072; // the kernel's per-argv/envp-string limit, NUL included
  const ARGV_ELEMENT_CHARS = 65_536; // native/index.ts SandboxPolicy argv element .max()
  for (const source of BUILTIN_MANIFESTS) {
    const manifest = source.manifest as { operations: { name: string; input_schema: { properties: Record<string, Record<string, unknown>> } }[] };
    for (const op of manifest.operations) {
      const p = op.input_schema.properties;
      const program = p["command"] ?? p["code"];
      if (program === undefined) continue;
      it(`${op.name}: program text, env and cwd fit one argv string, LH_MAX_ITEMS and the config pipe (LH_MAX_CONFIG)`, () => {
        expect(program["maxLength"]).toBeLessThanOrEqual(ARGV_ELEMENT_CHARS);
        expect(program["maxBytes"]).toBeLessThan(MAX_ARG_STRLEN);
        const env = p["env"];
        const envBytes = env === undefined ? 0 : (env["maxTotalBytes"] as number);
        if (env !== undefined) {
          // the launcher adds HOME and LANG
          expect((env["maxProperties"] as number) + 2).toBeLessThanOrEqual(define("LH_MAX_ITEMS"));
          expect((env["additionalProperties"] as { maxLength: number }).maxLength * 3).toBeLessThan(MAX_ARG_STRLEN);
        }
        if (p["cwd"] !== undefined) expect(p["cwd"]["maxBytes"]).toBeLessThanOrEqual(4096 - "/work/".length - 1);
        // program + env + the fixed part of the config (paths, binds, limits: far below 64 KiB)
        expect((program["maxBytes"] as number) + envBytes + 64 * 1024).toBeLessThan(define("LH_MAX_CONFIG"));
      });
    }
  }
});

describeEachDatabase("limits at the edge, through the pipeline", (db) => {
  it("run_code of 65,537 characters, an env of 2 MiB and an env of 300 entries are INVALID_ARGUMENT naming the limit, and nothing is dispatched", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const caller = await insertToken(d);
    const attempts = [
      { operation: "run_code", arguments: { host: host.name, language: "bash", code: "x".repeat(65_537) }, limit: /65536/ },
      { operation: "run_command", arguments: { host: host.name, command: "true", env: env(64, 32 * 1024) }, limit: /262144 bytes \(maxTotalBytes\)/ },
      { operation: "run_command", arguments: { host: host.name, command: "true", env: env(300, 1) }, limit: /64/ },
    ];
    for (const a of attempts) {
      const error = await submitAction(deps, caller, { operation: a.operation, arguments: a.arguments, channel: "mcp" }, { waitMs: 0 }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LeaseholdError);
      expect((error as LeaseholdError).code).toBe("INVALID_ARGUMENT");
      expect((error as LeaseholdError).message).toMatch(a.limit);
    }
    expect(await d.select().from(jobs).where(eq(jobs.hostId, host.id))).toEqual([]);
    expect(await d.select().from(actions).where(eq(actions.hostId, host.id))).toEqual([]);
  });
});
