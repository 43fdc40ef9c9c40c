import { parseArgs, type ParseArgsConfig } from "node:util";
import { LeaseholdError } from "../errors";

/**
 * Strict option parsing for subcommands: an unknown flag or a missing value
 * is a usage error naming it, never ignored.
 */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig["options"]>>(
  command: string,
  args: string[],
  options: T,
  positionals: { min: number; max: number },
) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: positionals.max > 0, strict: true });
  } catch (error) {
    throw new LeaseholdError("INVALID_ARGUMENT", `leasehold ${command}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (parsed.positionals.length < positionals.min || parsed.positionals.length > positionals.max) {
    throw new LeaseholdError("INVALID_ARGUMENT", `leasehold ${command}: expected ${positionals.min === positionals.max ? positionals.min : `${positionals.min}-${positionals.max}`} argument(s), got ${parsed.positionals.length}`);
  }
  return parsed;
}
