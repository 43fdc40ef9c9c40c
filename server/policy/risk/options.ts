/**
 * One getopt-style reader for the catalogue (`readOptions`): options read
 * the way the program reads them, so that `rm -rf /` and `curl -o /etc/x`
 * find their targets and `git ls-remote --up=` is `--upload-pack`. A word
 * the analyser could not resolve (null) is an operand and is listed as
 * dynamic, which errs towards looking at it.
 */
export type ArgValue = string | null;

/**
 * The option shape of a program whose full table is not modelled: only the
 * options that take a value are named, spelled `-o` or `--output`. Read
 * leniently (`looseTable`): any other letter is a flag, any other long
 * option takes no value — enough to tell options from operands.
 */
export interface OptionSpec {
  /** Options that consume a value, spelled `-o` or `--output`. */
  withArg?: readonly string[];
  /** Stop at the first operand: the rest belongs to a wrapped command. */
  stopAtOperand?: boolean;
  /** Options whose value may only be attached (`-i.bak`, `-oL`); the next arg is never consumed. */
  attachedOnly?: readonly string[];
}

export function looseTable(spec: OptionSpec = {}): OptionTable {
  const withArg = spec.withArg ?? [];
  const letters = (list: readonly string[]): string => list.filter((o) => /^-[^-]$/.test(o)).map((o) => o[1]).join("");
  return {
    values: letters(withArg),
    optional: letters(spec.attachedOnly ?? []),
    longs: withArg.filter((o) => o.startsWith("--")).map((o) => o.slice(2) + "="),
    lenient: true,
    ...(spec.stopAtOperand ? { stopAtOperand: true } : {}),
  };
}

/** The value of the last occurrence of the first of `names` that has one: its own word's index when separate, and the value. */
export function optionValue(read: OptionRead, ...names: string[]): { index?: number; value: ArgValue } | undefined {
  for (const name of names) {
    const seen = read.options.filter((o) => o.name === name && o.value !== undefined);
    const last = seen[seen.length - 1];
    if (!last) continue;
    return last.valueIndex !== undefined && last.valueIndex !== last.index ? { index: last.valueIndex, value: last.value ?? null } : { value: last.value ?? null };
  }
  return undefined;
}

export function has(read: OptionRead, ...names: string[]): boolean {
  return read.options.some((o) => names.includes(o.name));
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
  /** Letters and long options outside the table are taken as flags instead of unknown (`looseTable`). */
  lenient?: boolean;
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
      const long = resolveLongOption(typed, table) ?? (table.lenient ? { name: typed, takes: "none" as const } : null);
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
      if (!flags.has(letter) && !table.lenient) {
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
