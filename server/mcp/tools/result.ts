import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { LeaseholdError, toErrorPayload, type ErrorCode } from "../../errors";
import { logLine } from "../../text";
import { ERROR_HINT_MAX, ERROR_MESSAGE_MAX, LIFTED_FIELD_TYPES, LIFTED_MAX } from "./output-schemas";
import { errorText } from "./text";

/**
 * Tool results. Every result carries its whole answer as structured content
 * (the tool's outputSchema describes it); an error is a result with
 * `isError: true` and `{code, message, retryable, hint}` (codes are the
 * stable strings of server/errors), so an agent can branch on it. The text
 * content is what a model reads: the tool's own rendering (text.ts), which
 * leads with what it acts on and points at structuredContent for the rest.
 */

const DEFAULT_HINTS: Partial<Record<ErrorCode, string>> = {
  INVALID_ARGUMENT: "fix the arguments as the details say; nothing was changed",
  NOT_FOUND: "check the name or index; tools/list and the listing tools show what exists",
  FORBIDDEN: "this token's scope does not allow it; ask an admin for a token that does",
  RATE_LIMITED: "slow down and retry after the delay",
  INTERNAL: "the hub logged the failure; retry later or ask the admin",
  WORKSPACE_FULL: "free space or inodes in the host's workspace (details give its size and use), or ask the host's operator to raise workspace_max_bytes; nothing was written",
};

/** Text cut to `max` characters (the error object's schema bounds it; the whole text stays in the server's log). */
function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function liftable(value: unknown, type: "string" | "array"): boolean {
  if (type === "array") return Array.isArray(value) && value.length <= LIFTED_MAX && value.every((v) => typeof v === "object" && v !== null && !Array.isArray(v));
  return typeof value === "string" && value.length <= LIFTED_MAX;
}

export function toolSuccess(structured: Record<string, unknown>, text?: (structured: Record<string, unknown>) => string): CallToolResult {
  return { content: [{ type: "text", text: text === undefined ? JSON.stringify(structured) : text(structured) }], structuredContent: structured };
}

export function toolError(error: unknown): CallToolResult {
  const payload = toErrorPayload(error);
  const structured: Record<string, unknown> = {
    code: payload.code,
    message: bounded(payload.message, ERROR_MESSAGE_MAX),
    retryable: payload.retryable,
    hint: bounded(payload.hint ?? DEFAULT_HINTS[payload.code] ?? "", ERROR_HINT_MAX),
  };
  if (payload.tier !== undefined) structured.tier = payload.tier;
  if (payload.details !== undefined) {
    structured.details = payload.details;
    // What an agent acts on next is also at the top: the held action's id, risk and deadline; a lease's holder.
    // Only a value of the type and size the error schema lists is lifted (a guest's details could hold anything); it stays in `details` either way.
    for (const [key, type] of Object.entries(LIFTED_FIELD_TYPES)) if (liftable(payload.details[key], type)) structured[key] = payload.details[key];
  }
  return { isError: true, content: [{ type: "text", text: errorText(structured) }], structuredContent: structured };
}

/**
 * Logs the cause of an INTERNAL error (or of anything not a LeaseholdError)
 * before it becomes a result whose hint says "the hub logged the failure":
 * its first line only, never the arguments. Returns the error.
 */
export function logToolFailure(toolName: string, error: unknown): unknown {
  const cause = error instanceof LeaseholdError ? (error.code === "INTERNAL" ? error.cause : undefined) : error;
  if (cause !== undefined) console.error(logLine(`leasehold: mcp tool ${toolName} failed: ${cause instanceof Error ? cause.message.split("\n")[0] : String(cause)}`));
  return error;
}
