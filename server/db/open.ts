import fs from "node:fs";
import path from "node:path";
import type { HubConfig } from "../config";
import { LeaseholdError } from "../errors";
import type { DatabaseHandle } from "./client";
import { createDataDir, inspectDataDir, makeDataDirPrivate, makeTreePrivate } from "./data-dir";
import { checkDurability, readDurabilitySettings, type DurabilitySettings } from "./durability";
import { acquireDataDirLock, type DataDirLock } from "./lock";
import { applyMigrations, readMigrationStatus, type MigrationStatus } from "./migrate";
import { openPglite } from "./open-pglite";
import { openPostgres } from "./open-postgres";

export interface OpenedDatabase {
  handle: DatabaseHandle;
  migrations: MigrationStatus;
  durability: DurabilitySettings;
  /** Held for the process lifetime when the data directory is in use. */
  lock: DataDirLock | undefined;
  close(): Promise<void>;
}

/**
 * Opens the hub's database in the order that keeps a refused start from
 * changing anything: check the data directory, take its lock, only then
 * create files; for a real server, prove it answers and is durable before
 * migrating. `purpose` names the process in a "locked by" message.
 */
export async function openHubDatabase(
  config: HubConfig,
  options: { migrate: boolean; purpose: string },
): Promise<OpenedDatabase> {
  const dir = inspectDataDir(config.dataDir);
  let lock: DataDirLock | undefined;
  let handle: DatabaseHandle | undefined;
  try {
    if (config.database.kind === "pglite") {
      lock = await acquireDataDirLock(dir.canonical, options.purpose);
      createDataDir(dir.canonical);
      makeDataDirPrivate(dir.canonical);
      const pgDir = path.join(dir.canonical, "pg");
      handle = await openPglite(pgDir);
      // PGlite sets the modes of the files its first start lays down (0666), past the umask: close them too.
      makeTreePrivate(pgDir);
    } else {
      handle = await openPostgres(config.database.url ?? "");
      // The data directory still holds this process's own files (control socket,
      // the local guest's workspace, and the keys unless LEASEHOLD_KEY_DIR names
      // a shared directory); lock it too. Replicas on one database each have a
      // data directory of their own and share only the key directory
      // (docs/deploy.md#identity), so the lock never stands between them.
      lock = await acquireDataDirLock(dir.canonical, options.purpose);
    }
    const durability = await readDurabilitySettings(handle.db);
    if (handle.kind === "postgres") {
      const verdict = checkDurability(durability);
      if (!verdict.ok) throw new LeaseholdError("DATABASE_UNSAFE", verdict.message, { tier: "database" });
    }
    const migrations = options.migrate ? await applyMigrations(handle) : await readMigrationStatus(handle);
    if (handle.kind === "postgres") {
      createDataDir(dir.canonical);
      makeDataDirPrivate(dir.canonical);
    }
    const opened = handle;
    const heldLock = lock;
    return {
      handle: opened,
      migrations,
      durability,
      lock: heldLock,
      async close() {
        await opened.close();
        await heldLock?.release();
      },
    };
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await lock?.release();
    // A fresh PGlite directory that failed half-way would poison the next start.
    if (config.database.kind === "pglite" && !dir.exists && error instanceof LeaseholdError && error.code !== "DATA_DIR_LOCKED") {
      fs.rmSync(dir.canonical, { recursive: true, force: true });
    }
    throw error;
  }
}
