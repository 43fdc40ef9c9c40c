/**
 * The dashboard's figures, read from the database as they are now: held
 * approvals waiting for a person, the latest actions, hosts and whether
 * their guests report in, and the ledger (entries, integrated size, the
 * newest signed checkpoint and the witnesses that cosigned it).
 */
import { sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import { listHostSummaries } from "../hosts/health";
import { latestCheckpoint } from "../ledger/prove";
import { listActions, type ActionListItem } from "../action-records/list";

export interface DashboardSummary {
  /** Approvals still pending before their deadline. */
  pending_approvals: number;
  recent_actions: ActionListItem[];
  /** Name, online and tier only: readers include auditors, who do not see where a guest connects from. */
  hosts: { online: number; total: number; list: Array<{ name: string; online: boolean; tier: string | null }> };
  ledger: {
    /** Every entry appended (sequenced), integrated or not. */
    entries: number;
    /** Entries still waiting for the integrator. */
    pending: number;
    checkpoint: { size: number; root: string; created_at: string; note: string; cosignatures: Array<{ witness: string; key_id: string; at: string }> } | null;
  };
}

export async function dashboardSummary(db: Database, now = Date.now()): Promise<DashboardSummary> {
  const [pending] = await executeRows<{ n: number | string }>(db, sql`select count(*)::int as n from approvals where state = 'pending' and deadline > ${new Date(now).toISOString()}::timestamptz`);
  const recent = await listActions(db, { limit: 8 });
  const hosts = await listHostSummaries(db, now);
  const [ledger] = await executeRows<{ entries: number | string; pending: number | string }>(
    db,
    sql`select count(*)::int as entries, (count(*) - count(leaf_index))::int as pending from ledger_entries`,
  );
  const checkpoint = await latestCheckpoint(db);
  const cosignatures =
    checkpoint === null
      ? []
      : await executeRows<{ witness: string; key_id: string; at: Date | string }>(
          db,
          sql`select witness_name as witness, witness_key_id as key_id, created_at as at from ledger_cosignatures where tree_size = ${BigInt(checkpoint.size)} order by id`,
        );
  return {
    pending_approvals: Number(pending?.n ?? 0),
    recent_actions: recent.items,
    hosts: { online: hosts.filter((h) => h.online).length, total: hosts.length, list: hosts.map((h) => ({ name: h.name, online: h.online, tier: h.tier })) },
    ledger: {
      entries: Number(ledger?.entries ?? 0),
      pending: Number(ledger?.pending ?? 0),
      checkpoint:
        checkpoint === null
          ? null
          : { ...checkpoint, cosignatures: cosignatures.map((c) => ({ witness: c.witness, key_id: c.key_id, at: new Date(c.at).toISOString() })) },
    },
  };
}
