import type { OperationInputSchema } from "../../capabilities";
import type { AgentToken } from "../../tokens";
import { actionCancelTool, approvalStatusTool, approvalWaitTool, operationTool } from "./actions";
import { artifactUploadTool } from "./artifacts";
import { leaseAcquireTool, leaseReleaseTool, leaseStatusTool } from "./leases";
import { capabilityRegistry, HUB_TOOLS } from "./listing";
import type { HubTool } from "./tool";

/**
 * Which tools a token sees and may call. Read-only tokens see no mutating
 * tool; a `--tools` scope narrows further. A refusal is decided from the
 * name alone, before any argument is looked at (docs/design.md#mcp: a mutating call
 * from a read-only token is refused before its target or arguments are
 * resolved).
 */

type Scope = Pick<AgentToken, "readOnly" | "tools">;

/** The hub's own tools around the pipeline: approvals, cancelling an action, leases, and artifact uploads for capability input. */
export const PIPELINE_TOOLS: readonly HubTool[] = [approvalStatusTool, approvalWaitTool, actionCancelTool, leaseAcquireTool, leaseReleaseTool, leaseStatusTool, artifactUploadTool];

/** Every tool this hub serves now: hub tools, pipeline tools, then the operations of active capabilities. */
export function servedTools(): HubTool[] {
  return [...HUB_TOOLS, ...PIPELINE_TOOLS, ...capabilityRegistry().activeOperations().map(operationTool)];
}

/** Every tool name a token scope may mention: hub tools and capability operations (also of capabilities not enabled). */
export function knownToolNames(): string[] {
  const names = new Set(servedTools().map((t) => t.name));
  for (const capability of capabilityRegistry().list()) for (const op of capability.operations) names.add(op.name);
  return [...names].sort();
}

function isMutatingName(name: string): boolean | undefined {
  const own = [...HUB_TOOLS, ...PIPELINE_TOOLS].find((t) => t.name === name);
  if (own) return own.mutating;
  for (const capability of capabilityRegistry().list()) {
    const op = capability.operations.find((o) => o.name === name);
    if (op) return op.mutating;
  }
  return undefined;
}

function allowed(scope: Scope, tool: HubTool): boolean {
  return (!scope.readOnly || !tool.mutating) && (scope.tools === null || scope.tools.includes(tool.name));
}

export function visibleTools(scope: Scope): HubTool[] {
  return servedTools().filter((tool) => allowed(scope, tool));
}

/**
 * The input schema tools/list shows this token: a `--hosts` scope becomes an
 * `enum` on the `host` property, so a client offers only hosts it may use.
 * (The pipeline enforces the scope whatever the client sends.)
 */
export function listedInputSchema(tool: HubTool, token: Pick<AgentToken, "hosts">): OperationInputSchema {
  const schema = tool.inputSchema as OperationInputSchema & { properties?: Record<string, Record<string, unknown>> };
  const host = schema.properties?.host;
  if (token.hosts === null || host === undefined || host.type !== "string") return tool.inputSchema;
  return { ...schema, properties: { ...schema.properties, host: { ...host, enum: [...token.hosts] } } } as OperationInputSchema;
}

export type ToolDecision = { ok: true; tool: HubTool } | { ok: false; code: "FORBIDDEN" | "NOT_FOUND" | "CAPABILITY_UNAVAILABLE"; message: string; hint: string };

export function decideTool(scope: Scope, name: string): ToolDecision {
  const mutating = isMutatingName(name);
  if (mutating === undefined) return { ok: false, code: "NOT_FOUND", message: `unknown tool ${JSON.stringify(name.slice(0, 64))}`, hint: "tools/list shows the tools this token may call" };
  if (scope.readOnly && mutating) return { ok: false, code: "FORBIDDEN", message: `tool ${name} changes things and this token is read-only`, hint: "use a token created without --read-only" };
  if (scope.tools !== null && !scope.tools.includes(name)) return { ok: false, code: "FORBIDDEN", message: `tool ${name} is outside this token's tool scope`, hint: `this token may call: ${scope.tools.join(", ")}` };
  const tool = servedTools().find((t) => t.name === name);
  // The same code the pipeline (and so the console) gives for an opt-in capability that is not enabled.
  if (!tool) return { ok: false, code: "CAPABILITY_UNAVAILABLE", message: `tool ${name} is not served by this hub: its capability is not enabled`, hint: "tools/list shows the tools this token may call" };
  return { ok: true, tool };
}
