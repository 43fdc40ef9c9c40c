import type { HubRuntime } from "../hub/runtime";
import { HUB_VERSION } from "../hub/version";
import { readMigrationStatus } from "../db";
import { ledgerCounters } from "../ledger/metrics";
import { latestCheckpoint } from "../ledger/prove";
import { listHostSummaries } from "../hosts/health";

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
  ledger: {
    origin: string;
    key: string;
    /** The newest signed checkpoint: tree size, base64 root, age. */
    head: { size: number; root: string; checkpoint_age_s: number } | null;
    integrator: { state: string; detail: string | null };
    appends: { accepted: number; failed: number; slow: number };
  };
  /** Enrolled hosts as their guests last reported; a failed witness check degrades the hub. */
  hosts: {
    enrolled: number;
    online: number;
    witness_failures: Array<{ host: string; reason: string }>;
  };
}

/**
 * The hub's health as served at /api/health and through tRPC. Every figure is
 * read at call time (migrations from the database itself), never cached from
 * start-up, so a health answer also proves the database still answers.
 */
export async function readHealth(runtime: HubRuntime, now: Date = new Date()): Promise<HubHealth> {
  const migrations = await readMigrationStatus(runtime.database.handle);
  const head = await latestCheckpoint(runtime.database.handle.db);
  const integrator = runtime.ledger.integrator.status();
  const counters = ledgerCounters();
  const hosts = await listHostSummaries(runtime.database.handle.db, now.getTime());
  const witnessFailures = hosts.flatMap((h) => (h.witness_failure === null ? [] : [{ host: h.name, reason: h.witness_failure }]));
  // "standby" is healthy: another hub process integrates. A guest whose witness check
  // failed saw this log truncated or rewritten: that is never healthy.
  const degraded = migrations.applied < migrations.known || integrator.state === "failing" || integrator.state === "key_mismatch" || witnessFailures.length > 0;
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
    ledger: {
      origin: runtime.ledger.key.origin,
      key: runtime.ledger.key.verifier,
      head: head && {
        size: head.size,
        root: head.root,
        checkpoint_age_s: Math.max(0, Math.round((now.getTime() - Date.parse(head.created_at)) / 100) / 10),
      },
      integrator: { state: integrator.state, detail: integrator.detail },
      appends: { accepted: counters.appendsAccepted, failed: counters.appendsFailed, slow: counters.appendsSlow },
    },
    hosts: { enrolled: hosts.length, online: hosts.filter((h) => h.online).length, witness_failures: witnessFailures },
  };
}
