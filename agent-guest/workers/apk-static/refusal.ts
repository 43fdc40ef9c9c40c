import { LeaseholdError } from "../../../server/trust/leasehold-error";

/**
 * The input is refused as a whole (not a ZIP, truncated beyond use, a bomb in
 * the structures we must read): the worker answers INVALID_ARGUMENT, exit 3.
 * Anything narrower becomes a limitation on a partial result instead.
 */
export function refuse(message: string): LeaseholdError {
  return new LeaseholdError("INVALID_ARGUMENT", message, { tier: "guest" });
}
