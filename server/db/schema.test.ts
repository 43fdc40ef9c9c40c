import { eq, sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import { executeRows } from "./client";
import { applyMigrations, knownMigrations, readMigrationStatus } from "./migrate";
import { readDurabilitySettings } from "./durability";
import { agentTokens, ledgerEntries } from "./schema";

const CORE_TABLES = [
  "admin_users",
  "admin_sessions",
  "agent_tokens",
  "mcp_sessions",
  "mcp_tasks",
  "hosts",
  "capabilities",
  "actions",
  "approvals",
  "grants",
  "leases",
  "jobs",
  "evidence",
  "ledger_entries",
  "ledger_nodes",
  "ledger_checkpoints",
  "ledger_cosignatures",
  "artifact_blobs",
  "artifact_chunks",
  "artifact_uploads",
];

describeEachDatabase("schema and migrations", (db) => {
  it("applies every committed migration", async () => {
    const status = await readMigrationStatus(db().handle);
    expect(status).toEqual({ applied: knownMigrations().length, known: knownMigrations().length });
    expect(status.applied).toBeGreaterThan(0);
  });

  it("re-applying migrations changes nothing", async () => {
    const before = await readMigrationStatus(db().handle);
    expect(await applyMigrations(db().handle)).toEqual(before);
  });

  it("has every core table of the design", async () => {
    const rows = await executeRows<{ table_name: string }>(
      db().handle.db,
      sql`select table_name from information_schema.tables where table_schema = 'public'`,
    );
    const names = new Set(rows.map((r) => r.table_name));
    for (const table of CORE_TABLES) expect(names, table).toContain(table);
  });

  it("round-trips bytes and bigints (ledger entries) exactly", async () => {
    const body = new Uint8Array([0, 1, 2, 254, 255, 10, 0]);
    const [row] = await db().handle.db.insert(ledgerEntries).values({ body }).returning();
    expect(row?.id).toBeTypeOf("bigint");
    const [back] = await db().handle.db.select().from(ledgerEntries).where(eq(ledgerEntries.id, row!.id));
    expect(Buffer.from(back!.body).equals(Buffer.from(body))).toBe(true);
    expect(back!.leafIndex).toBeNull();
  });

  it("stores token digests uniquely (the same secret cannot be registered twice)", async () => {
    const tokenHash = new Uint8Array(32).fill(7);
    await db().handle.db.insert(agentTokens).values({ name: "a", tokenHash, createdBy: "test" });
    await expect(db().handle.db.insert(agentTokens).values({ name: "b", tokenHash, createdBy: "test" })).rejects.toThrow();
  });

  it("refuses a negative grant use count at the database", async () => {
    await expect(
      db().handle.db.execute(
        sql`insert into grants (tool, host, max_risk, uses_remaining, expires_at) values ('run_command', 'h', 'low', -1, now())`,
      ),
    ).rejects.toThrow();
  });

  it("reads the durability settings", async () => {
    const s = await readDurabilitySettings(db().handle.db);
    expect(Object.keys(s).sort()).toEqual(["fsync", "full_page_writes", "synchronous_commit"]);
    if (db().kind === "postgres") expect(s).toEqual({ fsync: "on", full_page_writes: "on", synchronous_commit: "on" });
  });
});
