import { sha256 as sha256Bytes, toHex } from "./portable/crypto";

/**
 * RFC 8785 JSON Canonicalization Scheme.
 *
 * Hashes and signatures in Leasehold (action_hash, ledger entries, evidence
 * envelopes) are computed over these bytes, so two implementations that
 * disagree on one character would disagree on every hash. We therefore accept
 * only the JSON data model — plain objects, arrays, strings, finite numbers,
 * booleans and null — and refuse anything JSON.stringify would silently drop
 * or coerce (undefined, functions, symbols, bigint, NaN, Dates, Maps,
 * lone surrogates).
 */

export class JcsError extends Error {
  /** JSON-pointer-like location of the offending value, e.g. `/data/tags/2`. */
  readonly path: string;

  constructor(path: string, message: string) {
    super(`${path === "" ? "(root)" : path}: ${message}`);
    this.name = "JcsError";
    this.path = path;
  }
}

export type CanonicalResult = { ok: true; text: string; bytes: Uint8Array } | { ok: false; reason: string; path: string };

// A lone surrogate cannot be encoded as UTF-8; RFC 8785 §3.2.2.2 requires rejecting it.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const utf8 = new TextEncoder();

/** Canonical JSON text of `value`. Throws JcsError on anything outside the JSON data model. */
export function canonicalize(value: unknown): string {
  const parts: string[] = [];
  serialize(value, "", parts, new Set());
  return parts.join("");
}

/** Canonical JSON as UTF-8 bytes — the form that is hashed and signed. */
export function canonicalBytes(value: unknown): Uint8Array {
  return utf8.encode(canonicalize(value));
}

/** Tagged-result form of canonicalize for boundaries that must not throw. */
export function tryCanonicalize(value: unknown): CanonicalResult {
  try {
    const text = canonicalize(value);
    return { ok: true, text, bytes: utf8.encode(text) };
  } catch (error) {
    if (error instanceof JcsError) return { ok: false, reason: error.message, path: error.path };
    throw error;
  }
}

function serialize(value: unknown, path: string, out: string[], stack: Set<object>): void {
  switch (typeof value) {
    case "string":
      out.push(serializeString(value, path));
      return;
    case "number":
      out.push(serializeNumber(value, path));
      return;
    case "boolean":
      out.push(value ? "true" : "false");
      return;
    case "undefined":
      throw new JcsError(path, "undefined is not JSON");
    case "bigint":
      throw new JcsError(path, "bigint is not JSON (I-JSON numbers are IEEE 754 doubles)");
    case "function":
      throw new JcsError(path, "a function is not JSON");
    case "symbol":
      throw new JcsError(path, "a symbol is not JSON");
    case "object":
      break;
  }
  if (value === null) {
    out.push("null");
    return;
  }
  const object = value as object;
  if (stack.has(object)) throw new JcsError(path, "cyclic structure");
  stack.add(object);
  if (Array.isArray(object)) {
    out.push("[");
    for (let i = 0; i < object.length; i++) {
      if (!Object.hasOwn(object, i)) throw new JcsError(`${path}/${i}`, "sparse array hole is not JSON");
      if (i > 0) out.push(",");
      serialize(object[i], `${path}/${i}`, out, stack);
    }
    out.push("]");
  } else {
    const proto = Object.getPrototypeOf(object);
    // Dates, Maps, class instances and boxed primitives would be coerced or
    // emptied by JSON.stringify; a hash over a coerced value is a silent bug.
    if (proto !== Object.prototype && proto !== null) {
      throw new JcsError(path, `only plain objects are JSON (got ${describe(object)})`);
    }
    if (Object.getOwnPropertySymbols(object).length > 0) throw new JcsError(path, "symbol keys are not JSON");
    // Default sort compares UTF-16 code units, which is exactly RFC 8785 §3.2.3.
    const keys = Object.keys(object).sort();
    out.push("{");
    let first = true;
    for (const key of keys) {
      const child = (object as Record<string, unknown>)[key];
      const childPath = `${path}/${escapePointer(key)}`;
      if (!first) out.push(",");
      first = false;
      out.push(serializeString(key, childPath), ":");
      serialize(child, childPath, out, stack);
    }
    out.push("}");
  }
  stack.delete(object);
}

function serializeString(value: string, path: string): string {
  if (LONE_SURROGATE.test(value)) throw new JcsError(path, "string contains a lone surrogate (not valid Unicode)");
  // For well-formed strings JSON.stringify emits exactly the RFC 8785 §3.2.2.2
  // escapes: \" \\ \b \f \n \r \t, other C0 controls as lowercase \u00xx, and
  // everything else (including U+2028/9 and non-ASCII) literally.
  return JSON.stringify(value);
}

function serializeNumber(value: number, path: string): string {
  if (!Number.isFinite(value)) throw new JcsError(path, `${String(value)} is not a JSON number`);
  // RFC 8785 §3.2.2.3 adopts ECMAScript Number::toString; -0 serialises as 0.
  return Object.is(value, -0) ? "0" : String(value);
}

function escapePointer(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

function describe(value: object): string {
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === "string" && name !== "" ? name : "non-plain object";
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Parses `bytes` as JSON and succeeds only if they are already canonical, so a
 * stored value has exactly one byte representation (duplicate keys, spacing,
 * key order, escapes and number spellings all change the bytes and fail here).
 */
export function parseCanonical(bytes: Uint8Array): { ok: true; value: unknown } | { ok: false; reason: string } {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return { ok: false, reason: "not valid UTF-8" };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `not JSON: ${(error as Error).message}` };
  }
  const again = tryCanonicalize(value);
  if (!again.ok) return { ok: false, reason: again.reason };
  if (again.text !== text) return { ok: false, reason: "JSON is not in RFC 8785 canonical form" };
  return { ok: true, value };
}

/** SHA-256 of raw bytes or of a string's UTF-8 encoding. */
export function sha256(data: Uint8Array | string): Uint8Array {
  return sha256Bytes(typeof data === "string" ? utf8.encode(data) : data);
}

export function sha256Hex(data: Uint8Array | string): string {
  return toHex(sha256(data));
}

/** The `sha256:<hex>` digest string used in entries, action hashes and evidence. */
export function sha256Digest(data: Uint8Array | string): `sha256:${string}` {
  return `sha256:${sha256Hex(data)}`;
}

/** `sha256:<hex>` of the canonical bytes of a JSON value (e.g. action_hash). */
export function canonicalDigest(value: unknown): `sha256:${string}` {
  return sha256Digest(canonicalBytes(value));
}
