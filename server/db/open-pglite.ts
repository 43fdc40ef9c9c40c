import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { LeaseholdError } from "../errors";
import type { Database, DatabaseHandle } from "./client";
import * as schema from "./schema";
import { countPgliteQueries } from "./query-counters";
import { namedStatementClient } from "./pglite-named-statements";
import { stageTraceEnabled } from "../../common/trace/stage";

/**
 * Opens an embedded PGlite database. `dir` undefined = in memory (tests,
 * optionally cloned from a dump of an already migrated template).
 * The caller must already hold the data directory lock: PGlite has no
 * protection of its own against a second process on the same files.
 */
export async function openPglite(dir: string | undefined, options: { loadDataDir?: Blob } = {}): Promise<DatabaseHandle> {
  let client: PGlite;
  try {
    client = await PGlite.create({
      ...(dir === undefined ? {} : { dataDir: dir }),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    });
  } catch (error) {
    throw new LeaseholdError(
      "DATABASE_UNAVAILABLE",
      `cannot open the embedded database at ${dir ?? "(memory)"}: ${error instanceof Error ? error.message : String(error)}`,
      { tier: "database", cause: error },
    );
  }
  // drizzle's statements run as named statements (pglite-named-statements.ts);
  // the client itself stays as PGlite made it for LISTEN, dumps and migrations.
  const named = namedStatementClient(client);
  // Bench only (LEASEHOLD_STAGE_TRACE): count statements and transactions per call.
  if (stageTraceEnabled()) countPgliteQueries(named);
  const db = drizzle({ client: named, schema }) as unknown as Database;
  let closed = false;
  return {
    kind: "pglite",
    db,
    driver: { kind: "pglite", client, dir },
    location: dir ?? "(in memory)",
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
}
