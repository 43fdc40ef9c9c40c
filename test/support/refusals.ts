/**
 * What a refusal looks like from a test: the LeaseholdError a call threw or
 * rejected with. Anything else that was thrown is rethrown; success fails
 * the test.
 */
import { LeaseholdError } from "../../server/errors";

/** The LeaseholdError `fn` throws. */
export function thrownBy(fn: () => unknown): LeaseholdError {
  try {
    fn();
  } catch (error) {
    if (error instanceof LeaseholdError) return error;
    throw error;
  }
  throw new Error("expected a refusal, got success");
}

/** The LeaseholdError `promise` rejects with. */
export async function rejectionOf(promise: Promise<unknown>): Promise<LeaseholdError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LeaseholdError) return error;
    throw error;
  }
  throw new Error("expected a refusal, got success");
}

/** "OK" when `promise` resolves, else the code of the LeaseholdError it rejects with. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "OK";
  } catch (error) {
    if (error instanceof LeaseholdError) return error.code;
    throw error;
  }
}
