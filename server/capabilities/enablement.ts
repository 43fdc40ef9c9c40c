/**
 * Enabling an opt-in capability, by its exact id (docs/design.md#manifest:
 * opt-in capabilities are declared but not active until an admin enables
 * them). The choice is stored in `capabilities.enabled` with the manifest it
 * was made for, sealed as admin/1 (`capability.enable` / `capability.disable`,
 * settings digest = the manifest's JCS digest), and applied to this process's
 * registry after the commit. At start-up `loadEnabledCapabilities` applies
 * the stored choices.
 *
 * Only while the manifest is the one enabled: if a later release ships a
 * changed manifest for the same id, the stored digest no longer matches and
 * the capability stays off until an admin enables it again.
 *
 * Several hub processes on one PostgreSQL see another's change at their
 * next start (documented limit; the one process that changed it applies it
 * at once).
 */
import { eq } from "drizzle-orm";
import type { Database } from "../db";
import { capabilities } from "../db/schema";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { digestOf, digestOfJson, hashActor } from "../ledger/entry";
import { normaliseEgressRules, parseEgressRule } from "../trust/egress";
import type { CapabilityRegistry } from "./registry";

export interface CapabilityChange {
  id: string;
  enabled: boolean;
  manifestDigest: string;
}

function requireOptIn(registry: CapabilityRegistry, id: string) {
  const registered = registry.get(id);
  if (registered === undefined) throw new LeaseholdError("NOT_FOUND", `no capability has the id ${JSON.stringify(id)} (ids match exactly)`, { tier: "hub", hint: "list_capabilities shows every declared id" });
  if (registered.manifest.activation !== "opt-in") {
    throw new LeaseholdError("INVALID_ARGUMENT", `capability "${id}" is ${registered.manifest.activation}: only opt-in capabilities are enabled or disabled by id`, { tier: "hub" });
  }
  return registered.manifest;
}

export async function setCapabilityEnabled(
  db: Database,
  registry: CapabilityRegistry,
  input: { id: string; enabled: boolean; adminId: string },
): Promise<CapabilityChange> {
  const manifest = requireOptIn(registry, input.id);
  const manifestDigest = digestOfJson(manifest);
  await db.transaction(async (tx) => {
    await tx
      .insert(capabilities)
      .values({ id: input.id, manifest, enabled: input.enabled, updatedAt: new Date() })
      .onConflictDoUpdate({ target: capabilities.id, set: { manifest, enabled: input.enabled, updatedAt: new Date() } });
    await appendEntry(tx as unknown as Database, {
      type: "admin/1",
      time: new Date(),
      action_id: null,
      actor: hashActor("admin", input.adminId),
      data: { operation: input.enabled ? "capability.enable" : "capability.disable", target_digest: digestOf(`capability:${input.id}`), settings_digest: manifestDigest },
    });
  });
  if (input.enabled) registry.enable(input.id);
  else registry.disable(input.id);
  return { id: input.id, enabled: input.enabled, manifestDigest };
}

/** Applies the stored choices; returns one line per stored choice that no longer applies (unknown id, changed manifest). */
export async function loadEnabledCapabilities(db: Database, registry: CapabilityRegistry): Promise<string[]> {
  const notes: string[] = [];
  for (const row of await db.select().from(capabilities).where(eq(capabilities.enabled, true))) {
    const registered = registry.get(row.id);
    if (registered === undefined || registered.manifest.activation !== "opt-in") {
      notes.push(`capability "${row.id}" was enabled but this hub no longer declares it as opt-in; left off`);
      continue;
    }
    if (digestOfJson(registered.manifest) !== digestOfJson(row.manifest)) {
      notes.push(`capability "${row.id}" was enabled for a different manifest than this hub ships; left off until an admin enables it again`);
      continue;
    }
    registry.enable(row.id);
  }
  return notes;
}

// ---------------------------------------------------------------------------
// The admin egress configuration of a `network-egress` capability.

export interface CapabilityEgressChange {
  id: string;
  /** The stored list (canonical, normalised), or null when the manifest's default list applies again. */
  egress: string[] | null;
  settingsDigest: string;
}

/** The name this configuration carries in errors and in the compiled policy's provenance. */
export const ADMIN_EGRESS_SCOPE = "admin egress configuration";

/**
 * Sets (or with `egress: null` clears) the egress allow-list of a capability
 * whose manifest declares network egress. Rules are canonical `CIDR:port` or
 * `name:port` (server/trust/egress.ts); a malformed one is refused with
 * INVALID_ARGUMENT naming it, never repaired. The list is stored normalised
 * (sorted, duplicates and covered rules removed) and sealed as admin/1
 * `capability.egress` (settings digest = JCS digest of `{egress}`) in the
 * same transaction. It replaces the manifest's list for every later action
 * (the pipeline reads it per action, so every hub process sees it at once).
 */
export async function setCapabilityEgress(
  db: Database,
  registry: CapabilityRegistry,
  input: { id: string; egress: readonly string[] | null; adminId: string },
): Promise<CapabilityEgressChange> {
  const registered = registry.get(input.id);
  if (registered === undefined) throw new LeaseholdError("NOT_FOUND", `no capability has the id ${JSON.stringify(input.id)} (ids match exactly)`, { tier: "hub", hint: "list_capabilities shows every declared id" });
  const manifest = registered.manifest;
  if (manifest.sandbox.network === "none") {
    throw new LeaseholdError("INVALID_ARGUMENT", `capability "${input.id}" has no network access (its manifest's network is "none"): there is no egress list to configure`, { tier: "hub" });
  }
  let egress: string[] | null = null;
  if (input.egress !== null) {
    const rules = input.egress.map((text) => {
      const rule = parseEgressRule(text);
      if (rule === undefined) {
        throw new LeaseholdError("INVALID_ARGUMENT", `egress rule ${JSON.stringify(text)} is not canonical: write "CIDR:port" (10.1.0.0/16:443, [2001:db8::/32]:443, host bits clear) or "name:port" (api.example.test:443, lower case)`, {
          tier: "hub",
        });
      }
      return rule;
    });
    egress = normaliseEgressRules(rules).map((rule) => rule.text);
  }
  const settingsDigest = digestOfJson({ egress });
  await db.transaction(async (tx) => {
    await tx
      .insert(capabilities)
      .values({ id: input.id, manifest, enabled: false, egress, updatedAt: new Date() })
      .onConflictDoUpdate({ target: capabilities.id, set: { egress, updatedAt: new Date() } });
    await appendEntry(tx as unknown as Database, {
      type: "admin/1",
      time: new Date(),
      action_id: null,
      actor: hashActor("admin", input.adminId),
      data: { operation: "capability.egress", target_digest: digestOf(`capability:${input.id}`), settings_digest: settingsDigest },
    });
  });
  return { id: input.id, egress, settingsDigest };
}

/** The stored egress configuration of a capability, or null when there is none (the manifest's list applies). */
export async function capabilityEgressConfiguration(db: Database, id: string): Promise<{ name: string; egress: string[] } | null> {
  const [row] = await db.select({ egress: capabilities.egress }).from(capabilities).where(eq(capabilities.id, id));
  if (row === undefined || row.egress === null || row.egress === undefined) return null;
  return { name: ADMIN_EGRESS_SCOPE, egress: row.egress };
}
