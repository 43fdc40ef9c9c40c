import { ERROR_CODES, type ErrorCode } from "./error-codes";

/** Which layer refused: docs/design.md#errors requires messages to name the tier honestly. */
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
 * A process-wide brand. The hub runs several copies of this module — its own
 * bundle and each Next.js route bundle — and objects on globalThis (the
 * runtime, the capability registry) throw errors made by whichever copy
 * built them. `instanceof LeaseholdError` checks the brand, so a refusal
 * keeps its stable code whichever copy catches it (without it, a registry
 * refusal reached the console as INTERNAL).
 */
const BRAND = Symbol.for("leasehold.LeaseholdError");

/**
 * An error with a stable code. Thrown inside `server/`, turned into
 * `ErrorPayload` at the edges; anything that is not a LeaseholdError reaches
 * a client only as a generic INTERNAL error so nothing leaks.
 */
export class LeaseholdError extends Error {
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

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
    Object.defineProperty(this, BRAND, { value: true });
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
