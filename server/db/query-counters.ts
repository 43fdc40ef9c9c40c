/**
 * Counts what the hub asks of its database — statements sent (round trips)
 * and transactions committed — for the fast-path bench's "per call" figures.
 * Installed only when stage tracing is on (common/trace/stage.ts); with it
 * off the drivers are untouched.
 *
 * postgres-js reports every statement it sends through its `debug` hook,
 * BEGIN and COMMIT included, with the connection's id: a statement outside
 * BEGIN … COMMIT/ROLLBACK on its connection is its own (autocommit)
 * transaction. PGlite is wrapped at its two entry points drizzle uses
 * (`query`, `transaction`).
 */
import type { PGlite } from "@electric-sql/pglite";

export interface DbCounters {
  statements: number;
  transactions: number;
}

const KEY = Symbol.for("leasehold.trace.db-counters");

/** One set per process (the Next.js route bundles each have their own module copy). */
export function dbCounters(): DbCounters {
  const g = globalThis as unknown as Record<symbol, DbCounters | undefined>;
  return (g[KEY] ??= { statements: 0, transactions: 0 });
}

/** The `debug` option for postgres-js. */
export function postgresDebugCounter(): (connection: number, query: string) => void {
  const inTransaction = new Set<number>();
  return (connection, query) => {
    const counters = dbCounters();
    counters.statements += 1;
    const head = query.trimStart().slice(0, 9).toLowerCase();
    if (head.startsWith("begin")) inTransaction.add(connection);
    else if (head.startsWith("commit") || head.startsWith("rollback")) {
      if (head.startsWith("commit")) counters.transactions += 1;
      inTransaction.delete(connection);
    } else if (!inTransaction.has(connection)) counters.transactions += 1;
  };
}

type QueryFn = (...args: unknown[]) => Promise<unknown>;

/** Wraps a PGlite client's `query` and `transaction` so they count (BEGIN and COMMIT count as statements). */
export function countPgliteQueries(client: PGlite): void {
  const target = client as unknown as { query: QueryFn; transaction: (fn: (tx: { query: QueryFn }) => Promise<unknown>) => Promise<unknown> };
  const query = target.query.bind(client);
  const transaction = target.transaction.bind(client);
  target.query = (...args) => {
    const counters = dbCounters();
    counters.statements += 1;
    counters.transactions += 1;
    return query(...args);
  };
  target.transaction = async (fn) => {
    const counters = dbCounters();
    counters.statements += 2;
    const result = await transaction((tx) => {
      const inner = tx.query.bind(tx);
      tx.query = (...args) => {
            dbCounters().statements += 1;
        return inner(...args);
      };
      return fn(tx);
    });
    counters.transactions += 1;
    return result;
  };
}
