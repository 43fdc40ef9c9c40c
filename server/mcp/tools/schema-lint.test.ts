/**
 * Every tool schema the hub lists is portable: the check of schema-lint.ts
 * (the rules of the MCP Inspector's `--strict` tools/list validation) finds
 * nothing in any input or output schema, as tools/list shows them — to a
 * full token and to a `--hosts`-scoped one — including the operations of
 * capabilities that are not enabled. The check itself finds each rule's
 * construct, so a zero here means something.
 */
import { describe, expect, it } from "vitest";
import { operationTool } from "./actions";
import { servedTools } from "./catalogue";
import { capabilityRegistry } from "./listing";
import { listedTool } from "../server";
import { lintSchema, lintTool } from "./schema-lint";

describe("tool schema portability (the Inspector's --strict rules)", () => {
  it("finds each unportable construct, and only those", () => {
    expect(lintSchema({ type: "object", properties: { a: { type: ["string", "null"] } } }).map((f) => [f.rule, f.path])).toEqual([["type-union", "/properties/a"]]);
    expect(lintSchema({ type: "object", properties: { a: {}, b: { description: "only words" } } }).map((f) => [f.rule, f.path])).toEqual([
      ["untyped-schema", "/properties/a"],
      ["untyped-schema", "/properties/b"],
    ]);
    expect(lintSchema({ type: "object", properties: { a: true }, additionalProperties: false }).map((f) => [f.rule, f.path])).toEqual([["boolean-schema", "/properties/a"]]);
    expect(lintSchema({ anyOf: [{ $ref: "https://example.org/s.json" }, { type: "string", nullable: true }] }).map((f) => f.rule)).toEqual(["remote-ref", "nullable-keyword"]);
    expect(lintSchema({ type: "array", items: [{ type: "string" }, {}] }).map((f) => f.path)).toEqual(["/items/1"]);
    // Portable spellings: a typed anyOf for null, `not: {}`, boolean additionalProperties, local refs.
    expect(lintSchema({ type: "object", properties: { a: { anyOf: [{ type: "string" }, { type: "null" }] }, b: { not: {} }, c: { $ref: "#/$defs/x" } }, $defs: { x: { type: "integer" } }, additionalProperties: false })).toEqual([]);
  });

  it("every tool the hub lists — hub tools, pipeline tools and every capability operation, enabled or not — has portable input and output schemas (0 findings)", () => {
    const tools = servedTools();
    const served = new Set(tools.map((t) => t.name));
    // Operations of capabilities an admin has not enabled are listed once enabled: built from their manifests here.
    for (const capability of capabilityRegistry().list()) {
      const registered = capabilityRegistry().get(capability.id)!;
      for (const operation of registered.manifest.operations) {
        if (served.has(operation.name)) continue;
        tools.push(operationTool({ manifest: registered.manifest, operation, adapter: registered.adapter, source: registered.source }));
      }
    }
    expect(tools.length).toBeGreaterThan(15);
    const findings = tools.flatMap((tool) =>
      [listedTool(tool, { hosts: null }), listedTool(tool, { hosts: ["web-1", "web-2"] })].flatMap((listed) => lintTool(listed).map((f) => `${tool.name} ${f.path}: ${f.rule} (${f.message})`)),
    );
    expect(findings).toEqual([]);
  });
});
