import { describe, expect, it } from "vitest";

import { LeaseholdError } from "../errors/index";
import { artifactArgumentNames, checkInputSchema, patternProblem, toJsonPointer, validateArguments } from "./input-schema";

const hostProperty = { type: "string", minLength: 1, maxLength: 63, pattern: "^[a-z0-9][a-z0-9._-]{0,62}$" };

const operation = {
  name: "demo_run",
  input_schema: {
    type: "object",
    additionalProperties: false,
    required: ["host", "command"],
    properties: {
      host: hostProperty,
      command: { type: "string", minLength: 1, maxLength: 16 },
      language: { type: "string", enum: ["python3", "node", "bash"] },
      timeout_s: { type: "integer", minimum: 1, maximum: 600 },
      verbose: { type: "boolean" },
      egress: { type: "array", items: { type: "string", maxLength: 64 }, maxItems: 2 },
      env: {
        type: "object",
        additionalProperties: { type: "string", maxLength: 8 },
        propertyNames: { pattern: "^[A-Z_][A-Z0-9_]*$" },
        maxProperties: 2,
      },
      options: {
        type: "object",
        additionalProperties: false,
        properties: { depth: { type: "integer", minimum: 0, maximum: 3 } },
      },
    },
  },
};

function issuesFor(args: unknown): { path: string; message: string }[] {
  const result = validateArguments(operation, args);
  if (result.ok) throw new Error("expected the arguments to be refused");
  return result.issues;
}

describe("validateArguments", () => {
  it("accepts valid arguments and returns them", () => {
    const args = { host: "web-1", command: "ls", env: { PATH: "/bin" }, egress: ["10.0.0.0/8:443"], options: { depth: 2 } };
    expect(validateArguments(operation, args)).toEqual({ ok: true, value: args });
  });

  it("refuses unknown fields at the top level and in nested records, one issue per field", () => {
    expect(issuesFor({ host: "a", command: "ls", risk: "read_only", extra: 1 })).toEqual([
      { path: "/risk", message: "unknown field" },
      { path: "/extra", message: "unknown field" },
    ]);
    expect(issuesFor({ host: "a", command: "ls", options: { depth: 1, force: true } })).toEqual([{ path: "/options/force", message: "unknown field" }]);
  });

  it("refuses an own __proto__ key as an unknown field", () => {
    expect(issuesFor(JSON.parse('{"host":"a","command":"ls","__proto__":{"x":1}}'))).toEqual([{ path: "/__proto__", message: "unknown field" }]);
  });

  it("reports missing required fields", () => {
    expect(issuesFor({ host: "a" }).map((issue) => issue.path)).toEqual(["/command"]);
  });

  it.each([
    [{ host: "a", command: "x".repeat(17) }, "/command"],
    [{ host: "a", command: "" }, "/command"],
    [{ host: "A", command: "ls" }, "/host"],
    [{ host: "a b", command: "ls" }, "/host"],
    [{ host: "a", command: "ls", timeout_s: 0 }, "/timeout_s"],
    [{ host: "a", command: "ls", timeout_s: 601 }, "/timeout_s"],
    [{ host: "a", command: "ls", timeout_s: 1.5 }, "/timeout_s"],
    [{ host: "a", command: "ls", timeout_s: "5" }, "/timeout_s"],
    [{ host: "a", command: "ls", language: "ruby" }, "/language"],
    [{ host: "a", command: "ls", verbose: 1 }, "/verbose"],
    [{ host: "a", command: "ls", egress: ["a", "b", "c"] }, "/egress"],
    [{ host: "a", command: "ls", egress: [7] }, "/egress/0"],
    [{ host: "a", command: "ls", env: { A: "1", B: "2", C: "3" } }, "/env"],
    [{ host: "a", command: "ls", env: { A: "123456789" } }, "/env/A"],
    [{ host: "a", command: "ls", env: { lower: "1" } }, "/env/lower"],
    [{ host: "a", command: "ls", options: { depth: 4 } }, "/options/depth"],
  ])("refuses %j at %s", (args, path) => {
    expect(issuesFor(args).map((issue) => issue.path)).toContain(path);
  });

  it("refuses non-objects and non-JSON values without throwing", () => {
    expect(issuesFor(null)[0]?.path).toBe("");
    expect(issuesFor(["host"])[0]?.path).toBe("");
    expect(issuesFor({ host: "a", command: "ls", verbose: undefined })).toEqual([{ path: "/verbose", message: "value is not JSON (undefined)" }]);
    expect(issuesFor({ host: "a", command: "ls", timeout_s: Number.NaN })).toEqual([{ path: "/timeout_s", message: "numbers must be finite" }]);
  });

  it("refuses absurdly deep nesting before schema validation", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 100; i += 1) deep = [deep];
    expect(issuesFor({ host: "a", command: "ls", egress: deep })[0]?.message).toMatch(/nest deeper/);
  });

  it("never echoes argument values in issue messages", () => {
    const secret = "AKIAIOSFODNN7EXAMPLE-secret";
    const messages = issuesFor({ host: secret, command: secret.repeat(2), language: secret }).map((issue) => issue.message);
    expect(messages.join(" ")).not.toContain(secret);
  });

  it("throws CONFIG_INVALID for a hand-built operation whose schema is outside the subset", () => {
    expect(() => validateArguments({ name: "bad", input_schema: { type: "object" } }, {})).toThrow(LeaseholdError);
  });
});

describe("checkInputSchema (the subset gate)", () => {
  const root = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    type: "object",
    additionalProperties: false,
    properties,
    ...extra,
  });
  const paths = (schema: unknown) => checkInputSchema(schema).map((issue) => toJsonPointer(issue.path));

  it("accepts the supported subset", () => {
    expect(checkInputSchema(operation.input_schema)).toEqual([]);
  });

  it.each([
    ["a root that is not a closed object", { type: "object", properties: {} }, ""],
    ["an array root", { type: "array", items: { type: "boolean" }, maxItems: 1 }, ""],
    ["type lists", root({ a: { type: ["string", "null"], maxLength: 1 } }), "/properties/a/type"],
    ["number", root({ a: { type: "number" } }), "/properties/a/type"],
    ["null", root({ a: { type: "null" } }), "/properties/a/type"],
    ["a string without maxLength", root({ a: { type: "string" } }), "/properties/a/maxLength"],
    ["a string over the size ceiling", root({ a: { type: "string", maxLength: 5 * 1024 * 1024 } }), "/properties/a/maxLength"],
    ["minLength > maxLength", root({ a: { type: "string", minLength: 5, maxLength: 4 } }), "/properties/a/minLength"],
    ["an unanchored pattern", root({ a: { type: "string", maxLength: 4, pattern: "[a-z]+" } }), "/properties/a/pattern"],
    ["a top-level alternation", root({ a: { type: "string", maxLength: 4, pattern: "^a|b$" } }), "/properties/a/pattern"],
    ["an escaped final $", root({ a: { type: "string", maxLength: 4, pattern: "^a\\$" } }), "/properties/a/pattern"],
    ["an invalid regex", root({ a: { type: "string", maxLength: 4, pattern: "^(a$" } }), "/properties/a/pattern"],
    ["an empty enum", root({ a: { type: "string", enum: [] } }), "/properties/a/enum"],
    ["a duplicate enum", root({ a: { type: "string", enum: ["x", "x"] } }), "/properties/a/enum"],
    ["an integer without bounds", root({ a: { type: "integer", minimum: 0 } }), "/properties/a/maximum"],
    ["an array without maxItems", root({ a: { type: "array", items: { type: "boolean" } } }), "/properties/a/maxItems"],
    ["an array without items", root({ a: { type: "array", maxItems: 3 } }), "/properties/a/items"],
    ["a map without maxProperties", root({ a: { type: "object", additionalProperties: { type: "boolean" }, propertyNames: { pattern: "^a$" } } }), "/properties/a/maxProperties"],
    ["a map without propertyNames", root({ a: { type: "object", additionalProperties: { type: "boolean" }, maxProperties: 2 } }), "/properties/a/propertyNames"],
    ["an open nested object", root({ a: { type: "object", properties: {} } }), "/properties/a/additionalProperties"],
    ["required naming an undeclared property", root({ a: { type: "boolean" } }, { required: ["b"] }), "/required/0"],
    ["a property name that is not an identifier", root({ "a-b": { type: "boolean" } }), "/properties/a-b"],
    ["$ref", root({ a: { $ref: "#/$defs/x", type: "string", maxLength: 1 } }), "/properties/a/$ref"],
    ["default", root({ a: { type: "string", maxLength: 1, default: "x" } }), "/properties/a/default"],
    ["format", root({ a: { type: "string", maxLength: 9, format: "email" } }), "/properties/a/format"],
    ["anyOf", root({ a: { type: "string", maxLength: 1, anyOf: [] } }), "/properties/a/anyOf"],
    ["a title", root({}, { title: "x" }), "/title"],
    ["oneOf", root({ a: { oneOf: [{ type: "string", maxLength: 1 }, { type: "boolean" }] } }), "/properties/a/type"],
    ["oneOf beside a type", root({ a: { type: "string", maxLength: 1, oneOf: [] } }), "/properties/a/oneOf"],
    ["anyOf with one branch", root({ a: { anyOf: [{ type: "boolean" }] } }), "/properties/a/anyOf"],
    ["anyOf with five branches", root({ a: { anyOf: [{ type: "boolean" }, { type: "string", maxLength: 1 }, { type: "integer", minimum: 0, maximum: 1 }, { type: "array", items: { type: "boolean" }, maxItems: 1 }, { type: "object", additionalProperties: false }] } }), "/properties/a/anyOf"],
    ["anyOf branches of one type (a value could match both)", root({ a: { anyOf: [{ type: "string", maxLength: 1 }, { type: "string", enum: ["xy"] }] } }), "/properties/a/anyOf/1/type"],
    ["anyOf directly inside anyOf", root({ a: { anyOf: [{ type: "boolean" }, { anyOf: [{ type: "string", maxLength: 1 }, { type: "integer", minimum: 0, maximum: 1 }] }] } }), "/properties/a/anyOf/1"],
    ["a keyword beside anyOf", root({ a: { anyOf: [{ type: "boolean" }, { type: "string", maxLength: 1 }], maxLength: 3 } }), "/properties/a/maxLength"],
    ["an anyOf branch outside the subset", root({ a: { anyOf: [{ type: "boolean" }, { type: "string" }] } }), "/properties/a/anyOf/1/maxLength"],
    ["an anyOf root", { anyOf: [{ type: "boolean" }, { type: "string", maxLength: 1 }] }, ""],
  ])("refuses %s", (_label, schema, path) => {
    expect(paths(schema)).toContain(path);
  });

  it("refuses schemas nested too deeply", () => {
    let node: Record<string, unknown> = { type: "boolean" };
    for (let i = 0; i < 8; i += 1) node = { type: "array", items: node, maxItems: 1 };
    expect(checkInputSchema(root({ a: node })).some((issue) => issue.message.includes("deeper"))).toBe(true);
  });

  it("refuses schemas with too many nodes", () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 64; i += 1) properties[`p${i}`] = { type: "array", items: { type: "array", items: { type: "array", items: { type: "boolean" }, maxItems: 1 }, maxItems: 1 }, maxItems: 1 };
    expect(checkInputSchema(root(properties)).some((issue) => issue.message.includes("nodes"))).toBe(true);
  });

  it("accepts anyOf of schemas of different types, and validates each value against the branch of its type", () => {
    const label = { type: "string", maxLength: 8, pattern: "^[a-z]+$" };
    const schema = root({ mounts: { type: "array", maxItems: 2, items: { anyOf: [label, { type: "object", additionalProperties: false, required: ["label", "mode"], properties: { label, mode: { type: "string", enum: ["ro", "rw"] } } }] } } });
    expect(checkInputSchema(schema)).toEqual([]);
    const op = { name: "mounting", input_schema: schema };
    expect(validateArguments(op, { mounts: ["logs", { label: "app", mode: "rw" }] }).ok).toBe(true);
    expect(validateArguments(op, { mounts: [{ label: "app", mode: "rwx" }] }).ok).toBe(false);
    expect(validateArguments(op, { mounts: ["Logs"] }).ok).toBe(false);
    expect(validateArguments(op, { mounts: [true] }).ok).toBe(false);
  });

  it("counts maxBytes in the anyOf branch a value took", () => {
    const op = { name: "bytes", input_schema: root({ a: { anyOf: [{ type: "string", maxLength: 4, maxBytes: 4 }, { type: "boolean" }] } }) };
    expect(validateArguments(op, { a: "abcd" }).ok).toBe(true);
    expect(validateArguments(op, { a: "ééé" })).toEqual({ ok: false, issues: [{ path: "/a", message: "is 6 bytes as UTF-8; the limit is 4 bytes (maxBytes)" }] });
    expect(validateArguments(op, { a: true }).ok).toBe(true);
  });

  it("patternProblem accepts grouped alternation and escaped characters", () => {
    expect(patternProblem("^(?:a|b)$")).toBeUndefined();
    expect(patternProblem("^[|]x\\|y$")).toBeUndefined();
  });
});

describe("the artifact keyword", () => {
  const artifactProperty = {
    type: "object",
    additionalProperties: false,
    artifact: true,
    properties: {
      base64: { type: "string", maxLength: 4_194_304 },
      sha256: { type: "string", maxLength: 64, pattern: "^[0-9a-f]{64}$" },
    },
  };
  const withArtifact = (artifact: unknown) => ({
    type: "object",
    additionalProperties: false,
    required: ["artifact"],
    properties: { host: hostProperty, artifact },
  });
  const paths = (schema: unknown) => checkInputSchema(schema).map((issue) => `${toJsonPointer(issue.path)} ${issue.message}`);

  it("accepts artifact: true on the root's artifact property with base64 and sha256", () => {
    expect(checkInputSchema(withArtifact(artifactProperty))).toEqual([]);
    expect(artifactArgumentNames(withArtifact(artifactProperty))).toEqual(["artifact"]);
    expect(artifactArgumentNames(operation.input_schema)).toEqual([]);
  });

  it("refuses it anywhere else, with other properties, a required list, a loose sha256 or a value other than true", () => {
    expect(paths({ type: "object", additionalProperties: false, properties: { input: artifactProperty } })).toEqual([`/properties/input/artifact "artifact": true is only allowed on the root's "artifact" property`]);
    expect(paths(withArtifact({ type: "object", additionalProperties: false, properties: { nested: artifactProperty } }))).toHaveLength(1);
    expect(paths(withArtifact({ ...artifactProperty, properties: { ...artifactProperty.properties, path: { type: "string", maxLength: 10 } } }))).toEqual([
      `/properties/artifact/properties an artifact argument has exactly the properties "base64" and "sha256"`,
    ]);
    expect(paths(withArtifact({ ...artifactProperty, required: ["sha256"] }))).toHaveLength(1);
    expect(paths(withArtifact({ ...artifactProperty, properties: { ...artifactProperty.properties, sha256: { type: "string", maxLength: 64 } } }))).toEqual([
      "/properties/artifact/properties/sha256 \"sha256\" must be a string with pattern ^[0-9a-f]{64}$",
    ]);
    expect(paths(withArtifact({ ...artifactProperty, artifact: "yes" }))).toEqual(['/properties/artifact/artifact "artifact" must be true']);
    // Only objects carry it.
    expect(paths(withArtifact({ type: "string", maxLength: 5, artifact: true }))).toEqual(['/properties/artifact/artifact keyword "artifact" is outside the supported JSON Schema subset for type string']);
  });

  it("validateArguments demands exactly one of base64 and sha256, and the sha256 pattern", () => {
    const op = { name: "inspect", input_schema: withArtifact(artifactProperty) };
    const sha256 = "a".repeat(64);
    expect(validateArguments(op, { host: "h", artifact: { sha256 } })).toEqual({ ok: true, value: { host: "h", artifact: { sha256 } } });
    expect(validateArguments(op, { host: "h", artifact: { base64: "AAAA" } }).ok).toBe(true);
    expect(validateArguments(op, { host: "h", artifact: {} })).toEqual({ ok: false, issues: [{ path: "/artifact", message: "must give exactly one of base64 and sha256 (got neither)" }] });
    expect(validateArguments(op, { host: "h", artifact: { base64: "AAAA", sha256 } })).toEqual({ ok: false, issues: [{ path: "/artifact", message: "must give exactly one of base64 and sha256 (got both)" }] });
    const upper = validateArguments(op, { host: "h", artifact: { sha256: "A".repeat(64) } });
    expect(upper.ok === false && upper.issues[0]?.path).toBe("/artifact/sha256");
    const extra = validateArguments(op, { host: "h", artifact: { sha256, path: "../x" } });
    expect(extra.ok === false && extra.issues).toEqual([{ path: "/artifact/path", message: "unknown field" }]);
  });
});
