/**
 * A small getopt-style reader shared by the catalogue. It does not need to be
 * exact for every program: its job is to tell option arguments apart from
 * operands so that `rm -rf /` and `curl -o /etc/x` find their targets. A value
 * the analyser could not resolve (null) is treated as an operand, which errs
 * towards looking at it.
 */
export type ArgValue = string | null;

export interface ParsedOptions {
  /** Short option letters seen, e.g. `-rf` gives r and f. */
  shorts: Set<string>;
  /** Long options seen, without dashes, mapped to their inline `=value` if any. */
  longs: Map<string, string | null>;
  /** Index of the value argument of each option that takes one, keyed by `-o` / `--output`. */
  values: Map<string, number | string>;
  /** Indices of operands (non-option arguments). */
  operands: number[];
  /** Index where options stopped when `stopAtOperand` is set; args.length otherwise. */
  end: number;
}

export interface OptionSpec {
  /** Options that consume a value, spelled `-o` or `--output`. */
  withArg?: readonly string[];
  /** Stop at the first operand: the rest belongs to a wrapped command. */
  stopAtOperand?: boolean;
  /** Options whose value may only be attached (`-i.bak`, `-oL`); the next arg is never consumed. */
  attachedOnly?: readonly string[];
}

export function parseOptions(args: readonly ArgValue[], spec: OptionSpec = {}): ParsedOptions {
  const withArg = new Set(spec.withArg ?? []);
  const attached = new Set(spec.attachedOnly ?? []);
  const out: ParsedOptions = { shorts: new Set(), longs: new Map(), values: new Map(), operands: [], end: args.length };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === null || a === undefined || a === "-" || !a.startsWith("-")) {
      if (spec.stopAtOperand) {
        out.end = i;
        return out;
      }
      out.operands.push(i);
      continue;
    }
    if (a === "--") {
      if (spec.stopAtOperand) {
        out.end = i + 1;
        return out;
      }
      for (let j = i + 1; j < args.length; j++) out.operands.push(j);
      return out;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const name = eq === -1 ? a.slice(2) : a.slice(2, eq);
      out.longs.set(name, eq === -1 ? null : a.slice(eq + 1));
      if (eq !== -1) out.values.set("--" + name, a.slice(eq + 1));
      else if (withArg.has("--" + name) && i + 1 < args.length) out.values.set("--" + name, ++i);
      continue;
    }
    for (let k = 1; k < a.length; k++) {
      const letter = a[k]!;
      out.shorts.add(letter);
      const key = "-" + letter;
      if (attached.has(key)) {
        if (k + 1 < a.length) out.values.set(key, a.slice(k + 1));
        break;
      }
      if (withArg.has(key)) {
        if (k + 1 < a.length) out.values.set(key, a.slice(k + 1));
        else if (i + 1 < args.length) out.values.set(key, ++i);
        break;
      }
    }
  }
  return out;
}

/** The value of an option: an index into args, an inline string, or undefined when absent. */
export function optionValue(args: readonly ArgValue[], parsed: ParsedOptions, ...keys: string[]): { index?: number; value: ArgValue } | undefined {
  for (const key of keys) {
    const v = parsed.values.get(key);
    if (v === undefined) continue;
    if (typeof v === "number") return { index: v, value: args[v] ?? null };
    return { value: v };
  }
  return undefined;
}

export function has(parsed: ParsedOptions, ...names: string[]): boolean {
  return names.some((n) => (n.startsWith("--") ? parsed.longs.has(n.slice(2)) : parsed.shorts.has(n.slice(1))));
}

/**
 * An option table in the shape the program itself declares, so that what is
 * read here is what the program would parse: bundles (`-abc`), attached values
 * (`-oFILE`, `--output=FILE`), values in the next word, and — for programs
 * built on getopt_long or git's parse-options — unambiguous prefixes of long
 * options (`--up=` is `--upload-pack=`).
 */
export interface OptionTable {
  /** Short letters that take no value. */
  flags?: string;
  /** Short letters that take a value, attached (`-oFILE`) or in the next word. */
  values?: string;
  /** Short letters whose value can only be attached (`-O[pager]`, `-L[when]`). */
  optional?: string;
  /** Long names: `name=` takes a value (inline or the next word), `name?` only an inline one. */
  longs?: readonly string[];
  /** getopt_long and parse-options accept a unique prefix of a long option. */
  abbreviate?: boolean;
  /** The first operand ends the options (a wrapped command follows). */
  stopAtOperand?: boolean;
}

export interface SeenOption {
  /** Canonical spelling: `-o` or `--output`, whatever abbreviation was typed. */
  name: string;
  index: number;
  /** The value when the option takes one: inline text, or the next word. */
  value?: ArgValue;
  /** Index of the word holding the value (the option's own word when attached). */
  valueIndex?: number;
}

export interface OptionRead {
  options: SeenOption[];
  /** Words holding an option the table does not have, or an ambiguous abbreviation. */
  unknown: number[];
  /** Words only known at run time, where an option could stand. */
  dynamic: number[];
  operands: number[];
  /** Where options stopped (`stopAtOperand`); args.length otherwise. */
  end: number;
}

/** The long option a typed name means: exact, or the only one it is a prefix of; null when unknown or ambiguous. */
export function resolveLongOption(typed: string, table: OptionTable): { name: string; takes: "none" | "value" | "inline" } | null {
  const entries = (table.longs ?? []).map((l) => ({ name: l.replace(/[=?]$/, ""), takes: l.endsWith("=") ? ("value" as const) : l.endsWith("?") ? ("inline" as const) : ("none" as const) }));
  const exact = entries.find((e) => e.name === typed);
  if (exact) return exact;
  if (!table.abbreviate || typed === "") return null;
  const matches = entries.filter((e) => e.name.startsWith(typed));
  return matches.length === 1 ? matches[0]! : null;
}

export function readOptions(args: readonly ArgValue[], table: OptionTable): OptionRead {
  const flags = new Set(table.flags ?? "");
  const values = new Set(table.values ?? "");
  const optional = new Set(table.optional ?? "");
  const out: OptionRead = { options: [], unknown: [], dynamic: [], operands: [], end: args.length };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === null || a === undefined) {
      out.dynamic.push(i);
      if (table.stopAtOperand) {
        out.end = i;
        return out;
      }
      out.operands.push(i);
      continue;
    }
    if (a === "--") {
      if (table.stopAtOperand) {
        out.end = i + 1;
        return out;
      }
      for (let j = i + 1; j < args.length; j++) out.operands.push(j);
      return out;
    }
    if (a === "-" || !a.startsWith("-")) {
      if (table.stopAtOperand) {
        out.end = i;
        return out;
      }
      out.operands.push(i);
      continue;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const typed = eq === -1 ? a.slice(2) : a.slice(2, eq);
      const long = resolveLongOption(typed, table);
      if (long === null) {
        out.unknown.push(i);
        continue;
      }
      const seen: SeenOption = { name: "--" + long.name, index: i };
      if (eq !== -1) {
        seen.value = a.slice(eq + 1);
        seen.valueIndex = i;
      } else if (long.takes === "value" && i + 1 < args.length) {
        seen.valueIndex = ++i;
        seen.value = args[i] ?? null;
      }
      out.options.push(seen);
      continue;
    }
    for (let k = 1; k < a.length; k++) {
      const letter = a[k]!;
      if (values.has(letter) || optional.has(letter)) {
        const seen: SeenOption = { name: "-" + letter, index: i };
        if (k + 1 < a.length) {
          seen.value = a.slice(k + 1);
          seen.valueIndex = i;
        } else if (values.has(letter) && i + 1 < args.length) {
          seen.valueIndex = ++i;
          seen.value = args[i] ?? null;
        }
        out.options.push(seen);
        break;
      }
      if (!flags.has(letter)) {
        // Whether an unknown letter takes a value is unknown too, so the rest of the word is not read.
        out.unknown.push(i);
        break;
      }
      out.options.push({ name: "-" + letter, index: i });
    }
  }
  return out;
}

/** The options of `read` named by any of `names` (canonical spellings). */
export function optionsNamed(read: OptionRead, ...names: string[]): SeenOption[] {
  return read.options.filter((o) => names.includes(o.name));
}
