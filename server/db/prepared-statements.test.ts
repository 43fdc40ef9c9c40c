import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScratchPostgresDatabase, testPostgresUrl } from "../../test/support/databases";
import { openPostgres } from "./open-postgres";
import { preparedStatementBudget, preparingClient } from "./prepared-statements";
import type { Database } from "./client";

describe("prepared statement budget", () => {
  it("admits distinct texts up to its bound, keeps admitting the ones it has, and refuses new ones after", () => {
    const budget = preparedStatementBudget(2);
    expect(budget.admit("select $1")).toBe(true);
    expect(budget.admit("select $1")).toBe(true);
    expect(budget.admit("select $1, $2")).toBe(true);
    expect(budget.admit("select $1, $2, $3")).toBe(false);
    expect(budget.admit("select $1")).toBe(true);
    expect(budget.admitted).toBe(2);
  });
});

/** Prepared statements of the (single) connection whose text carries `marker`. */
async function preparedWith(db: Database, marker: string): Promise<number> {
  const rows = (await db.execute(sql`select count(*)::int as n from pg_prepared_statements where statement like ${`%${marker}%`} and statement not like '%pg_prepared_statements%'`)) as unknown as Array<{ n: number }>;
  return rows[0]!.n;
}

describe("drizzle on PostgreSQL runs parameterised statements prepared [postgres]", () => {
  if (testPostgresUrl() === undefined) {
    it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
      throw new Error("TEST_POSTGRES_URL is not set: run `npm test`, which starts a PostgreSQL server for the suite");
    });
    return;
  }
  let scratch: Awaited<ReturnType<typeof createScratchPostgresDatabase>>;
  beforeAll(async () => {
    scratch = await createScratchPostgresDatabase();
  });
  afterAll(async () => {
    await scratch.drop();
  });

  it("the hub's handle prepares a parameterised query once and answers it right on reuse, inside and outside a transaction", async () => {
    const handle = await openPostgres(scratch.url, { max: 1 });
    try {
      const db = handle.db;
      for (const n of [1, 2, 3]) {
        const rows = (await db.execute(sql`select ${n}::int + 1 as answer_marker_a`)) as unknown as Array<{ answer_marker_a: number }>;
        expect(rows[0]!.answer_marker_a).toBe(n + 1);
      }
      expect(await preparedWith(db, "answer_marker_a")).toBe(1);
      await db.transaction(async (tx) => {
        const rows = (await tx.execute(sql`select ${5}::int * 2 as answer_marker_b`)) as unknown as Array<{ answer_marker_b: number }>;
        expect(rows[0]!.answer_marker_b).toBe(10);
        expect(await preparedWith(tx as unknown as Database, "answer_marker_b")).toBe(1);
      });
    } finally {
      await handle.close();
    }
  });

  it("past the budget new texts run unprepared, and still answer", async () => {
    const client = postgres(scratch.url, { max: 1, onnotice: () => undefined });
    try {
      const db = drizzle({ client: preparingClient(client, preparedStatementBudget(2)) }) as unknown as Database;
      for (const column of ["budget_one", "budget_two", "budget_three", "budget_four"]) {
        const rows = (await db.execute(sql`select ${7}::int as ${sql.identifier(column)}`)) as unknown as Array<Record<string, number>>;
        expect(rows[0]![column]).toBe(7);
      }
      // The counting query itself is a new text past the budget: unprepared, so it does not count itself.
      expect(await preparedWith(db, "budget_")).toBe(2);
    } finally {
      await client.end({ timeout: 5 });
    }
  });

  it("?prepare=false in DATABASE_URL turns preparing off", async () => {
    const url = new URL(scratch.url);
    url.searchParams.set("prepare", "false");
    const handle = await openPostgres(url.toString(), { max: 1 });
    try {
      for (const n of [1, 2]) await handle.db.execute(sql`select ${n}::int as off_marker`);
      expect(await preparedWith(handle.db, "off_marker")).toBe(0);
    } finally {
      await handle.close();
    }
  });
});

