import { LeaseholdError } from "../errors";
import type { CliOutput } from "./context";

/** Exit codes shared by every subcommand. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/**
 * One line per problem, hint included, prefixed so it stands out in a log;
 * the stable code is shown so scripts can match on it.
 */
export function formatError(error: unknown): string {
  if (error instanceof LeaseholdError) {
    return `leasehold: ${error.message} [${error.code}]${error.hint ? ` — ${error.hint}` : ""}`;
  }
  return `leasehold: unexpected error: ${error instanceof Error ? error.message : String(error)}`;
}

export function printError(error: unknown, output: CliOutput = { out: console.log, err: console.error }): void {
  output.err(formatError(error));
}

/**
 * A mistake on the command line (unknown flag, missing value or argument, bad
 * duration). main() prints it as one line `leasehold <command>: …` and exits
 * `EXIT.usage`. Defined in common/cli/args.ts, which the guest's CLI shares.
 */
export { UsageError } from "../../common/cli/args";
