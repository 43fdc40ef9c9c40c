/**
 * A portability check of tool schemas, the kind the MCP Inspector's
 * `--strict` mode runs over tools/list: constructs that are valid JSON Schema
 * but that clients mapping tool schemas onto a single-`type` dialect (such as
 * the OpenAPI subset some model providers take) reject or silently weaken.
 * The hub's listed input and output schemas must give no finding
 * (schema-lint.test.ts); docs/design.md#mcp-tools says why each rule holds.
 *
 * Rules:
 *   - `boolean-schema`: a bare `true`/`false` where a schema object is
 *     expected (keywords whose value may be a boolean, such as
 *     `additionalProperties`, are fine);
 *   - `type-union`: `type` is an array (`["string", "null"]`); write `anyOf`
 *     branches with one `type` each;
 *   - `untyped-schema`: a schema object with no validation keyword at all
 *     (`{}` or only annotations): it accepts any value;
 *   - `remote-ref`: a `$ref` outside this document (clients do not fetch);
 *   - `nullable-keyword`: OpenAPI's `nullable`, which JSON Schema ignores.
 */

export type SchemaRule = "boolean-schema" | "type-union" | "untyped-schema" | "remote-ref" | "nullable-keyword";

export interface SchemaFinding {
  rule: SchemaRule;
  /** JSON Pointer of the offending schema within the linted one. */
  path: string;
  message: string;
}

/** Keywords that validate something; a schema object with none of them accepts anything. */
const VALIDATING = new Set([
  "type",
  "enum",
  "const",
  "multipleOf",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "format",
  "maxItems",
  "minItems",
  "uniqueItems",
  "maxContains",
  "minContains",
  "maxProperties",
  "minProperties",
  "required",
  "dependentRequired",
  "allOf",
  "anyOf",
  "oneOf",
  "not",
  "items",
  "prefixItems",
  "contains",
  "properties",
  "patternProperties",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
  "dependentSchemas",
  "$ref",
]);

/** Keywords whose value is a map of name → schema. */
const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"] as const;
/** Keywords whose value is a list of schemas. */
const SCHEMA_LISTS = ["allOf", "anyOf", "oneOf", "prefixItems"] as const;
/** Keywords whose value is one schema. */
const SCHEMA_SINGLE = ["items", "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "additionalItems", "not", "contains", "propertyNames", "if", "then", "else"] as const;
/** Of those, the ones where `true`/`false` is the usual, portable spelling (allow / forbid the rest). */
const BOOLEAN_ALLOWED = new Set(["additionalProperties", "unevaluatedProperties", "unevaluatedItems", "additionalItems"]);

const MAX_DEPTH = 64;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function pointer(parent: string, key: string | number): string {
  return `${parent}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

function walk(node: unknown, path: string, keyword: string | undefined, depth: number, out: SchemaFinding[]): void {
  if (depth > MAX_DEPTH) return;
  if (typeof node === "boolean") {
    if (keyword === undefined || !BOOLEAN_ALLOWED.has(keyword)) out.push({ rule: "boolean-schema", path, message: `bare ${String(node)} where a schema object is expected` });
    return;
  }
  if (!isRecord(node)) return;
  if (Array.isArray(node.type)) out.push({ rule: "type-union", path, message: `type is an array (${JSON.stringify(node.type)}); use anyOf branches with one type each` });
  if (typeof node.$ref === "string" && !node.$ref.startsWith("#")) out.push({ rule: "remote-ref", path, message: `$ref points outside this document (${node.$ref})` });
  if ("nullable" in node) out.push({ rule: "nullable-keyword", path, message: "nullable is OpenAPI, not JSON Schema; use anyOf with {type: null}" });
  const validates = Object.keys(node).some((k) => VALIDATING.has(k)) || ("if" in node && ("then" in node || "else" in node));
  if (!validates && keyword !== "not") out.push({ rule: "untyped-schema", path, message: "no validation keyword: accepts any value" });
  for (const key of SCHEMA_MAPS) {
    const map = node[key];
    if (isRecord(map)) for (const [name, sub] of Object.entries(map)) walk(sub, pointer(pointer(path, key), name), key, depth + 1, out);
  }
  for (const key of SCHEMA_LISTS) {
    const list = node[key];
    if (Array.isArray(list)) list.forEach((sub, i) => walk(sub, pointer(pointer(path, key), i), key, depth + 1, out));
  }
  for (const key of SCHEMA_SINGLE) {
    if (!(key in node)) continue;
    const value = node[key];
    if (key === "items" && Array.isArray(value)) value.forEach((sub, i) => walk(sub, pointer(pointer(path, key), i), key, depth + 1, out));
    else walk(value, pointer(path, key), key, depth + 1, out);
  }
}

/** Every portability finding in one schema (an empty list: portable). */
export function lintSchema(schema: unknown): SchemaFinding[] {
  const out: SchemaFinding[] = [];
  walk(schema, "", undefined, 0, out);
  return out;
}

/** Findings of a tool as tools/list shows it, each path prefixed with `inputSchema` or `outputSchema`. */
export function lintTool(tool: { inputSchema?: unknown; outputSchema?: unknown }): SchemaFinding[] {
  const prefixed = (kind: string, findings: SchemaFinding[]) => findings.map((f) => ({ ...f, path: `${kind}${f.path}` }));
  return [
    ...(tool.inputSchema === undefined ? [] : prefixed("inputSchema", lintSchema(tool.inputSchema))),
    ...(tool.outputSchema === undefined ? [] : prefixed("outputSchema", lintSchema(tool.outputSchema))),
  ];
}
