import type { Database } from "../../server/db";

/**
 * The same database, counting the transactions opened through it — for tests
 * that hold code to "no transaction here" (an idle poll, an empty look).
 */
export function countingTransactions(db: Database): { db: Database; count(): number; reset(): void } {
  let transactions = 0;
  const counted = new Proxy(db, {
    get(target, property) {
      if (property === "transaction") {
        return (...args: Parameters<Database["transaction"]>) => {
          transactions += 1;
          return target.transaction(...args);
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { db: counted, count: () => transactions, reset: () => void (transactions = 0) };
}
