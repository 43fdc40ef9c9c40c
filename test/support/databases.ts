/**
 * Database fixtures: every database test runs on BOTH embedded PGlite and a
 * real PostgreSQL server. `npm test` starts the server and passes its URL in
 * TEST_POSTGRES_URL; without it the PostgreSQL half fails loudly (it is never
 * silently skipped).
 */
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, it } from "vitest";
import { applyMigrations, openPglite, openPostgres, type DatabaseHandle, type DatabaseKind } from "../../server/db";

export const DATABASE_KINDS: readonly DatabaseKind[] = ["pglite", "postgres"];

let pgliteTemplate: Promise<Blob> | undefined;

/** A migrated PGlite, dumped once per worker and cloned per test file (~4x faster than migrating each). */
async function migratedPgliteTemplate(): Promise<Blob> {
  pgliteTemplate ??= (async () => {
    const handle = await openPglite(undefined);
    try {
      await applyMigrations(handle);
      if (handle.driver.kind !== "pglite") throw new Error("unreachable");
      return (await handle.driver.client.dumpDataDir("none")) as Blob;
    } finally {
      await handle.close();
    }
  })();
  return pgliteTemplate;
}

export function testPostgresUrl(): string | undefined {
  const url = process.env.TEST_POSTGRES_URL;
  return url && url.length > 0 ? url : undefined;
}

/**
 * The database a real hub under test uses: for "postgres" a scratch database
 * on the test server (its URL for DATABASE_URL, and how to drop it); for
 * "pglite" none — the hub opens its embedded one in its data directory.
 */
export async function hubDatabaseFor(kind: DatabaseKind): Promise<{ url: string | undefined; drop: (() => Promise<void>) | undefined }> {
  if (kind === "pglite") return { url: undefined, drop: undefined };
  const scratch = await createScratchPostgresDatabase();
  return { url: scratch.url, drop: scratch.drop };
}

/** Creates an empty database on the test server; returns its URL and a drop function. */
export async function createScratchPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = testPostgresUrl();
  if (!adminUrl) throw new Error("TEST_POSTGRES_URL is not set: run the suite with `npm test`, which starts a PostgreSQL server");
  const name = `lh_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const again = postgres(adminUrl, { max: 1, onnotice: () => undefined });
      try {
        await again.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await again.end({ timeout: 5 });
      }
    },
  };
}

export interface TestDatabase {
  kind: DatabaseKind;
  handle: DatabaseHandle;
  /** Only for postgres: the URL of this test's own database. */
  url?: string;
  dispose(): Promise<void>;
}

/** Opens a fresh, migrated database of the given kind. */
export async function openTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === "pglite") {
    const handle = await openPglite(undefined, { loadDataDir: await migratedPgliteTemplate() });
    return { kind, handle, dispose: () => handle.close() };
  }
  const scratch = await createScratchPostgresDatabase();
  const handle = await openPostgres(scratch.url, { max: 20 });
  await applyMigrations(handle);
  return {
    kind,
    handle,
    url: scratch.url,
    async dispose() {
      await handle.close();
      await scratch.drop();
    },
  };
}

/**
 * Declares `body` once per database kind. The body receives a getter: the
 * database opens in beforeAll and closes in afterAll of each kind's block.
 */
export function describeEachDatabase(title: string, body: (db: () => TestDatabase) => void): void {
  for (const kind of DATABASE_KINDS) {
    describe(`${title} [${kind}]`, () => {
      if (kind === "postgres" && !testPostgresUrl()) {
        it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
          throw new Error("TEST_POSTGRES_URL is not set: run `npm test`, which starts a PostgreSQL server for the suite");
        });
        return;
      }
      let current: TestDatabase | undefined;
      beforeAll(async () => {
        current = await openTestDatabase(kind);
      });
      afterAll(async () => {
        await current?.dispose();
      });
      body(() => {
        if (!current) throw new Error("database not open yet (use it inside a test or hook)");
        return current;
      });
    });
  }
}
