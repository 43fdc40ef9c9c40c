import postgres, { type Sql } from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import { redactDatabaseUrl } from "../config";
import { LeaseholdError } from "../errors";
import type { Database, DatabaseHandle, SessionEvents } from "./client";
import * as schema from "./schema";
import { postgresDebugCounter } from "./query-counters";
import { preparingClient } from "./prepared-statements";
import { stageTraceEnabled } from "../../common/trace/stage";
import { checkPostgresDriverGuard } from "./driver-guard";

/**
 * Connects to a real PostgreSQL server and proves it answers before
 * returning, so an unreachable DATABASE_URL fails at start-up with one line
 * instead of on the first request.
 */
export async function openPostgres(url: string, options: { max?: number } = {}): Promise<DatabaseHandle> {
  const shown = redactDatabaseUrl(url);
  checkPostgresDriverGuard();
  const client = postgres(url, {
    max: options.max ?? 10,
    connect_timeout: 5,
    backoff: reconnectBackoff,
    idle_timeout: 60,
    onnotice: () => undefined,
    // The hub's own id in pg_stat_activity helps an operator see who is connected.
    connection: { application_name: "leasehold-hub" },
    // Bench only (LEASEHOLD_STAGE_TRACE): count statements and transactions per call.
    ...(stageTraceEnabled() ? { debug: postgresDebugCounter() } : {}),
  });
  try {
    await client`select 1`;
  } catch (error) {
    await client.end({ timeout: 1 }).catch(() => undefined);
    throw new LeaseholdError("DATABASE_UNAVAILABLE", `cannot reach DATABASE_URL ${shown}: ${describeConnectError(error)}`, {
      tier: "database",
      hint: "check that the server is running and the URL, user and password are right",
      cause: error,
    });
  }
  // Parameterised statements run prepared: one round trip instead of two (prepared-statements.ts).
  const db = drizzle({ client: preparingClient(client), schema }) as unknown as Database;
  let closed = false;
  return {
    kind: "postgres",
    db,
    driver: { kind: "postgres", client, session: (events) => dedicatedSession(url, events) },
    location: shown,
    async close() {
      if (closed) return;
      closed = true;
      await client.end({ timeout: 5 });
    },
  };
}

/**
 * Seconds a connection waits before its next connect after a failed one.
 * The driver's default grows threefold per failure up to 20 s, so a few
 * seconds of outage left the hub's connections waiting many seconds more
 * after the server was back; capped at one second here.
 */
export function reconnectBackoff(failures: number): number {
  return Math.min(0.05 * 2 ** failures, 1);
}

/** A connection of its own for session-scoped state (client.ts `DatabaseHandle.driver.session`). */
function dedicatedSession(url: string, events: SessionEvents): Sql {
  return postgres(url, {
    max: 1,
    connect_timeout: 5,
    backoff: reconnectBackoff,
    // Closed only when its owner says so: an idle or lifetime close would end the session's lock.
    idle_timeout: 0,
    max_lifetime: null,
    fetch_types: false,
    onnotice: () => undefined,
    onclose: () => events.onclose(),
    connection: { application_name: "leasehold-hub" },
    // The driver delivers a session's notifications to this option; its types do not list it.
    ...({ onnotify: (channel: string, payload: string) => events.onnotify(channel, payload) } as Record<string, unknown>),
  });
}

function describeConnectError(error: unknown): string {
  const e = error as { code?: string; message?: string; errno?: string };
  if (e.code === "ECONNREFUSED") return "connection refused";
  if (e.code === "ENOTFOUND") return "host not found";
  if (e.code === "CONNECT_TIMEOUT" || e.code === "ETIMEDOUT") return "connection timed out";
  if (e.code === "28P01" || e.code === "28000") return "authentication failed";
  if (e.code === "3D000") return "database does not exist";
  return (e.message ?? String(error)).split("\n")[0] ?? "unknown error";
}
