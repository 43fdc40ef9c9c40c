import { LeaseholdError } from "../errors";

/**
 * Whether a failure is the database being out of reach rather than a fault
 * of the request: the server restarting, refusing connections, or a
 * connection lost mid-statement. Those are answered DATABASE_UNAVAILABLE
 * (retryable, 503) so a client backs off and tries again, where any other
 * unexpected error stays INTERNAL (docs/design.md#errors).
 *
 * Recognised, anywhere in the `cause` chain:
 * - the `postgres` driver's own connection errors (CONNECTION_CLOSED,
 *   CONNECTION_DESTROYED, CONNECTION_ENDED, CONNECT_TIMEOUT);
 * - a socket error (ECONNREFUSED, ECONNRESET, …) the driver reports for a
 *   statement — only with a statement attached (drizzle's "Failed query" or
 *   the driver's `query` property), so a guest's or a web fetch's socket
 *   error is never taken for the database's;
 * - the server's own refusals while it shuts down or starts (SQLSTATE 57P01
 *   admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now) and the
 *   connection-exception class 08.
 */
const DRIVER_CODES = new Set(["CONNECTION_CLOSED", "CONNECTION_DESTROYED", "CONNECTION_ENDED", "CONNECT_TIMEOUT"]);
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
const SERVER_STATES = new Set(["57P01", "57P02", "57P03"]);

interface Node {
  code?: unknown;
  name?: unknown;
  cause?: unknown;
  query?: unknown;
}

export function isDatabaseUnavailable(error: unknown): boolean {
  let statement = false;
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth += 1) {
    const node = current as Node;
    if ("query" in node) statement = true;
    const code = typeof node.code === "string" ? node.code : undefined;
    if (code !== undefined) {
      if (DRIVER_CODES.has(code)) return true;
      if (statement && SOCKET_CODES.has(code)) return true;
      if (node.name === "PostgresError" && (SERVER_STATES.has(code) || code.startsWith("08"))) return true;
    }
    current = node.cause;
  }
  return false;
}

/** The error a client is shown for `error`: DATABASE_UNAVAILABLE when the database is out of reach, else `error` itself. */
export function asDatabaseUnavailable(error: unknown): unknown {
  if (error instanceof LeaseholdError && error.code !== "INTERNAL") return error;
  if (!isDatabaseUnavailable(error)) return error;
  return new LeaseholdError("DATABASE_UNAVAILABLE", "the database is not answering (restarting or unreachable)", {
    tier: "database",
    hint: "retry in a few seconds",
    cause: error,
  });
}
