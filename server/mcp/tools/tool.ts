import type { OperationInputSchema } from "../../capabilities";
import type { HubRuntime } from "../../hub/runtime";
import type { AgentToken } from "../../tokens";
import type { JsonSchema } from "./output-schemas";

/** What a tool's handler gets besides its validated arguments. */
export interface ToolContext {
  runtime: HubRuntime;
  /** The token of THIS request (re-authenticated on every request). */
  token: AgentToken;
  now: Date;
  /** Aborted when the client cancels this call (`notifications/cancelled`) and when the transport closes. */
  signal: AbortSignal;
  /**
   * Whether `signal` was aborted by the client's `notifications/cancelled`
   * for this request (client-cancels.ts), not by the transport closing.
   */
  clientCancelled(): boolean;
  /**
   * sha256 (hex) of this request's MCP session id — what actions and leases
   * record as their session (the id itself is never stored); null when the
   * request came without a session.
   */
  sessionDigest: string | null;
  /**
   * Sends `notifications/progress` for this call when the client asked for
   * progress (`_meta.progressToken`); a no-op otherwise. Never throws.
   * `meta` goes out as the notification's `_meta` (the action it is about).
   */
  progress(message: string, meta?: ProgressMeta): void;
  /**
   * Offers the person at the agent's screen a link (MCP URL-mode elicitation,
   * `elicitation/create` with `mode: "url"`) when the client declared
   * `elicitation.url`; a no-op otherwise, and for a `key` this session was
   * already offered. Never waits for the answer and never throws (see
   * server/mcp/elicit.ts for why an answer changes nothing). Returns what
   * tells the client the interaction is over
   * (`notifications/elicitation/complete`), or undefined when nothing was sent.
   */
  offerUrl(offer: { key: string; url: string; message: string }): (() => void) | undefined;
}

/**
 * What a progress notification of an action says about it in `_meta`, so a
 * client that loses this hub process mid-call can continue it on any other
 * with `approval_wait` (docs/design.md#pipeline).
 */
export interface ProgressMeta {
  "leasehold/action_id": string;
  /** While the action is held: where a person approves it. */
  "leasehold/approval_url"?: string;
}

/**
 * A tool the hub itself serves (not a capability operation). Arguments are
 * validated against `inputSchema` with the same JSON Schema subset and
 * validator capability manifests use, so unknown fields are refused.
 */
export interface HubTool {
  name: string;
  title: string;
  description: string;
  inputSchema: OperationInputSchema;
  /** Mutating tools are hidden from read-only tokens. */
  mutating: boolean;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  /**
   * True for capability operations: their arguments go to the action
   * pipeline unvalidated, because the pipeline validates them itself and
   * seals a refusal/1 for bad input (a check here would skip that entry).
   */
  pipelineValidates?: boolean;
  /** JSON Schema of what `run` returns (output-schemas.ts); tools/list shows it with the error object beside it. */
  outputSchema: JsonSchema;
  /**
   * The result's text content — what a model reads (text.ts). Without it the
   * text is the serialized structuredContent.
   */
  text?: (structured: Record<string, unknown>) => string;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<Record<string, unknown>>;
  /**
   * Pipeline tools only: start the call as an MCP task (docs/design.md#mcp-tasks) —
   * the action it named, or the error it ended with first. Tools without it
   * are listed with task support forbidden.
   */
  startTask?(args: Record<string, unknown>, ctx: ToolContext): Promise<TaskStart>;
}

/** How a task-augmented call started: an action the task follows, or the error the call ended with. */
export type TaskStart = { kind: "action"; actionId: string; replayed: boolean } | { kind: "ended"; error: unknown };

export const READ_ONLY_ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** `offset`/`limit` as every listing tool takes them (docs/design.md#mcp-tools: default 50, max 200). */
export const PAGING_PROPERTIES = {
  offset: { type: "integer", minimum: 0, maximum: 1_000_000, description: "Items to skip (default 0)." },
  limit: { type: "integer", minimum: 1, maximum: 200, description: "Items to return (default 50, max 200)." },
} as const;

export function page<T>(items: readonly T[], args: Record<string, unknown>): { items: T[]; offset: number; limit: number; total: number; has_more: boolean } {
  const offset = typeof args.offset === "number" ? args.offset : 0;
  const limit = typeof args.limit === "number" ? args.limit : 50;
  const slice = items.slice(offset, offset + limit);
  return { items: slice, offset, limit, total: items.length, has_more: offset + slice.length < items.length };
}
