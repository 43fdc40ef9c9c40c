import type { HubRuntime } from "../hub/runtime";
import { HUB_VERSION } from "../hub/version";
import { readMigrationStatus } from "../db";

export interface HubHealth {
  status: "ok" | "degraded";
  version: string;
  uptime_s: number;
  started_at: string;
  database: {
    kind: "pglite" | "postgres";
    migrations: { applied: number; known: number };
    durability: Record<string, string>;
  };
}

/**
 * The hub's health as served at /api/health and through tRPC. Every figure is
 * read at call time (migrations from the database itself), never cached from
 * start-up, so a health answer also proves the database still answers.
 */
export async function readHealth(runtime: HubRuntime, now: Date = new Date()): Promise<HubHealth> {
  const migrations = await readMigrationStatus(runtime.database.handle);
  const degraded = migrations.applied < migrations.known;
  return {
    status: degraded ? "degraded" : "ok",
    version: HUB_VERSION,
    uptime_s: Math.max(0, Math.round((now.getTime() - runtime.startedAt.getTime()) / 100) / 10),
    started_at: runtime.startedAt.toISOString(),
    database: {
      kind: runtime.database.handle.kind,
      migrations,
      durability: { ...runtime.database.durability },
    },
  };
}
