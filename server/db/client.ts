import type { SQL } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type { PGlite } from "@electric-sql/pglite";
import type { Sql } from "postgres";
import type * as schema from "./schema";

export type Schema = typeof schema;

/** The drizzle database, whichever driver is underneath. */
export type Database = PgDatabase<PgQueryResultHKT, Schema>;

export type DatabaseKind = "pglite" | "postgres";

/** What a dedicated session (`driver.session`) reports as it happens. */
export interface SessionEvents {
  /** Its connection closed: every lock and LISTEN of that session is gone. The next statement opens a new session. */
  onclose(): void;
  /** A NOTIFY on a channel this session LISTENs to. */
  onnotify(channel: string, payload: string): void;
}

/**
 * An open database. `driver` exposes the raw client for the few things
 * drizzle does not model (LISTEN/NOTIFY, advisory locks held on one
 * session). On PostgreSQL, `session` opens a connection of its own, outside
 * the pool (one connection, no idle or lifetime close, a failed connect
 * retried within a second), for state that lives as long as one server
 * session — a session-level lock, a LISTEN — and must be known lost the
 * moment that session ends: its caller sees `onclose`, and ends it with
 * `end()`.
 */
export interface DatabaseHandle {
  readonly kind: DatabaseKind;
  readonly db: Database;
  readonly driver:
    | { kind: "pglite"; client: PGlite; dir: string | undefined }
    | { kind: "postgres"; client: Sql; session(events: SessionEvents): Sql };
  /** Human-readable location, never containing a password. */
  readonly location: string;
  close(): Promise<void>;
}

/**
 * Runs raw SQL and returns its rows. The two drivers shape `execute`
 * results differently (postgres-js: an array; PGlite: `{ rows }`).
 */
export async function executeRows<T extends Record<string, unknown>>(db: Database, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown;
  if (Array.isArray(result)) return result as T[];
  const rows = (result as { rows?: unknown }).rows;
  if (Array.isArray(rows)) return rows as T[];
  throw new Error("unexpected result shape from database driver");
}
