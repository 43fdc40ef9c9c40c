import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "./client";
import { openPglite } from "./open-pglite";
import { namedStatementClient } from "./pglite-named-statements";
import { preparedStatementBudget } from "./prepared-statements";
import { countPgliteQueries, dbCounters } from "./query-counters";

/** Named statements the backend holds whose text carries `marker`. */
async function namedWith(client: PGlite, marker: string): Promise<string[]> {
  const rows = await client.query<{ name: string }>(
    "select name from pg_prepared_statements where statement like $1 and statement not like '%pg_prepared_statements%' order by name",
    [`%${marker}%`],
  );
  return rows.rows.map((r) => r.name);
}

describe("PGlite queries on named statements", () => {
  let raw: PGlite;
  let named: PGlite;
  beforeAll(async () => {
    raw = await PGlite.create();
    named = namedStatementClient(raw);
    await raw.exec(`
      create table things (id int primary key, label text, at timestamptz, doc jsonb, tags text[], bytes bytea, n bigint);
      insert into things values (1, 'one', '2026-01-02T03:04:05Z', '{"a":[1,2]}', '{x,y}', '\\x0102', 9007199254740993);
      insert into things values (2, null, null, null, null, null, null);
    `);
  });
  afterAll(async () => {
    await raw.close();
  });

  it("parses a text once and answers every later run of it from the named statement", async () => {
    for (const id of [1, 2, 1]) {
      const result = await named.query<{ id: number }>("select id from things where id = $1 /* marker_once */", [id]);
      expect(result.rows).toEqual([{ id }]);
    }
    expect(await namedWith(raw, "marker_once")).toHaveLength(1);
  });

  it("returns the same rows, fields and counts as PGlite's own query, in object and array row modes, with null parameters", async () => {
    const text = "select id, label, at, doc, tags, bytes, n from things where id = $1 or label = $2 order by id /* marker_same */";
    for (const params of [[1, null], [2, "one"], [3, "none"]]) {
      for (const options of [undefined, { rowMode: "array" as const }, { rowMode: "array" as const, parsers: { 1184: (v: string) => `at:${v}` } }]) {
        expect(await named.query(text, params, options)).toEqual(await raw.query(text, params, options));
      }
    }
    const update = "update things set label = label where id > $1 /* marker_count */";
    const expected = await raw.query(update, [0]);
    expect(expected.affectedRows).toBe(2);
    expect(await named.query(update, [0])).toEqual(expected);
  });

  it("serialises parameters by the types the server reports (json, arrays, timestamps)", async () => {
    const result = await named.query<{ doc: unknown; tags: string[]; at: Date }>("select $1::jsonb as doc, $2::text[] as tags, $3::timestamptz as at /* marker_types */", [
      { k: "v" },
      ["p", "q"],
      new Date("2026-05-06T07:08:09Z"),
    ]);
    expect(result.rows[0]).toEqual({ doc: { k: "v" }, tags: ["p", "q"], at: new Date("2026-05-06T07:08:09Z") });
  });

  it("a failing statement throws PGlite's DatabaseError with the query attached, and the next statement runs normally", async () => {
    const insert = "insert into things (id, label) values ($1, $2) /* marker_error */";
    const error = await named.query(insert, [1, "dup"]).then(
      () => undefined,
      (e: unknown) => e as { code?: string; query?: string; params?: unknown[] },
    );
    expect(error?.code).toBe("23505");
    expect(error?.query).toBe(insert);
    expect(error?.params).toEqual([1, "dup"]);
    expect((await named.query("select count(*)::int as n from things /* marker_after */")).rows).toEqual([{ n: 2 }]);
  });

  it("a text that does not parse is not kept, and fails the same way again", async () => {
    const bad = "select from where /* marker_syntax */";
    await expect(named.query(bad)).rejects.toMatchObject({ code: "42601" });
    await expect(named.query(bad)).rejects.toMatchObject({ code: "42601" });
    expect(await namedWith(raw, "marker_syntax")).toHaveLength(0);
  });

  it("inside a transaction: statements are named, a rollback undoes their writes, and a closed transaction refuses", async () => {
    let leaked: { query: (text: string) => Promise<unknown> } | undefined;
    await named.transaction(async (tx) => {
      await tx.query("insert into things (id, label) values ($1, $2) /* marker_tx */", [10, "ten"]);
      expect((await tx.query("select label from things where id = $1 /* marker_tx_read */", [10])).rows).toEqual([{ label: "ten" }]);
      await tx.rollback();
      leaked = tx;
    });
    expect(await namedWith(raw, "marker_tx")).toHaveLength(2);
    expect((await named.query("select count(*)::int as n from things where id = $1 /* marker_tx_gone */", [10])).rows).toEqual([{ n: 0 }]);
    await expect(leaked!.query("select 1")).rejects.toThrow(/closed/);
  });

  it("a query outside a transaction waits for the running transaction, as PGlite's own does", async () => {
    const order: string[] = [];
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const tx = named.transaction(async (t) => {
      inside();
      await new Promise((r) => setTimeout(r, 50));
      await t.query("update things set label = $1 where id = 2 /* marker_wait_tx */", ["set-in-tx"]);
      order.push("tx");
    });
    await entered;
    const read = named.query<{ label: string }>("select label from things where id = $1 /* marker_wait */", [2]).then((r) => {
      order.push("query");
      return r.rows[0]!.label;
    });
    await tx;
    expect(await read).toBe("set-in-tx");
    expect(order).toEqual(["tx", "query"]);
  });

  it("the bench's statement counters, installed by assignment on the proxy, count statements inside and outside transactions", async () => {
    const counted = namedStatementClient(raw);
    countPgliteQueries(counted);
    const before = { ...dbCounters() };
    await counted.query("select $1::int /* marker_counted_a */", [1]);
    await counted.transaction(async (tx) => {
      await tx.query("select $1::int /* marker_counted_b */", [2]);
      await tx.query("select $1::int /* marker_counted_c */", [3]);
    });
    // 1 statement; then BEGIN + 2 statements + COMMIT.
    expect(dbCounters().statements - before.statements).toBe(5);
    expect(dbCounters().transactions - before.transactions).toBe(2);
    expect(await namedWith(raw, "marker_counted_")).toHaveLength(3);
  });

  it("past its budget a client runs new texts through PGlite's own query, unnamed, and still answers", async () => {
    const small = namedStatementClient(raw, preparedStatementBudget(1));
    expect((await small.query("select $1::int as v /* marker_budget_a */", [1])).rows).toEqual([{ v: 1 }]);
    expect((await small.query("select $1::int as v /* marker_budget_b */", [2])).rows).toEqual([{ v: 2 }]);
    expect(await namedWith(raw, "marker_budget_a")).toHaveLength(1);
    expect(await namedWith(raw, "marker_budget_b")).toHaveLength(0);
  });
});

describe("the hub's embedded database handle", () => {
  it("runs drizzle's statements as named statements, inside and outside a transaction", async () => {
    const handle = await openPglite(undefined);
    try {
      const db: Database = handle.db;
      for (const n of [1, 2, 3]) {
        const rows = (await db.execute(sql`select ${n}::int + 1 as answer /* marker_hub */`)) as unknown as { rows: Array<{ answer: number }> };
        expect(rows.rows[0]!.answer).toBe(n + 1);
      }
      await db.transaction(async (tx) => {
        const rows = (await tx.execute(sql`select ${5}::int * 2 as answer /* marker_hub_tx */`)) as unknown as { rows: Array<{ answer: number }> };
        expect(rows.rows[0]!.answer).toBe(10);
      });
      if (handle.driver.kind !== "pglite") throw new Error("expected PGlite");
      expect(await namedWith(handle.driver.client, "marker_hub")).toHaveLength(2);
    } finally {
      await handle.close();
    }
  });
});
