import fs from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import type { PostgresJsDatabase } from "drizzle-orm/postgres-js";
import { LeaseholdError } from "../errors";
import { projectPath } from "../../common/paths";
import { executeRows, type DatabaseHandle } from "./client";
import * as schema from "./schema";

/** Arbitrary constant: serialises migrations across hub processes on one server. */
const MIGRATION_LOCK_KEY = 7_245_010_001;

/**
 * Where the committed migrations live: drizzle/migrations in the checkout,
 * found the same way from source, from the compiled executables and from a
 * Next.js server bundle (common/paths).
 */
export function migrationsFolder(): string {
  const dir = projectPath("drizzle", "migrations");
  if (!fs.existsSync(path.join(dir, "meta", "_journal.json"))) throw new LeaseholdError("INTERNAL", `migrations not found in ${dir}`);
  return dir;
}

export function knownMigrations(folder = migrationsFolder()): string[] {
  const journal = JSON.parse(fs.readFileSync(path.join(folder, "meta", "_journal.json"), "utf8")) as {
    entries: { tag: string }[];
  };
  return journal.entries.map((e) => e.tag);
}

export interface MigrationStatus {
  applied: number;
  known: number;
}

/**
 * Applies every committed migration not yet applied. On a real server an
 * advisory lock makes concurrent hub starts take turns instead of racing.
 */
export async function applyMigrations(handle: DatabaseHandle): Promise<MigrationStatus> {
  const folder = migrationsFolder();
  if (handle.driver.kind === "pglite") {
    // On the client itself, not the hub's named-statement proxy: migration DDL is run once and must not use up its budget.
    await migratePglite(drizzlePglite({ client: handle.driver.client, schema }), { migrationsFolder: folder });
  } else {
    const reserved = await handle.driver.client.reserve();
    try {
      await reserved`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
      await migratePostgres(handle.db as unknown as PostgresJsDatabase<typeof schema>, { migrationsFolder: folder });
    } finally {
      await reserved`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.catch(() => undefined);
      reserved.release();
    }
  }
  return readMigrationStatus(handle, folder);
}

export async function readMigrationStatus(handle: DatabaseHandle, folder = migrationsFolder()): Promise<MigrationStatus> {
  const known = knownMigrations(folder).length;
  const exists = await executeRows<{ present: boolean }>(
    handle.db,
    sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`,
  );
  if (!exists[0]?.present) return { applied: 0, known };
  const rows = await executeRows<{ n: number | string }>(handle.db, sql`select count(*)::int as n from drizzle.__drizzle_migrations`);
  return { applied: Number(rows[0]?.n ?? 0), known };
}
