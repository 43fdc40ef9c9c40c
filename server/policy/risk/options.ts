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
