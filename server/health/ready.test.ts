/**
 * Readiness answers 503 with the reason while the process cannot serve:
 * draining, a database that does not answer, migrations behind, keys that
 * are not the pinned ones; 200 otherwise.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import type { HubConfig } from "../config";
import { executeRows, type DatabaseHandle } from "../db";
import { loadHubKeys, pinHubIdentity, type HubKeys } from "../hub/identity";
import type { HubRuntime } from "../hub/runtime";
import { READY_DB_TIMEOUT_MS, readReadiness, serveReady } from "./ready";

const freshKeys = (): HubKeys => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-ready-"));
  return loadHubKeys({ dataDir: dir, keyDir: dir, publicUrl: "http://127.0.0.1:8700" } as HubConfig);
};

function runtimeOf(handle: DatabaseHandle, keys: HubKeys): HubRuntime {
  return { database: { handle }, keys, lifecycle: { draining: false } } as unknown as HubRuntime;
}

describeEachDatabase("readiness", (db) => {
  it("200 when the database answers, is migrated and pins this process's keys; 503 key_mismatch when the pin is another's; 503 draining once stopping", async () => {
    const handle = db().handle;
    await handle.db.execute(sql`delete from hub_identity`);
    const keys = freshKeys();
    await pinHubIdentity(handle.db, keys);
    const runtime = runtimeOf(handle, keys);
    const ok = await serveReady(runtime);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ ready: true });

    expect(await readReadiness(runtimeOf(handle, freshKeys()))).toMatchObject({ ready: false, reason: "key_mismatch" });
    await handle.db.execute(sql`delete from hub_identity`);
    expect(await readReadiness(runtime)).toMatchObject({ ready: false, reason: "key_mismatch" });
    await pinHubIdentity(handle.db, keys);

    runtime.lifecycle.draining = true;
    const draining = await serveReady(runtime);
    expect(draining.status).toBe(503);
    expect(await draining.json()).toEqual({ ready: false, reason: "draining" });
  });

  it("503 migrations_behind when the database lacks a migration this process has", async () => {
    const handle = db().handle;
    await handle.db.execute(sql`delete from hub_identity`);
    const keys = freshKeys();
    await pinHubIdentity(handle.db, keys);
    const [row] = await executeRows<{ id: number; hash: string; created_at: string }>(handle.db, sql`select id, hash, created_at::text as created_at from drizzle.__drizzle_migrations order by id desc limit 1`);
    if (row === undefined) throw new Error("no migration rows");
    await handle.db.execute(sql`delete from drizzle.__drizzle_migrations where id = ${row.id}`);
    try {
      expect(await readReadiness(runtimeOf(handle, keys))).toMatchObject({ ready: false, reason: "migrations_behind" });
    } finally {
      await handle.db.execute(sql`insert into drizzle.__drizzle_migrations (id, hash, created_at) values (${row.id}, ${row.hash}, ${row.created_at}::bigint)`);
    }
    expect(await readReadiness(runtimeOf(handle, keys))).toMatchObject({ ready: true });
  });
});

it(`503 database_unavailable when the database does not answer within ${READY_DB_TIMEOUT_MS} ms`, async () => {
  const hanging = { execute: () => new Promise(() => undefined) };
  const runtime = runtimeOf({ kind: "postgres", db: hanging } as unknown as DatabaseHandle, freshKeys());
  const began = Date.now();
  expect(await readReadiness(runtime)).toEqual({ ready: false, reason: "database_unavailable" });
  expect(Date.now() - began).toBeLessThan(READY_DB_TIMEOUT_MS + 1_000);
});
