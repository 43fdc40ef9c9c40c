/**
 * Enabling an opt-in capability, by its exact id (DESIGN.md "Capabilities":
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
