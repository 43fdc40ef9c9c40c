import type { Sql } from "postgres";

/**
 * Lets drizzle's queries on PostgreSQL run as named prepared statements.
 *
 * Why: drizzle's postgres-js driver sends every query it did not `.prepare()`
 * through `sql.unsafe`, which postgres-js runs unprepared. For a query with
 * parameters, postgres-js then pays two round trips (Parse + Describe to
 * learn the parameter types, then Bind + Execute) and the server parses and
 * plans the text again every time. Prepared, a statement already seen on a
 * connection is one round trip (Bind + Execute) with no parse. Measured in
 * docs/benchmarks.md ("Prepared statements").
 *
 * Bound: only the first `maxStatements` distinct SQL texts of this process
 * are prepared; later new texts run unprepared as before. postgres-js keeps
 * each prepared statement per connection for the connection's life, and so
 * does the server, so the bound caps both (generated SQL is a fixed set, but
 * a list parameter of varying length yields a new text per length).
 *
 * A statement without parameters is left alone: it is one round trip in the
 * simple protocol already. A deployment behind a pooler that cannot keep
 * prepared statements (PgBouncer in transaction mode before 1.21) turns all
 * of this off with `?prepare=false` in DATABASE_URL: postgres-js's own
 * `prepare` option, which still gates every statement.
 */
export const DEFAULT_MAX_PREPARED_STATEMENTS = 512;

export interface PreparedStatementBudget {
  /** Distinct SQL texts admitted for preparing so far. */
  readonly admitted: number;
  /** Whether `text` is (now) admitted; admits it while there is room. */
  admit(text: string): boolean;
}

export function preparedStatementBudget(maxStatements = DEFAULT_MAX_PREPARED_STATEMENTS): PreparedStatementBudget {
  const texts = new Set<string>();
  return {
    get admitted() {
      return texts.size;
    },
    admit(text) {
      if (texts.has(text)) return true;
      if (texts.size >= maxStatements) return false;
      texts.add(text);
      return true;
    },
  };
}

type UnsafeFn = (text: string, args?: unknown[], options?: Record<string, unknown>) => unknown;
type ScopeFn = (...args: unknown[]) => unknown;

/**
 * `sql` seen through a proxy whose `unsafe` prepares admitted parameterised
 * statements; the transaction and savepoint scopes it hands out are wrapped
 * the same way, since drizzle runs a transaction's queries on those.
 */
export function preparingClient<T extends Sql>(sql: T, budget: PreparedStatementBudget = preparedStatementBudget()): T {
  return wrap(sql, budget);
}

function wrap<T extends object>(target: T, budget: PreparedStatementBudget): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== "function") return value;
      if (property === "unsafe") {
        const unsafe = value as UnsafeFn;
        return (text: string, args?: unknown[], options?: Record<string, unknown>) => {
          const withArgs = Array.isArray(args) && args.length > 0;
          // drizzle passes `prepare: false` for every query it did not `.prepare()`
          // itself, so `false` here means "not asked for", not "must not".
          if (!withArgs || options?.prepare === true || !budget.admit(text)) return unsafe(text, args, options);
          return unsafe(text, args, { ...options, prepare: true });
        };
      }
      if (property === "begin" || property === "savepoint") {
        const open = value as ScopeFn;
        return (...args: unknown[]) => {
          const last = args.length - 1;
          const body = args[last];
          if (typeof body !== "function") return open(...args);
          const scoped = [...args];
          scoped[last] = (inner: object) => (body as (inner: object) => unknown)(wrap(inner, budget));
          return open(...scoped);
        };
      }
      return value;
    },
  });
}
