import { ERROR_CODES, type ErrorCode } from "./error-codes";

/** Which layer refused: DESIGN.md requires messages to name the tier honestly. */
export type EnforcementTier = "hub" | "guest" | "kernel" | "ledger" | "database" | "config";

/** The wire shape every channel (MCP, tRPC, CLI) shows for an error. */
export interface ErrorPayload {
  code: ErrorCode;
  message: string;
  retryable: boolean;
  hint?: string;
  tier?: EnforcementTier;
  details?: Record<string, unknown>;
}

export interface LeaseholdErrorInit {
  retryable?: boolean;
  hint?: string;
  tier?: EnforcementTier;
  details?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * An error with a stable code. Thrown inside `server/`, turned into
 * `ErrorPayload` at the edges; anything that is not a LeaseholdError reaches
 * a client only as a generic INTERNAL error so nothing leaks.
 */
export class LeaseholdError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly hint: string | undefined;
  readonly tier: EnforcementTier | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, init: LeaseholdErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "LeaseholdError";
    this.code = code;
    this.retryable = init.retryable ?? ERROR_CODES[code].retryable;
    this.hint = init.hint;
    this.tier = init.tier;
    this.details = init.details;
  }

  toPayload(): ErrorPayload {
    const payload: ErrorPayload = { code: this.code, message: this.message, retryable: this.retryable };
    if (this.hint !== undefined) payload.hint = this.hint;
    if (this.tier !== undefined) payload.tier = this.tier;
    if (this.details !== undefined) payload.details = this.details;
    return payload;
  }
}

export function isLeaseholdError(value: unknown): value is LeaseholdError {
  return value instanceof LeaseholdError;
}

/** Converts any thrown value into a payload that is safe to show a client. */
export function toErrorPayload(error: unknown): ErrorPayload {
  if (isLeaseholdError(error)) return error.toPayload();
  return { code: "INTERNAL", message: "internal error", retryable: false };
}
