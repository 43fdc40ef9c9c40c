import { parseDurationMs } from "../../time/duration";
import { UsageError } from "../io";

/** `--flag value` pairs and positionals; every flag takes a value. Unknown flags are refused. */
export function parseFlags(args: string[], known: readonly string[]): { flags: Map<string, string>; positionals: string[] } {
  const flags = new Map<string, string>();
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg.startsWith("--")) {
      const name = arg.slice(2);
      if (!known.includes(name)) throw new UsageError(`unknown option --${name}`);
      const value = args[i + 1];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      flags.set(name, value);
      i += 1;
    } else positionals.push(arg);
  }
  return { flags, positionals };
}

export function requireFlag(flags: Map<string, string>, name: string): string {
  const value = flags.get(name);
  if (value === undefined) throw new UsageError(`--${name} is required`);
  return value;
}

/** A duration (`30m`, `2h`, `7d`, see server/time/duration.ts) or an ISO-8601 time. */
export function parseExpiry(text: string, now = Date.now()): Date {
  const ms = parseDurationMs(text);
  if (ms !== undefined) return new Date(now + ms);
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed)) throw new UsageError(`--expires ${JSON.stringify(text)} is neither a duration (30m, 2h, 7d) nor an ISO time`);
  return new Date(parsed);
}
