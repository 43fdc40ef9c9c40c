/**
 * Every router's error edge: a LeaseholdError becomes a TRPCError whose
 * HTTP-ish code matches the error's and whose cause keeps the stable code
 * (the error formatter puts it in `data.leasehold`).
 */
import { ERROR_CODES, isLeaseholdError } from "../../errors";
import { TRPCError } from "../init";

type TrpcCode = ConstructorParameters<typeof TRPCError>[0]["code"];
const BY_HTTP: Readonly<Record<number, TrpcCode>> = {
  202: "PRECONDITION_FAILED",
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  410: "PRECONDITION_FAILED",
  422: "UNPROCESSABLE_CONTENT",
  429: "TOO_MANY_REQUESTS",
  503: "SERVICE_UNAVAILABLE",
  504: "GATEWAY_TIMEOUT",
};

/** Runs `fn`, turning a LeaseholdError into a TRPCError whose cause keeps the stable code. */
export async function channel<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (isLeaseholdError(error)) throw new TRPCError({ code: BY_HTTP[ERROR_CODES[error.code].http] ?? "INTERNAL_SERVER_ERROR", message: error.message, cause: error });
    throw error;
  }
}
