import type { Node } from "web-tree-sitter";

/**
 * Quote removal and expansion for the parts of a word that are static. Bash
 * decides what runs only after these steps, so `r''m`, `\rm`, `"rm"`,
 * `$'\x72m'` and `rm${IFS}-rf` must be seen as what they become, not as what
 * they look like. Anything that depends on run time (command output, unknown
 * variables, arithmetic) makes the value `null`: the caller then treats it
 * conservatively.
 */

/** Marks a field boundary produced by unquoted word splitting (`$IFS`, unquoted `$var`). */
export const FIELD_BREAK = "\u0001";

export interface VariableLookup {
  /** `undefined`: unknown at analysis time. An array is one field per element (`"$@"`). */
  get(name: string): string | readonly string[] | undefined;
}

export interface Resolution {
  /** The value after quote removal, with FIELD_BREAK where unquoted splitting happens; null when dynamic. */
  value: string | null;
  /** Quotes, backslashes or ANSI-C escapes took part: harmless in arguments, a disguise in a command name. */
  quoted: boolean;
  /** A variable or parameter expansion contributed (resolved or not). */
  usesVariable: boolean;
  /** `$IFS` was used to manufacture word boundaries. */
  usesIfs: boolean;
  /** Unquoted glob characters remain: the word names whatever matches at run time. */
  glob: boolean;
}

const GLOB_CHARS = /[*?[]/;

function combine(parts: Resolution[]): Resolution {
  let value: string | null = "";
  const out: Resolution = { value: "", quoted: false, usesVariable: false, usesIfs: false, glob: false };
  for (const p of parts) {
    value = value === null || p.value === null ? null : value + p.value;
    out.quoted ||= p.quoted;
    out.usesVariable ||= p.usesVariable;
    out.usesIfs ||= p.usesIfs;
    out.glob ||= p.glob;
  }
  out.value = value;
  return out;
}

function literal(value: string | null, extra: Partial<Resolution> = {}): Resolution {
  return { value, quoted: false, usesVariable: false, usesIfs: false, glob: false, ...extra };
}

/** Backslash handling outside quotes: `\x` is `x`, backslash-newline vanishes. */
function unescapeBare(text: string): { value: string; escaped: boolean; glob: boolean } {
  let value = "";
  let escaped = false;
  let glob = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\\" && i + 1 < text.length) {
      escaped = true;
      const next = text[i + 1]!;
      i++;
      if (next === "\n") continue;
      value += next;
      continue;
    }
    if (GLOB_CHARS.test(ch)) glob = true;
    value += ch;
  }
  return { value, escaped, glob };
}

/** Inside double quotes only `\$ \` \" \\` and backslash-newline are escapes. */
function unescapeDouble(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const next = text[i + 1];
    if (ch === "\\" && next !== undefined && "$`\"\\\n".includes(next)) {
      if (next !== "\n") out += next;
      i++;
      continue;
    }
    out += ch;
  }
  return out;
}

/** `$'...'` escapes, enough to see through `$'\x72\x6d'` and `$'\162\155'`. */
export function decodeAnsiC(body: string): string {
  const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", v: "\v", "\\": "\\", "'": "'", '"': '"', "?": "?" };
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== "\\" || i + 1 >= body.length) {
      out += ch;
      continue;
    }
    const n = body[i + 1]!;
    const mapped = simple[n];
    if (mapped !== undefined) {
      out += mapped;
      i++;
    } else if (n === "x") {
      const m = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 2));
      if (m) {
        out += String.fromCharCode(parseInt(m[0], 16));
        i += 1 + m[0].length;
      } else {
        out += "\\x";
        i++;
      }
    } else if (n === "u" || n === "U") {
      const m = new RegExp(`^[0-9a-fA-F]{1,${n === "u" ? 4 : 8}}`).exec(body.slice(i + 2));
      if (m) {
        out += String.fromCodePoint(parseInt(m[0], 16));
        i += 1 + m[0].length;
      } else {
        out += "\\" + n;
        i++;
      }
    } else if (/[0-7]/.test(n)) {
      const m = /^[0-7]{1,3}/.exec(body.slice(i + 1))!;
      out += String.fromCharCode(parseInt(m[0], 8));
      i += m[0].length;
    } else if (n === "c" && i + 2 < body.length) {
      out += String.fromCharCode(body.charCodeAt(i + 2) & 0x1f);
      i += 2;
    } else {
      out += "\\" + n;
      i++;
    }
  }
  return out;
}

function splitUnquoted(value: string): string {
  return value.replace(/[ \t\n]+/g, FIELD_BREAK);
}

function expandParameter(name: string, vars: VariableLookup, inQuotes: boolean): Resolution {
  if (name === "IFS") {
    return literal(inQuotes ? " " : FIELD_BREAK, { usesVariable: true, usesIfs: true });
  }
  const known = vars.get(name);
  if (known === undefined) return literal(null, { usesVariable: true });
  if (typeof known !== "string") {
    // "$@" keeps each parameter a field of its own; unquoted it splits further.
    const fields = inQuotes ? known : known.map(splitUnquoted);
    return literal(fields.join(FIELD_BREAK), { usesVariable: true });
  }
  return literal(inQuotes ? known : splitUnquoted(known), { usesVariable: true });
}

function expansionName(node: Node): string | null {
  const named = node.namedChildren.filter((c): c is Node => c !== null);
  // Only the plain forms `$x` / `${x}`: operators such as `${x:-rm}` depend on run-time state.
  if (named.length !== 1) return null;
  const only = named[0]!;
  if (only.type !== "variable_name" && only.type !== "special_variable_name") return null;
  if (node.childCount > (node.type === "simple_expansion" ? 2 : 3)) return null;
  return only.text;
}

export function resolveNode(node: Node, vars: VariableLookup, inQuotes = false): Resolution {
  switch (node.type) {
    case "word": {
      const { value, escaped, glob } = unescapeBare(node.text);
      return literal(value, { quoted: escaped, glob: glob && !inQuotes });
    }
    case "number":
    case "variable_name":
    case "heredoc_content":
      return literal(node.text);
    case "string_content":
      return literal(unescapeDouble(node.text));
    case "raw_string":
      return literal(node.text.slice(1, -1), { quoted: true });
    case "ansi_c_string":
      return literal(decodeAnsiC(node.text.slice(2, -1)), { quoted: true });
    case "string":
    case "translated_string": {
      const parts: Resolution[] = [];
      for (const child of node.children) {
        if (!child || !child.isNamed) continue;
        parts.push(resolveNode(child, vars, true));
      }
      const r = combine(parts);
      r.quoted = true;
      return r;
    }
    case "concatenation": {
      const parts: Resolution[] = [];
      for (const child of node.children) if (child) parts.push(resolveNode(child, vars, inQuotes));
      return combine(parts);
    }
    case "simple_expansion":
    case "expansion": {
      const name = expansionName(node);
      if (name === null) return literal(null, { usesVariable: true });
      return expandParameter(name, vars, inQuotes);
    }
    default:
      // command/process substitution, arithmetic, brace expressions: run-time values.
      return literal(null);
  }
}

export function splitFields(value: string): string[] {
  return value.split(FIELD_BREAK).filter((f) => f !== "");
}
