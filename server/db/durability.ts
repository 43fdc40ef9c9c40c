import { sql } from "drizzle-orm";
import { LeaseholdError } from "../errors";
import { executeRows, type Database } from "./client";

export const DURABILITY_SETTINGS = ["fsync", "full_page_writes", "synchronous_commit"] as const;
export type DurabilitySettings = Record<(typeof DURABILITY_SETTINGS)[number], string>;

export async function readDurabilitySettings(db: Database): Promise<DurabilitySettings> {
  const rows = await executeRows<{ name: string; setting: string }>(
    db,
    sql`select name, setting from pg_settings where name in ('fsync', 'full_page_writes', 'synchronous_commit')`,
  );
  const found: Partial<DurabilitySettings> = {};
  for (const row of rows) {
    if ((DURABILITY_SETTINGS as readonly string[]).includes(row.name)) found[row.name as keyof DurabilitySettings] = row.setting;
  }
  for (const name of DURABILITY_SETTINGS) {
    if (found[name] === undefined) throw new LeaseholdError("DATABASE_UNSAFE", `cannot read the PostgreSQL setting ${name}`, { tier: "database" });
  }
  return found as DurabilitySettings;
}

/**
 * The ledger promises that an acknowledged append survives a crash. A server
 * with any of these off can lose acknowledged commits, so the hub refuses it
 * rather than make a promise it cannot keep.
 */
export function checkDurability(settings: DurabilitySettings): { ok: true } | { ok: false; setting: string; message: string } {
  for (const name of DURABILITY_SETTINGS) {
    if (settings[name] === "off") {
      return {
        ok: false,
        setting: name,
        message: `PostgreSQL setting ${name} is off; the audit ledger needs durable commits — set ${name} = on and reload the server`,
      };
    }
  }
  return { ok: true };
}
