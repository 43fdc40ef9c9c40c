/**
 * Database fixtures: every database test runs on BOTH embedded PGlite and a
 * real PostgreSQL server. `npm test` starts the server and passes its URL in
 * TEST_POSTGRES_URL; without it the PostgreSQL half fails loudly (it is never
 * silently skipped).
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, it } from "vitest";
import { applyMigrations, migrationsFolder, openPglite, openPostgres, type DatabaseHandle, type DatabaseKind } from "../../server/db";

export const DATABASE_KINDS: readonly DatabaseKind[] = ["pglite", "postgres"];

let pgliteTemplate: Promise<Blob> | undefined;

/**
 * Where the migrated PGlite dump is kept between test processes: inside the
 * checkout (never the shared temporary directory, where another local user
 * could plant one), named by the hash of the migration files.
 */
const TEMPLATE_CACHE = path.join(import.meta.dirname, "..", "..", "node_modules", ".cache", "leasehold-test");

/**
 * A migrated PGlite, dumped once per set of migrations and cloned per test
 * (loadDataDir) instead of migrating each: the first test process that needs
 * it writes the dump to TEMPLATE_CACHE, the others read it.
 */
async function migratedPgliteTemplate(): Promise<Blob> {
  pgliteTemplate ??= (async () => {
    const file = path.join(TEMPLATE_CACHE, `pglite-${migrationsHash()}.tar`);
    if (fs.existsSync(file)) return new Blob([fs.readFileSync(file)]);
    const handle = await openPglite(undefined);
    try {
      await applyMigrations(handle);
      if (handle.driver.kind !== "pglite") throw new Error("unreachable");
      const dump = (await handle.driver.client.dumpDataDir("none")) as Blob;
      // Written aside and renamed: a process reading it never sees half a dump.
      fs.mkdirSync(TEMPLATE_CACHE, { recursive: true });
      const partial = `${file}.${process.pid}.partial`;
      fs.writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
      fs.renameSync(partial, file);
      return dump;
    } finally {
      await handle.close();
    }
  })();
  return pgliteTemplate;
}

let pgliteDataDirTemplate: Promise<string> | undefined;

/**
 * The same migrated PGlite as a data directory, for hubs under test: built
 * once per set of migrations (from the dump above) into TEMPLATE_CACHE and
 * copied into a hub's data directory (seedPgliteDataDir), so the hub opens
 * an existing database instead of paying for PGlite's initdb and every
 * migration — seconds of CPU per hub. Built aside and renamed: another
 * process never copies half a directory.
 */
async function migratedPgliteDataDir(): Promise<string> {
  pgliteDataDirTemplate ??= (async () => {
    const dir = path.join(TEMPLATE_CACHE, `pglite-dir-${migrationsHash()}`);
    if (fs.existsSync(dir)) return dir;
    fs.mkdirSync(TEMPLATE_CACHE, { recursive: true });
    const partial = `${dir}.${process.pid}.partial`;
    fs.rmSync(partial, { recursive: true, force: true });
    const handle = await openPglite(partial, { loadDataDir: await migratedPgliteTemplate() });
    await handle.close();
    try {
      fs.renameSync(partial, dir);
    } catch (error) {
      // Another process renamed its own copy into place first: use that one.
      fs.rmSync(partial, { recursive: true, force: true });
      if (!fs.existsSync(dir)) throw error;
    }
    return dir;
  })();
  return pgliteDataDirTemplate;
}

/**
 * Lays a migrated PGlite database into `dataDir/pg` (creating `dataDir`,
 * 0700): a hub started on it finds every migration applied and starts as on
 * any later start of an existing data directory — its first admin, token
 * and keys are still made then, since the template holds none.
 */
export async function seedPgliteDataDir(dataDir: string): Promise<void> {
  const template = await migratedPgliteDataDir();
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.cpSync(template, path.join(dataDir, "pg"), { recursive: true });
}

/** A digest of every migration file (names and bytes) and of the PGlite version: a changed or added migration, or another PGlite, makes a new template. */
function migrationsHash(): string {
  const folder = migrationsFolder();
  const hash = createHash("sha256");
  hash.update(fs.readFileSync(path.join(import.meta.dirname, "..", "..", "node_modules", "@electric-sql", "pglite", "package.json")));
  for (const file of fs.readdirSync(folder, { recursive: true, encoding: "utf8" }).sort()) {
    const abs = path.join(folder, file);
    if (fs.statSync(abs).isFile()) hash.update(file).update("\0").update(fs.readFileSync(abs)).update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

export function testPostgresUrl(): string | undefined {
  const url = process.env.TEST_POSTGRES_URL;
  return url && url.length > 0 ? url : undefined;
}

/**
 * The database a real hub under test uses: for "postgres" a scratch database
 * on the test server, cloned from the migrated template (its URL for
 * DATABASE_URL, and how to drop it); for "pglite" none — the hub opens its
 * embedded one in its data directory (startHub lays the migrated template
 * there). test/hub/start.test.ts starts hubs on empty databases of both
 * kinds, which they migrate themselves.
 */
export async function hubDatabaseFor(kind: DatabaseKind): Promise<{ url: string | undefined; drop: (() => Promise<void>) | undefined }> {
  if (kind === "pglite") return { url: undefined, drop: undefined };
  const scratch = await createScratchPostgresDatabase({ migrated: true });
  return { url: scratch.url, drop: scratch.drop };
}

/** Serialises template builds and clones across test processes (pg_advisory_lock on the admin connection). */
const TEMPLATE_LOCK_KEY = 0x4c48_5450; // "LHTP"

/** The name of the migrated template on the test server: one per set of migrations, so a branch with other migrations gets its own. */
function templateName(): string {
  return `lh_template_${migrationsHash()}`;
}

/**
 * Creates a database on the test server; returns its URL and a drop function.
 * `migrated`: a copy of a template migrated once per set of migrations
 * (CREATE DATABASE … TEMPLATE, built by the first test process that needs
 * it), instead of running every migration again; otherwise empty.
 */
export async function createScratchPostgresDatabase(options: { migrated?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = testPostgresUrl();
  if (!adminUrl) throw new Error("TEST_POSTGRES_URL is not set: run the suite with `npm test`, which starts a PostgreSQL server");
  const name = `lh_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    if (options.migrated === true) {
      const template = templateName();
      // One connection (max: 1): the lock is held by the session that creates.
      await admin`select pg_advisory_lock(${TEMPLATE_LOCK_KEY})`;
      try {
        const exists = await admin`select 1 from pg_database where datname = ${template}`;
        if (exists.length === 0) await buildTemplate(adminUrl, template);
        // Cloning needs the template without connections: under the lock, no other test process is building it.
        await admin.unsafe(`create database ${name} template ${template}`);
      } finally {
        await admin`select pg_advisory_unlock(${TEMPLATE_LOCK_KEY})`;
      }
    } else {
      await admin.unsafe(`create database ${name}`);
    }
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

/** Builds the template under a temporary name and renames it into place: a half-built template is never cloned. */
async function buildTemplate(adminUrl: string, template: string): Promise<void> {
  const building = `${template}_building`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`drop database if exists ${building} with (force)`);
    await admin.unsafe(`create database ${building}`);
    const url = new URL(adminUrl);
    url.pathname = `/${building}`;
    // Two connections: applyMigrations holds one for its advisory lock and migrates on another.
    const handle = await openPostgres(url.toString(), { max: 2 });
    try {
      await applyMigrations(handle);
    } finally {
      await handle.close();
    }
    await admin.unsafe(`alter database ${building} rename to ${template}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

export interface TestDatabase {
  kind: DatabaseKind;
  handle: DatabaseHandle;
  /** Only for postgres: the URL of this test's own database. */
  url?: string;
  dispose(): Promise<void>;
}

/** Opens a fresh, migrated database of the given kind: a copy of a database migrated once (PGlite per test process, PostgreSQL per test server). */
export async function openTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === "pglite") {
    const handle = await openPglite(undefined, { loadDataDir: await migratedPgliteTemplate() });
    return { kind, handle, dispose: () => handle.close() };
  }
  const scratch = await createScratchPostgresDatabase({ migrated: true });
  const handle = await openPostgres(scratch.url, { max: 20 });
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
