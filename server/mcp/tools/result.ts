import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { toErrorPayload, type ErrorCode } from "../../errors";
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

const LIFTED_DETAILS = ["action_id", "approval_id", "risk", "reasons", "deadline", "holder", "holder_id", "lease_id", "expires_at"] as const;

export function toolSuccess(structured: Record<string, unknown>, text?: (structured: Record<string, unknown>) => string): CallToolResult {
  return { content: [{ type: "text", text: text === undefined ? JSON.stringify(structured) : text(structured) }], structuredContent: structured };
}

export function toolError(error: unknown): CallToolResult {
  const payload = toErrorPayload(error);
  const structured: Record<string, unknown> = {
    code: payload.code,
    message: payload.message,
    retryable: payload.retryable,
    hint: payload.hint ?? DEFAULT_HINTS[payload.code] ?? "",
  };
  if (payload.tier !== undefined) structured.tier = payload.tier;
  if (payload.details !== undefined) {
    structured.details = payload.details;
    // What an agent acts on next is also at the top: the held action's id, risk and deadline; a lease's holder.
    for (const key of LIFTED_DETAILS) if (payload.details[key] !== undefined) structured[key] = payload.details[key];
  }
  return { isError: true, content: [{ type: "text", text: errorText(structured) }], structuredContent: structured };
}
