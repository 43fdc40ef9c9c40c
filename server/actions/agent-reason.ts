/**
 * The agent's own reason for a mutating call (docs/design.md#agent-reason):
 * an optional one-line `reason` argument on every mutating operation, shown
 * to the person deciding and sealed with the action.
 *
 * It is not an argument of the workload: the pipeline takes it out before the
 * operation's own schema is applied and keeps it at the top of the prepared
 * action (`prepared.reason`), so `action_hash` covers it and the signed job
 * carries it, while grants, risk rules and workers never see it. decision/1
 * seals its digest (`agent_reason_digest`). An action without one hashes as
 * it always did.
 *
 * Bounded and one line: at most AGENT_REASON_MAX_CHARS code points, no
 * control characters and no line or paragraph separators (refused, field
 * named). Invisible and direction-changing characters are allowed in and
 * escaped wherever it is shown (server/text `escapeInvisible`, through
 * server/approvals/view.ts), like every other caller text.
 */
import type { OperationInputSchema } from "../capabilities";

type ReasonTaker = { mutating: boolean; input_schema: OperationInputSchema };

export const AGENT_REASON_FIELD = "reason";
export const AGENT_REASON_MAX_CHARS = 500;

/** The property mutating operations list in their tool input schema. */
export const AGENT_REASON_PROPERTY = {
  type: "string",
  minLength: 1,
  maxLength: AGENT_REASON_MAX_CHARS,
  description: `Optional: why you are making this change, in one line (at most ${AGENT_REASON_MAX_CHARS} characters, no control characters). A person deciding on a held call reads it; it is sealed with the action.`,
} as const;

// Cc: C0/C1 controls and DEL; Zl/Zp: U+2028/U+2029, which break a line as well as LF does.
const FORBIDDEN = /[\p{Cc}\p{Zl}\p{Zp}]/u;

export type AgentReasonCheck = { ok: true; reason: string | undefined } | { ok: false; message: string };

/** Checks a caller's `reason` value (undefined: none given). */
export function checkAgentReason(value: unknown): AgentReasonCheck {
  if (value === undefined) return { ok: true, reason: undefined };
  if (typeof value !== "string") return { ok: false, message: "must be a string" };
  const length = [...value].length;
  if (length === 0) return { ok: false, message: "must not be empty (leave it out instead)" };
  if (length > AGENT_REASON_MAX_CHARS) return { ok: false, message: `is ${length} characters; at most ${AGENT_REASON_MAX_CHARS}` };
  const bad = FORBIDDEN.exec(value);
  if (bad !== null) return { ok: false, message: `holds the control character U+${bad[0].codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0")} at ${[...value.slice(0, bad.index)].length}; a reason is one line of text` };
  return { ok: true, reason: value };
}

/** Whether an operation takes the agent's reason: mutating, and its manifest does not name a `reason` argument of its own. */
export function takesAgentReason(operation: ReasonTaker): boolean {
  return operation.mutating && !Object.hasOwn(operation.input_schema.properties ?? {}, AGENT_REASON_FIELD);
}

/**
 * Splits a call's arguments into the agent's reason and the operation's own
 * arguments. For an operation that takes no reason the arguments are
 * returned untouched (its schema refuses an unknown field).
 */
export function splitAgentReason(operation: ReasonTaker, args: unknown): { reason: unknown; rest: unknown } {
  if (!takesAgentReason(operation) || typeof args !== "object" || args === null || Array.isArray(args) || !Object.hasOwn(args, AGENT_REASON_FIELD)) return { reason: undefined, rest: args };
  const { [AGENT_REASON_FIELD]: reason, ...rest } = args as Record<string, unknown>;
  return { reason, rest };
}

/** An operation's schema as an MCP tool lists it: the manifest's, plus `reason` when it takes one. */
export function toolInputSchema(operation: ReasonTaker): OperationInputSchema {
  if (!takesAgentReason(operation)) return operation.input_schema;
  return { ...operation.input_schema, properties: { ...operation.input_schema.properties, [AGENT_REASON_FIELD]: { ...AGENT_REASON_PROPERTY } } };
}
