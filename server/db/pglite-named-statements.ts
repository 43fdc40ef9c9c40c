import { parse, protocol, type PGlite, type QueryOptions, type Results, type Transaction } from "@electric-sql/pglite";
import { preparedStatementBudget, type PreparedStatementBudget } from "./prepared-statements";

/**
 * Lets drizzle's queries on the embedded database run as named statements.
 *
 * Why: PGlite's `query()` (0.5.x) answers every statement with six separate
 * exchanges with its WebAssembly backend — Parse, Describe (statement),
 * Bind, Describe (portal), Execute, Sync — and parses and plans the same
 * text again each time. PGlite runs on the hub's own thread, so all of that
 * is hub CPU on every statement of every call. Here a text is parsed once,
 * as a named statement (Parse + Describe + Sync: the parameter types and the
 * row shape are kept), and each later run is Bind + Execute + Sync in one
 * exchange. Measured in docs/benchmarks.md ("Fifth step").
 *
 * What is kept exactly as PGlite does it: the same exclusive locks (a query
 * outside a transaction waits for a running transaction, as `query()`
 * does), the same parameter serializers chosen by the parameter types the
 * server reports, the same result parsing (`parseResults`, drizzle's
 * `rowMode` and parsers), the same `DatabaseError` carrying the query, and
 * the same `syncToFs` after a statement outside a transaction.
 *
 * What is left to PGlite's own `query()`: statements past the budget (the
 * first `DEFAULT_MAX_PREPARED_STATEMENTS` distinct texts of the client are
 * named, which caps what the backend keeps), and calls that pass options
 * this path does not handle (`blob`, `paramTypes`, `onNotice`).
 *
 * Prepared statements outlive transactions, as in PostgreSQL; a text whose
 * Parse fails is not kept, so it is parsed (and fails) again next time.
 */

type QueryFn = <T>(text: string, params?: unknown[], options?: QueryOptions) => Promise<Results<T>>;

interface NamedStatement {
  name: string;
  /** Parameter type oids, in order, as the server resolved them. */
  paramTypes: number[];
  /** The statement's RowDescription, or undefined for one that returns no rows. */
  rowDescription: unknown;
}

interface Internals {
  statements: Map<string, NamedStatement>;
  budget: PreparedStatementBudget;
  /** Names are per proxy: two proxies over one client must not collide in its backend. */
  prefix: string;
  next: number;
}

let proxies = 0;

/** Options this path handles itself; any other set option sends the call to PGlite's own `query()`. */
function handled(options: QueryOptions | undefined): boolean {
  return options === undefined || (options.blob === undefined && options.paramTypes === undefined && options.onNotice === undefined);
}

/** What PGlite itself attaches to a failed statement's error. */
function withQuery(error: unknown, text: string, params: unknown[], options: QueryOptions | undefined): unknown {
  if (error instanceof Error && "code" in error) Object.assign(error, { query: text, params, queryOptions: options });
  return error;
}

async function statementFor(client: PGlite, state: Internals, text: string): Promise<NamedStatement> {
  const known = state.statements.get(text);
  if (known !== undefined) return known;
  const name = `${state.prefix}_${++state.next}`;
  const { serialize } = protocol;
  const messages = await client.execProtocolStream(Buffer.concat([serialize.parse({ name, text }), serialize.describe({ type: "S", name }), serialize.sync()]), { syncToFs: false });
  const statement = { name, paramTypes: parse.parseDescribeStatementResults(messages), rowDescription: messages.find((m) => m.name === "rowDescription") };
  state.statements.set(text, statement);
  return statement;
}

/** One statement on the named path; the caller holds PGlite's query lock. */
async function runNamed<T>(client: PGlite, state: Internals, text: string, params: unknown[], options: QueryOptions | undefined, inTransaction: boolean): Promise<Results<T>> {
  let messages;
  let statement: NamedStatement;
  try {
    statement = await statementFor(client, state, text);
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const type = statement.paramTypes[i]!;
      const serializer = options?.serializers?.[type] ?? client.serializers[type];
      return serializer ? serializer(value) : String(value);
    });
    const { serialize } = protocol;
    messages = await client.execProtocolStream(Buffer.concat([serialize.bind({ statement: statement.name, values }), serialize.execute({}), serialize.sync()]), { syncToFs: false });
  } catch (error) {
    throw withQuery(error, text, params, options);
  }
  if (!inTransaction) await client.syncToFs();
  const withShape = statement.rowDescription === undefined ? messages : [statement.rowDescription as (typeof messages)[number], ...messages];
  const [parsers, rest] = parsersFor(client, options);
  return parse.parseResults(withShape, parsers, rest)[0] as Results<T>;
}

/**
 * The parsers to read rows with: the caller's (drizzle passes a few, for
 * dates and intervals) in front of the client's. `parseResults` given both
 * copies the client's whole table — one entry per type and array type in
 * the database, a few hundred — into a new object for every statement,
 * which measured as the largest single cost left on this path. A
 * prototype chain gives the same lookups without the copy.
 */
function parsersFor(client: PGlite, options: QueryOptions | undefined): [PGlite["parsers"], QueryOptions | undefined] {
  if (options?.parsers === undefined) return [client.parsers, options];
  const parsers = Object.assign(Object.create(client.parsers) as PGlite["parsers"], options.parsers);
  return [parsers, { ...options, parsers: undefined }];
}

function namedQuery(client: PGlite, state: Internals, fallback: QueryFn, inTransaction: boolean, closed: () => boolean): QueryFn {
  return async <T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> => {
    // A closed client or transaction: its own `query()` refuses with its own error.
    if (closed() || !handled(options) || !state.budget.admit(text)) return fallback<T>(text, params, options);
    const run = () => client._runExclusiveQuery(() => runNamed<T>(client, state, text, params, options, inTransaction));
    // Outside a transaction, wait for one in progress exactly as `query()` does.
    return inTransaction ? run() : client._runExclusiveTransaction(run);
  };
}

/**
 * `client` seen through a proxy whose `query` — and the `query` of every
 * transaction it opens — runs on named statements. Everything else (LISTEN,
 * `exec`, dumps, `close`) is the client's own.
 */
export function namedStatementClient(client: PGlite, budget: PreparedStatementBudget = preparedStatementBudget()): PGlite {
  const state: Internals = { statements: new Map(), budget, prefix: `lh${++proxies}`, next: 0 };
  const transaction = <T>(fn: (tx: Transaction) => Promise<T>): Promise<T> =>
    client.transaction((tx) =>
      fn(overlay(tx, { query: namedQuery(client, state, tx.query.bind(tx) as QueryFn, true, () => tx.closed) })),
    );
  return overlay(client, { query: namedQuery(client, state, client.query.bind(client) as QueryFn, false, () => client.closed), transaction });
}

/**
 * `target` with some members replaced. Properties later set on the result
 * stay on it and take precedence (the bench's statement counters wrap
 * `query` and `transaction` by assignment); everything else is the target's
 * own, methods bound to it.
 */
function overlay<T extends object>(target: T, replaced: Record<string, unknown>): T {
  const assigned = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(t, key) {
      if (assigned.has(key)) return assigned.get(key);
      if (typeof key === "string" && Object.hasOwn(replaced, key)) return replaced[key];
      const value = Reflect.get(t, key, t) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(t) : value;
    },
    set(_t, key, value) {
      assigned.set(key, value);
      return true;
    },
  });
}
