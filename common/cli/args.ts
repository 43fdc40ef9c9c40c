import { parseArgs, type ParseArgsConfig } from "node:util";

/**
 * The one flag parser of every subcommand of both executables, `leasehold`
 * (server/cli) and `leasehold-guest` (agent-guest/cli.ts): node:util
 * `parseArgs`, strict. Every mistake on the command line is a `UsageError`
 * naming the flag or argument; each main() prints it as one line
 * `<executable> <command>: …` and exits 2.
 */

/**
 * A mistake on the command line (unknown flag, missing value or argument, bad
 * duration). main() prints it as one line and exits with the usage code (2).
 */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** How many positional arguments a command takes; `label` names a missing one. */
export interface Positionals {
  min: number;
  max: number;
  label?: string;
}

export const NO_POSITIONALS: Positionals = { min: 0, max: 0 };

/**
 * `--flag value`, `--flag=value` and boolean `--flag`. An unknown flag, a
 * missing value, a single-value flag given twice or the wrong number of
 * positionals is refused. A value that starts with `-` must use the `=` form.
 */
export function parseCommandArgs<T extends Options>(args: readonly string[], options: T, positionals: Positionals = NO_POSITIONALS) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true, tokens: true });
  } catch (error) {
    throw new UsageError(explainRefusal(args, options, error));
  }
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== "option" || options[token.name]?.multiple === true) continue;
    if (seen.has(token.name)) throw new UsageError(`${token.rawName} is given twice`);
    seen.add(token.name);
  }
  const count = parsed.positionals.length;
  if (count > positionals.max) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[positionals.max])}`);
  if (count < positionals.min) throw new UsageError(`missing ${positionals.label ?? "argument"}`);
  return { values: parsed.values, positionals: parsed.positionals };
}

/** Node's reasons are several lines long; say the same in one, naming the flag. */
function explainRefusal(args: readonly string[], options: Options, error: unknown): string {
  const { tokens } = parseArgs({ args: [...args], options, allowPositionals: true, strict: false, tokens: true });
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const option = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (option === undefined) return `unknown option ${token.rawName}`;
    if (option.type === "boolean" && token.value !== undefined) return `${token.rawName} takes no value`;
    if (option.type === "string" && token.value === undefined) return `${token.rawName} needs a value`;
    if (option.type === "string" && token.inlineValue === false && token.value?.startsWith("-")) {
      return `${token.rawName} needs a value (one starting with "-" is written ${token.rawName}=${token.value})`;
    }
  }
  return (error instanceof Error ? error.message : String(error)).replaceAll("\n", " ");
}

/** The value of a string flag the command cannot do without. */
export function requireFlag<K extends string>(values: { readonly [key in K]?: string | undefined }, name: K, detail?: string): string {
  const value = values[name];
  if (value === undefined) throw new UsageError(`--${name} is required${detail === undefined ? "" : `: ${detail}`}`);
  return value;
}

/** `a, b,,c` → `["a", "b", "c"]`: a flag that takes a comma-separated list. */
export function commaList(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/** Splits off the subcommand; a missing or unknown one is a usage error listing the choices. */
export function splitSubcommand<S extends string>(args: readonly string[], known: readonly S[]): { sub: S; rest: string[] } {
  const [sub, ...rest] = args;
  const choices = known.join(", ");
  if (sub === undefined) throw new UsageError(`missing subcommand (one of: ${choices})`);
  const match = known.find((name) => name === sub);
  if (match === undefined) throw new UsageError(`unknown subcommand ${JSON.stringify(sub)} (one of: ${choices})`);
  return { sub: match, rest };
}
