import { LeaseholdError } from "../errors";

/** Exit codes shared by every subcommand. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/**
 * One line per problem, prefixed so it stands out in a log; the stable code
 * is shown so scripts can match on it.
 */
export function printError(error: unknown): void {
  if (error instanceof LeaseholdError) {
    // One line per problem, hint included, so a log grep finds all of it.
    console.error(`leasehold: ${error.message} [${error.code}]${error.hint ? ` — ${error.hint}` : ""}`);
  } else {
    console.error(`leasehold: unexpected error: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export class UsageError extends Error {}
