/**
 * The hub process's one capability registry: the action pipeline resolves
 * operations in it and the MCP surface lists tools from it, so enabling an
 * opt-in capability (./enablement.ts) changes both at once. On globalThis
 * because the Next.js route bundles carry their own copies of this module.
 */
import { createCapabilityRegistry, type CapabilityRegistry } from "./registry";

const REGISTRY_KEY = Symbol.for("leasehold.hub.capabilityRegistry");

export function hubCapabilityRegistry(): CapabilityRegistry {
  const g = globalThis as unknown as Record<symbol, CapabilityRegistry | undefined>;
  g[REGISTRY_KEY] ??= createCapabilityRegistry();
  return g[REGISTRY_KEY];
}
