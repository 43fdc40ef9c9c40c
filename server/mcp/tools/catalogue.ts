import type { AgentToken } from "../../tokens";
import { capabilityRegistry, HUB_TOOLS } from "./listing";
import type { HubTool } from "./tool";

/**
 * Which tools a token sees and may call. Read-only tokens see no mutating
 * tool; a `--tools` scope narrows further. A refusal is decided from the
 * name alone, before any argument is looked at (DESIGN.md: a mutating call
 * from a read-only token is refused before its target or arguments are
 * resolved).
 */

type Scope = Pick<AgentToken, "readOnly" | "tools">;

/** Every tool name a token scope may mention: hub tools and capability operations. */
export function knownToolNames(): string[] {
  const names = new Set(HUB_TOOLS.map((t) => t.name));
  for (const op of capabilityRegistry().activeOperations()) names.add(op.operation.name);
  for (const capability of capabilityRegistry().list()) for (const op of capability.operations) names.add(op.name);
  return [...names].sort();
}

function isMutatingName(name: string): boolean | undefined {
  const hub = HUB_TOOLS.find((t) => t.name === name);
  if (hub) return hub.mutating;
  for (const capability of capabilityRegistry().list()) {
    const op = capability.operations.find((o) => o.name === name);
    if (op) return op.mutating;
  }
  return undefined;
}

export function visibleTools(scope: Scope): HubTool[] {
  return HUB_TOOLS.filter((tool) => (!scope.readOnly || !tool.mutating) && (scope.tools === null || scope.tools.includes(tool.name)));
}

export type ToolDecision = { ok: true; tool: HubTool } | { ok: false; code: "FORBIDDEN" | "NOT_FOUND"; message: string; hint: string };

export function decideTool(scope: Scope, name: string): ToolDecision {
  const mutating = isMutatingName(name);
  if (mutating === undefined) return { ok: false, code: "NOT_FOUND", message: `unknown tool ${JSON.stringify(name.slice(0, 64))}`, hint: "tools/list shows the tools this token may call" };
  if (scope.readOnly && mutating) return { ok: false, code: "FORBIDDEN", message: `tool ${name} changes things and this token is read-only`, hint: "use a token created without --read-only" };
  if (scope.tools !== null && !scope.tools.includes(name)) return { ok: false, code: "FORBIDDEN", message: `tool ${name} is outside this token's tool scope`, hint: `this token may call: ${scope.tools.join(", ")}` };
  const tool = HUB_TOOLS.find((t) => t.name === name);
  if (!tool) return { ok: false, code: "NOT_FOUND", message: `tool ${name} is not served by this hub yet`, hint: "tools/list shows the tools this token may call" };
  return { ok: true, tool };
}
