/**
 * Operation arguments: the JSON Schema subset manifests may use, the gate that
 * refuses anything outside it, and `validateArguments`.
 *
 * Validation itself is zod 4's `z.fromJSONSchema` (zod is already the
 * project's validator, pinned exactly). That converter silently ignores
 * keywords it does not know and is marked semi-experimental upstream, so it is
 * only ever handed schemas that passed `checkInputSchema` below: a small,
 * fully bounded subset whose meaning we pin with tests. A manifest that uses
 * any other keyword is refused at load time (fail closed) instead of being
 * half-enforced.
 *
 * Supported subset (every node has exactly one `type`):
 * - `string`:  `maxLength` (required unless `enum`), `minLength`, `pattern`
 *              (anchored `^…$`, no top-level `|`), `enum` (non-empty unique strings),
 *              `maxBytes` (Leasehold's own: UTF-8 bytes, for limits a later
 *              stage counts in bytes, such as the kernel's per-argument limit)
 * - `integer`: `minimum` and `maximum`, both required, safe integers
 * - `boolean`
 * - `array`:   `items` (one subset schema) and `maxItems` (required), `minItems`
 * - `object`:  either a record — `properties`, `required`,
 *              `additionalProperties: false` — or a map — `additionalProperties`
 *              set to a subset schema together with `propertyNames: {pattern,
 *              maxLength?}` and `maxProperties` (required), no `properties`;
 *              `maxTotalBytes` (Leasehold's own: the UTF-8 bytes of every
 *              entry as `KEY=VALUE` plus a NUL, i.e. what an environment
 *              block costs the sandbox launcher's config pipe)
 * - `artifact: true` (Leasehold's own) on the
 *              root's record property named `artifact`, whose properties are
 *              exactly `base64` (string) and `sha256` (string, pattern
 *              `^[0-9a-f]{64}$`), none required: `validateArguments` demands
 *              exactly one, and the pipeline's prepare step turns either into
 *              `{sha256, bytes}` naming a stored artifact (server/artifacts)
 * - `anyOf`:   2..4 subset schemas of pairwise different `type`s, and nothing
 *              but `description` beside it (a node with `anyOf` has no
 *              `type`); never at the root, never directly inside another
 *              `anyOf`. Different types mean a value matches at most one
 *              branch, so validation and the byte limits have one answer:
 *              `mounts: ["logs", {"label": "app", "mode": "rw"}]`
 * - `description` (≤ 1024 characters) on any node
 * The root is a record object with `additionalProperties: false`. No `number`
 * (the prepared action is hashed as JCS and floats buy nothing here), no
 * `null`, no `default` (defaults are applied by adapters, visibly), no
 * `$ref`, no other combinator (`oneOf`, `allOf`, `not`), no `format`.
 *
 * Known differences from a full JSON Schema validator, all in the stricter
 * direction: string lengths count UTF-16 code units (JSON Schema counts code
 * points, so a string of astral characters hits `maxLength` sooner), and
 * argument objects must be plain JSON (an `undefined` value is refused, not
 * treated as absent).
 */
import { z } from "zod";

import { LeaseholdError } from "../errors/index";

export type InputSchemaNode =
  | StringSchemaNode
  | IntegerSchemaNode
  | BooleanSchemaNode
  | ArraySchemaNode
  | RecordSchemaNode
  | MapSchemaNode
  | AnyOfSchemaNode;

/** The node types a value can have; an `anyOf` node has none of its own. */
export type TypedSchemaNode = Exclude<InputSchemaNode, AnyOfSchemaNode>;

interface NodeBase {
  description?: string;
}
export interface StringSchemaNode extends NodeBase {
  type: "string";
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  enum?: string[];
  /** UTF-8 bytes (Leasehold keyword; z.fromJSONSchema ignores it, `validateArguments` checks it). */
  maxBytes?: number;
}
export interface IntegerSchemaNode extends NodeBase {
  type: "integer";
  minimum: number;
  maximum: number;
}
export interface BooleanSchemaNode extends NodeBase {
  type: "boolean";
}
export interface ArraySchemaNode extends NodeBase {
  type: "array";
  items: InputSchemaNode;
  minItems?: number;
  maxItems: number;
}
export interface RecordSchemaNode extends NodeBase {
  type: "object";
  properties?: Record<string, InputSchemaNode>;
  required?: string[];
  additionalProperties: false;
  /** An artifact reference (Leasehold keyword): `{base64}` or `{sha256}`, resolved by the pipeline. */
  artifact?: true;
}
export interface MapSchemaNode extends NodeBase {
  type: "object";
  additionalProperties: InputSchemaNode;
  propertyNames: { pattern: string; maxLength?: number };
  maxProperties: number;
  /** Σ bytes of `KEY=VALUE\0` over the entries (Leasehold keyword, checked by `validateArguments`). */
  maxTotalBytes?: number;
}
/** One of a few schemas of different types (`string | {label, mode}`). */
export interface AnyOfSchemaNode extends NodeBase {
  anyOf: TypedSchemaNode[];
}
/** What an operation's `input_schema` is once it has passed the gate. */
export type OperationInputSchema = RecordSchemaNode;

/** Limits on the schemas themselves, so a manifest cannot make validation expensive. */
export const INPUT_SCHEMA_LIMITS = {
  maxDepth: 6,
  maxNodes: 256,
  maxProperties: 64,
  /** No string argument can be longer than the default MCP request body. */
  maxStringLength: 4 * 1024 * 1024,
  maxPatternLength: 512,
  maxEnumValues: 64,
  maxEnumValueLength: 256,
  maxItems: 1024,
  maxMapProperties: 256,
  maxDescriptionLength: 1024,
  maxAnyOfBranches: 4,
} as const;

/** Property names in record schemas: the same safe identifiers as operation names. */
const PROPERTY_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

const ALLOWED_KEYWORDS: Record<TypedSchemaNode["type"], ReadonlySet<string>> = {
  string: new Set(["type", "description", "minLength", "maxLength", "pattern", "enum", "maxBytes"]),
  integer: new Set(["type", "description", "minimum", "maximum"]),
  boolean: new Set(["type", "description"]),
  array: new Set(["type", "description", "items", "minItems", "maxItems"]),
  object: new Set([
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
    "maxProperties",
    "maxTotalBytes",
    "artifact",
  ]),
};

/** The one property name that may carry `artifact: true` (the prepared action's `arguments.artifact`). */
export const ARTIFACT_PROPERTY = "artifact";
const ARTIFACT_SHA256_PATTERN = "^[0-9a-f]{64}$";

export type SchemaPath = ReadonlyArray<string | number>;
export interface SchemaIssue {
  path: SchemaPath;
  message: string;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function isBoundedInt(value: unknown, min: number, max: number): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= min && value <= max;
}

/**
 * Why a regular expression is unacceptable as a `pattern`, or undefined if it
 * is fine. JSON Schema patterns are unanchored, which turns an intended
 * whole-value check into a substring check; we require `^…$` and refuse a
 * top-level `|` (in `^a|b$` only the first branch is anchored at the start).
 */
export function patternProblem(pattern: string): string | undefined {
  if (pattern.length === 0 || pattern.length > INPUT_SCHEMA_LIMITS.maxPatternLength) {
    return `pattern must be 1..${INPUT_SCHEMA_LIMITS.maxPatternLength} characters`;
  }
  try {
    new RegExp(pattern);
  } catch {
    return "pattern is not a valid regular expression";
  }
  if (!pattern.startsWith("^")) return "pattern must be anchored: start with ^";
  let depth = 0;
  let inClass = false;
  let lastWasEscape = false;
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index];
    lastWasEscape = false;
    if (char === "\\") {
      index += 1;
      lastWasEscape = true;
      continue;
    }
    if (inClass) {
      if (char === "]") inClass = false;
      continue;
    }
    if (char === "[") inClass = true;
    else if (char === "(") depth += 1;
    else if (char === ")") depth -= 1;
    else if (char === "|" && depth === 0) return "pattern has a top-level |; wrap the alternatives: ^(?:a|b)$";
  }
  if (!pattern.endsWith("$") || lastWasEscape) return "pattern must be anchored: end with $";
  return undefined;
}

interface WalkState {
  nodes: number;
  issues: SchemaIssue[];
}

function checkNode(node: unknown, path: (string | number)[], depth: number, state: WalkState): void {
  const issue = (message: string, at: (string | number)[] = path): void => {
    state.issues.push({ path: at, message });
  };
  state.nodes += 1;
  if (state.nodes > INPUT_SCHEMA_LIMITS.maxNodes) {
    if (state.nodes === INPUT_SCHEMA_LIMITS.maxNodes + 1) issue(`schema has more than ${INPUT_SCHEMA_LIMITS.maxNodes} nodes`);
    return;
  }
  if (depth > INPUT_SCHEMA_LIMITS.maxDepth) {
    issue(`schema nests deeper than ${INPUT_SCHEMA_LIMITS.maxDepth} levels`);
    return;
  }
  if (!isPlainObject(node)) {
    issue("expected a JSON Schema object");
    return;
  }
  if (node["anyOf"] !== undefined) {
    checkAnyOfNode(node, path, depth, state, issue);
    return;
  }
  const type = node["type"];
  if (type !== "string" && type !== "integer" && type !== "boolean" && type !== "array" && type !== "object") {
    issue('"type" must be one of string, integer, boolean, array, object (a single type)', [...path, "type"]);
    return;
  }
  const allowed = ALLOWED_KEYWORDS[type];
  for (const key of Object.keys(node)) {
    if (!allowed.has(key)) issue(`keyword "${key}" is outside the supported JSON Schema subset for type ${type}`, [...path, key]);
  }
  const description = node["description"];
  if (description !== undefined && (typeof description !== "string" || description.length > INPUT_SCHEMA_LIMITS.maxDescriptionLength)) {
    issue(`"description" must be a string of at most ${INPUT_SCHEMA_LIMITS.maxDescriptionLength} characters`, [...path, "description"]);
  }

  switch (type) {
    case "string":
      checkStringNode(node, path, issue);
      return;
    case "integer":
      checkIntegerNode(node, path, issue);
      return;
    case "boolean":
      return;
    case "array":
      checkArrayNode(node, path, depth, state, issue);
      return;
    case "object":
      checkObjectNode(node, path, depth, state, issue);
      return;
  }
}

type IssueFn = (message: string, at?: (string | number)[]) => void;

/**
 * `anyOf` is kept to branches of different types so that a value picks its
 * branch by its JSON type alone: no value is valid two ways, zod's union
 * error names the one branch that applied, and `byteLimitProblems` knows
 * which branch's limits to count.
 */
function checkAnyOfNode(node: Record<string, unknown>, path: (string | number)[], depth: number, state: WalkState, issue: IssueFn): void {
  for (const key of Object.keys(node)) {
    if (key !== "anyOf" && key !== "description") issue(`keyword "${key}" is not allowed beside "anyOf" (only "description")`, [...path, key]);
  }
  if (path.length === 0) issue('the root cannot be an "anyOf"');
  const description = node["description"];
  if (description !== undefined && (typeof description !== "string" || description.length > INPUT_SCHEMA_LIMITS.maxDescriptionLength)) {
    issue(`"description" must be a string of at most ${INPUT_SCHEMA_LIMITS.maxDescriptionLength} characters`, [...path, "description"]);
  }
  const branches = node["anyOf"];
  if (!Array.isArray(branches) || branches.length < 2 || branches.length > INPUT_SCHEMA_LIMITS.maxAnyOfBranches) {
    issue(`"anyOf" must list 2..${INPUT_SCHEMA_LIMITS.maxAnyOfBranches} schemas`, [...path, "anyOf"]);
    return;
  }
  const seen = new Set<unknown>();
  branches.forEach((branch: unknown, index) => {
    const at = [...path, "anyOf", index];
    if (isPlainObject(branch) && branch["anyOf"] !== undefined) {
      issue('"anyOf" cannot nest directly inside "anyOf"', at);
      return;
    }
    const type = isPlainObject(branch) ? branch["type"] : undefined;
    if (seen.has(type)) issue(`"anyOf" branches must have different types; ${String(type)} appears twice`, [...at, "type"]);
    seen.add(type);
    checkNode(branch, at, depth + 1, state);
  });
}

/** JSON Schema's name for a JSON value's type (`integer` for a safe integer), for picking an `anyOf` branch. */
function jsonTypeOf(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (value === null) return "null";
  if (typeof value === "number") return Number.isSafeInteger(value) ? "integer" : "number";
  return typeof value;
}

/** The branch of `node` a value of this JSON type validates against (the node itself when it is not an `anyOf`). */
export function branchFor(node: InputSchemaNode, value: unknown): TypedSchemaNode | undefined {
  if (!("anyOf" in node)) return node;
  const type = jsonTypeOf(value);
  return node.anyOf.find((branch) => branch.type === type);
}

function checkStringNode(node: Record<string, unknown>, path: (string | number)[], issue: IssueFn): void {
  const { minLength, maxLength, pattern } = node;
  const values = node["enum"];
  const limit = INPUT_SCHEMA_LIMITS.maxStringLength;
  if (values !== undefined) {
    if (
      !Array.isArray(values) ||
      values.length === 0 ||
      values.length > INPUT_SCHEMA_LIMITS.maxEnumValues ||
      !values.every((value) => typeof value === "string" && value.length > 0 && value.length <= INPUT_SCHEMA_LIMITS.maxEnumValueLength) ||
      new Set(values).size !== values.length
    ) {
      issue(`"enum" must be 1..${INPUT_SCHEMA_LIMITS.maxEnumValues} unique non-empty strings`, [...path, "enum"]);
    }
  } else if (maxLength === undefined) {
    issue('every string needs "maxLength" (or an "enum")', [...path, "maxLength"]);
  }
  if (maxLength !== undefined && !isBoundedInt(maxLength, 1, limit)) issue(`"maxLength" must be an integer 1..${limit}`, [...path, "maxLength"]);
  if (minLength !== undefined && !isBoundedInt(minLength, 0, limit)) issue(`"minLength" must be an integer 0..${limit}`, [...path, "minLength"]);
  if (typeof minLength === "number" && typeof maxLength === "number" && minLength > maxLength) {
    issue('"minLength" exceeds "maxLength"', [...path, "minLength"]);
  }
  const maxBytes = node["maxBytes"];
  if (maxBytes !== undefined && !isBoundedInt(maxBytes, 1, 4 * limit)) issue(`"maxBytes" must be an integer 1..${4 * limit}`, [...path, "maxBytes"]);
  if (pattern !== undefined) {
    const problem = typeof pattern === "string" ? patternProblem(pattern) : '"pattern" must be a string';
    if (problem !== undefined) issue(problem, [...path, "pattern"]);
  }
}

function checkIntegerNode(node: Record<string, unknown>, path: (string | number)[], issue: IssueFn): void {
  const { minimum, maximum } = node;
  const bound = Number.MAX_SAFE_INTEGER;
  if (!isBoundedInt(minimum, -bound, bound)) issue('"minimum" is required and must be a safe integer', [...path, "minimum"]);
  if (!isBoundedInt(maximum, -bound, bound)) issue('"maximum" is required and must be a safe integer', [...path, "maximum"]);
  if (typeof minimum === "number" && typeof maximum === "number" && minimum > maximum) issue('"minimum" exceeds "maximum"', [...path, "minimum"]);
}

function checkArrayNode(
  node: Record<string, unknown>,
  path: (string | number)[],
  depth: number,
  state: WalkState,
  issue: IssueFn,
): void {
  const { items, minItems, maxItems } = node;
  if (!isBoundedInt(maxItems, 1, INPUT_SCHEMA_LIMITS.maxItems)) {
    issue(`"maxItems" is required and must be an integer 1..${INPUT_SCHEMA_LIMITS.maxItems}`, [...path, "maxItems"]);
  }
  if (minItems !== undefined && !isBoundedInt(minItems, 0, INPUT_SCHEMA_LIMITS.maxItems)) {
    issue(`"minItems" must be an integer 0..${INPUT_SCHEMA_LIMITS.maxItems}`, [...path, "minItems"]);
  }
  if (typeof minItems === "number" && typeof maxItems === "number" && minItems > maxItems) issue('"minItems" exceeds "maxItems"', [...path, "minItems"]);
  if (items === undefined) issue('"items" is required (one schema for every element)', [...path, "items"]);
  else checkNode(items, [...path, "items"], depth + 1, state);
}

/**
 * `artifact: true` means "the pipeline replaces this value with a stored
 * artifact's `{sha256, bytes}`", so its shape is fixed: only where the
 * prepared action and the guest look for it (the root's `artifact`
 * property), only `base64` and `sha256`, nothing required (exactly one is
 * checked per call).
 */
function checkArtifactNode(node: Record<string, unknown>, path: (string | number)[], issue: IssueFn): void {
  const at = [...path, "artifact"];
  if (node["artifact"] !== true) {
    issue('"artifact" must be true', at);
    return;
  }
  if (path.length !== 2 || path[0] !== "properties" || path[1] !== ARTIFACT_PROPERTY) {
    issue(`"artifact": true is only allowed on the root's "${ARTIFACT_PROPERTY}" property`, at);
    return;
  }
  if (node["additionalProperties"] !== false) issue('an artifact argument must be a record object (additionalProperties: false)', at);
  const properties = isPlainObject(node["properties"]) ? node["properties"] : {};
  const names = Object.keys(properties).sort();
  if (names.join(",") !== "base64,sha256") issue('an artifact argument has exactly the properties "base64" and "sha256"', [...path, "properties"]);
  if (node["required"] !== undefined) issue('an artifact argument declares no "required" (exactly one of base64 and sha256 is checked per call)', [...path, "required"]);
  const base64 = properties["base64"];
  if (base64 !== undefined && (!isPlainObject(base64) || base64["type"] !== "string")) issue('"base64" must be a string', [...path, "properties", "base64"]);
  const sha256 = properties["sha256"];
  if (sha256 !== undefined && (!isPlainObject(sha256) || sha256["type"] !== "string" || sha256["pattern"] !== ARTIFACT_SHA256_PATTERN)) {
    issue(`"sha256" must be a string with pattern ${ARTIFACT_SHA256_PATTERN}`, [...path, "properties", "sha256"]);
  }
}

/** Names of the root properties an operation marks `artifact: true` (what the pipeline resolves). */
export function artifactArgumentNames(schema: unknown): string[] {
  if (!isPlainObject(schema) || !isPlainObject(schema["properties"])) return [];
  return Object.entries(schema["properties"])
    .filter(([, child]) => isPlainObject(child) && child["artifact"] === true)
    .map(([name]) => name);
}

function checkObjectNode(
  node: Record<string, unknown>,
  path: (string | number)[],
  depth: number,
  state: WalkState,
  issue: IssueFn,
): void {
  const { properties, required, additionalProperties, propertyNames, maxProperties } = node;
  if (node["artifact"] !== undefined) checkArtifactNode(node, path, issue);
  if (additionalProperties === false) {
    if (propertyNames !== undefined) issue('"propertyNames" is only allowed on map objects', [...path, "propertyNames"]);
    if (maxProperties !== undefined) issue('"maxProperties" is only allowed on map objects', [...path, "maxProperties"]);
    if (node["maxTotalBytes"] !== undefined) issue('"maxTotalBytes" is only allowed on map objects', [...path, "maxTotalBytes"]);
    const names: string[] = [];
    if (properties !== undefined) {
      if (!isPlainObject(properties)) {
        issue('"properties" must be an object', [...path, "properties"]);
      } else {
        const entries = Object.entries(properties);
        if (entries.length > INPUT_SCHEMA_LIMITS.maxProperties) issue(`at most ${INPUT_SCHEMA_LIMITS.maxProperties} properties`, [...path, "properties"]);
        for (const [name, child] of entries) {
          if (!PROPERTY_NAME_PATTERN.test(name)) issue(`property name "${name}" must match ${PROPERTY_NAME_PATTERN.source}`, [...path, "properties", name]);
          names.push(name);
          checkNode(child, [...path, "properties", name], depth + 1, state);
        }
      }
    }
    if (required !== undefined) {
      if (!Array.isArray(required) || !required.every((name) => typeof name === "string") || new Set(required).size !== required.length) {
        issue('"required" must be an array of unique property names', [...path, "required"]);
      } else {
        required.forEach((name: string, index) => {
          if (!names.includes(name)) issue(`required property "${name}" is not declared in "properties"`, [...path, "required", index]);
        });
      }
    }
    return;
  }
  if (isPlainObject(additionalProperties)) {
    if (properties !== undefined) issue('a map object (additionalProperties: schema) cannot also declare "properties"', [...path, "properties"]);
    if (required !== undefined) issue('a map object cannot declare "required"', [...path, "required"]);
    if (!isBoundedInt(maxProperties, 1, INPUT_SCHEMA_LIMITS.maxMapProperties)) {
      issue(`a map object needs "maxProperties" 1..${INPUT_SCHEMA_LIMITS.maxMapProperties}`, [...path, "maxProperties"]);
    }
    const total = node["maxTotalBytes"];
    if (total !== undefined && !isBoundedInt(total, 1, 64 * 1024 * 1024)) issue('"maxTotalBytes" must be an integer 1..67108864', [...path, "maxTotalBytes"]);
    checkPropertyNames(propertyNames, [...path, "propertyNames"], issue);
    checkNode(additionalProperties, [...path, "additionalProperties"], depth + 1, state);
    return;
  }
  issue('"additionalProperties" must be false, or a schema for a map object', [...path, "additionalProperties"]);
}

function checkPropertyNames(value: unknown, path: (string | number)[], issue: IssueFn): void {
  if (!isPlainObject(value)) {
    issue('a map object needs "propertyNames": {"pattern": "^…$"}', path);
    return;
  }
  for (const key of Object.keys(value)) {
    if (key !== "pattern" && key !== "maxLength") issue(`keyword "${key}" is outside the supported subset for propertyNames`, [...path, key]);
  }
  const { pattern, maxLength } = value;
  const problem = typeof pattern === "string" ? patternProblem(pattern) : '"pattern" is required';
  if (problem !== undefined) issue(problem, [...path, "pattern"]);
  if (maxLength !== undefined && !isBoundedInt(maxLength, 1, 1024)) issue('"maxLength" must be an integer 1..1024', [...path, "maxLength"]);
}

/**
 * The gate. Returns every reason `schema` is not an acceptable operation
 * input schema (empty when it is). The root must be a record object with
 * `additionalProperties: false`, so unknown argument fields are always refused.
 */
export function checkInputSchema(schema: unknown): SchemaIssue[] {
  const state: WalkState = { nodes: 0, issues: [] };
  if (!isPlainObject(schema) || schema["type"] !== "object" || schema["additionalProperties"] !== false) {
    state.issues.push({ path: [], message: 'an input_schema must be {"type": "object", "additionalProperties": false, ...}' });
    return state.issues;
  }
  checkNode(schema, [], 0, state);
  if (state.issues.length === 0) {
    try {
      z.fromJSONSchema(schema as z.core.JSONSchema.JSONSchema);
    } catch (error) {
      state.issues.push({ path: [], message: `schema does not compile: ${error instanceof Error ? error.message : "unknown error"}` });
    }
  }
  return state.issues;
}

export function isOperationInputSchema(schema: unknown): schema is OperationInputSchema {
  return checkInputSchema(schema).length === 0;
}

/** RFC 6901 JSON Pointer for a path; "" is the whole document. */
export function toJsonPointer(path: SchemaPath): string {
  return path.map((segment) => `/${String(segment).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

export interface ArgumentIssue {
  /** JSON Pointer (RFC 6901) into the arguments; "" means the arguments object itself. */
  path: string;
  message: string;
}
export type ArgumentValidationResult =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; issues: ArgumentIssue[] };

/** The part of an operation declaration argument validation needs. */
export interface ValidatableOperation {
  readonly name: string;
  readonly input_schema: unknown;
}

const compiled = new WeakMap<object, z.ZodType>();

function validatorFor(operation: ValidatableOperation): z.ZodType {
  const schema = operation.input_schema;
  if (typeof schema !== "object" || schema === null) {
    throw new LeaseholdError("CONFIG_INVALID", `operation ${operation.name} has no input_schema`, { tier: "hub" });
  }
  const cached = compiled.get(schema);
  if (cached !== undefined) return cached;
  const issues = checkInputSchema(schema);
  if (issues.length > 0) {
    // Registry-loaded manifests never get here; this guards hand-built declarations.
    throw new LeaseholdError("CONFIG_INVALID", `operation ${operation.name} has an input_schema outside the supported subset`, {
      tier: "hub",
      details: { issues: issues.map((issue) => ({ path: toJsonPointer(issue.path), message: issue.message })) },
    });
  }
  const validator = z.fromJSONSchema(schema as z.core.JSONSchema.JSONSchema);
  compiled.set(schema, validator);
  return validator;
}

/** Arguments nest no deeper than this; legitimate ones stay far below. */
const MAX_ARGUMENT_DEPTH = 32;

function nonJsonProblem(value: unknown, path: (string | number)[], depth: number): ArgumentIssue | undefined {
  if (depth > MAX_ARGUMENT_DEPTH) return { path: toJsonPointer(path), message: `arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels` };
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (typeof value === "number") {
    return Number.isFinite(value) ? undefined : { path: toJsonPointer(path), message: "numbers must be finite" };
  }
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      const problem = nonJsonProblem(value[index], [...path, index], depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (isPlainObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      const problem = nonJsonProblem(child, [...path, key], depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  return { path: toJsonPointer(path), message: `value is not JSON (${value === undefined ? "undefined" : typeof value})` };
}

/**
 * The byte limits zod cannot see (`maxBytes`, `maxTotalBytes`), on arguments
 * that already passed the schema. They exist because later stages count
 * bytes, not characters: the kernel refuses an argv string over 131,072
 * bytes (MAX_ARG_STRLEN) and the sandbox launcher's config pipe holds at most
 * 1 MiB (LH_MAX_CONFIG / pipe-max-size) — a request past either must be
 * refused here, naming the limit, not fail on the host as UNENFORCEABLE.
 */
function byteLimitProblems(schema: InputSchemaNode, value: unknown, path: string[], issues: ArgumentIssue[]): void {
  const node = branchFor(schema, value);
  if (node === undefined) return;
  if (node.type === "object" && node.additionalProperties === false && node.artifact === true && isPlainObject(value)) {
    const given = ["base64", "sha256"].filter((name) => value[name] !== undefined);
    if (given.length !== 1) issues.push({ path: toJsonPointer(path), message: `must give exactly one of base64 and sha256 (got ${given.length === 0 ? "neither" : "both"})` });
  }
  if (node.type === "string" && typeof value === "string" && node.maxBytes !== undefined) {
    const bytes = Buffer.byteLength(value, "utf8");
    if (bytes > node.maxBytes) issues.push({ path: toJsonPointer(path), message: `is ${bytes} bytes as UTF-8; the limit is ${node.maxBytes} bytes (maxBytes)` });
    return;
  }
  if (node.type !== "object" || !isPlainObject(value)) return;
  if (node.additionalProperties === false) {
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      if (value[name] !== undefined) byteLimitProblems(child, value[name], [...path, name], issues);
    }
    return;
  }
  let total = 0;
  for (const [key, entry] of Object.entries(value)) {
    total += Buffer.byteLength(key, "utf8") + 2 + (typeof entry === "string" ? Buffer.byteLength(entry, "utf8") : 0);
    byteLimitProblems(node.additionalProperties, entry, [...path, key], issues);
  }
  if (node.maxTotalBytes !== undefined && total > node.maxTotalBytes) {
    issues.push({ path: toJsonPointer(path), message: `is ${total} bytes in all (KEY=VALUE and a NUL per entry); the limit is ${node.maxTotalBytes} bytes (maxTotalBytes)` });
  }
}

/**
 * Validates `args` against the operation's input schema. Unknown fields are
 * refused (every object in the subset is closed). Never throws for bad input;
 * the issues name JSON Pointers and never echo argument values.
 */
export function validateArguments(operation: ValidatableOperation, args: unknown): ArgumentValidationResult {
  const validator = validatorFor(operation);
  const notJson = nonJsonProblem(args, [], 0);
  if (notJson !== undefined) return { ok: false, issues: [notJson] };
  const result = validator.safeParse(args);
  if (result.success) {
    const byteIssues: ArgumentIssue[] = [];
    byteLimitProblems(operation.input_schema as InputSchemaNode, result.data, [], byteIssues);
    if (byteIssues.length > 0) return { ok: false, issues: byteIssues };
    return { ok: true, value: result.data as Record<string, unknown> };
  }
  const issues: ArgumentIssue[] = [];
  for (const issue of result.error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) issues.push({ path: toJsonPointer([...issue.path.map(String), key]), message: "unknown field" });
    } else {
      issues.push({ path: toJsonPointer(issue.path.map(String)), message: issue.message });
    }
  }
  return { ok: false, issues };
}
