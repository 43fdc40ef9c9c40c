/**
 * The stable error codes of docs/design.md#errors. Clients branch on these
 * strings, so a code is never renamed or reused for another meaning; new codes
 * are appended. `retryable` is the default for the code; a caller may know
 * better for one occurrence (e.g. a deadline that has already passed).
 */
export const ERROR_CODES = {
  INVALID_ARGUMENT: { retryable: false, http: 400 },
  UNAUTHENTICATED: { retryable: false, http: 401 },
  FORBIDDEN: { retryable: false, http: 403 },
  NOT_FOUND: { retryable: false, http: 404 },
  HOST_BUSY: { retryable: true, http: 409 },
  APPROVAL_PENDING: { retryable: true, http: 202 },
  APPROVAL_DENIED: { retryable: false, http: 403 },
  APPROVAL_EXPIRED: { retryable: false, http: 410 },
  POLICY_REFUSED: { retryable: false, http: 403 },
  UNENFORCEABLE: { retryable: false, http: 422 },
  HOST_UNAVAILABLE: { retryable: true, http: 503 },
  TIMEOUT: { retryable: true, http: 504 },
  IDEMPOTENCY_CONFLICT: { retryable: false, http: 409 },
  RATE_LIMITED: { retryable: true, http: 429 },
  CAPABILITY_UNAVAILABLE: { retryable: true, http: 503 },
  LEDGER_UNAVAILABLE: { retryable: true, http: 503 },
  CONFIG_INVALID: { retryable: false, http: 500 },
  DATABASE_UNAVAILABLE: { retryable: true, http: 503 },
  DATABASE_UNSAFE: { retryable: false, http: 500 },
  DATA_DIR_LOCKED: { retryable: false, http: 500 },
  INTERNAL: { retryable: false, http: 500 },
  /** A name in an egress allow-list did not resolve (in time) on the guest when the lease started; nothing ran. */
  EGRESS_NAME_UNRESOLVED: { retryable: true, http: 502 },
  /** A capability worker bundle on the guest does not hash to the digest the signed job names (changed, added or swapped file); nothing ran. */
  WORKER_DIGEST_MISMATCH: { retryable: false, http: 409 },
  /** The host's bounded workspace has no room left (bytes or inodes) for what was asked; nothing was written. Details carry the file system's size and use. */
  WORKSPACE_FULL: { retryable: false, http: 507 },
  /** This hub process is stopping (SIGTERM) and takes no new calls; nothing was done. Another replica will answer a retry. */
  HUB_STOPPING: { retryable: true, http: 503 },
  /** The action was cancelled (details: `action_id`, `by`, `reason`, the `stage` it was at); held or queued ones never ran, a running one was stopped and its signed result says what ran. */
  CANCELLED: { retryable: false, http: 409 },
  /** A cancel of an action that has already finished (details.state: completed, failed, denied, expired, cancelled, unknown); nothing was changed. */
  ACTION_FINISHED: { retryable: false, http: 409 },
} as const satisfies Record<string, { retryable: boolean; http: number }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CODES, value);
}
