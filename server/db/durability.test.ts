import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config";
import { createScratchPostgresDatabase, testPostgresUrl } from "../../test/support/databases";
import { startTemporaryPostgres, type TemporaryPostgres } from "../../tools/lib/postgres.mjs";
import { checkDurability } from "./durability";
import { openHubDatabase } from "./open";

describe("checkDurability", () => {
  it("accepts all on and names the first setting that is off", () => {
    expect(checkDurability({ fsync: "on", full_page_writes: "on", synchronous_commit: "on" })).toEqual({ ok: true });
    expect(checkDurability({ fsync: "on", full_page_writes: "on", synchronous_commit: "local" })).toEqual({ ok: true });
    const r = checkDurability({ fsync: "on", full_page_writes: "off", synchronous_commit: "off" });
    expect(r).toMatchObject({ ok: false, setting: "full_page_writes" });
  });
});

function configFor(url: string, dataDir: string) {
  const r = loadConfig({ DATABASE_URL: url, LEASEHOLD_DATA_DIR: dataDir });
  if (!r.ok) throw new Error(r.message);
  return r.config;
}

async function expectRefusal(url: string, setting: string) {
  const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "lh-dur-")), "data");
  await expect(openHubDatabase(configFor(url, dataDir), { migrate: true, purpose: "test" })).rejects.toMatchObject({
    code: "DATABASE_UNSAFE",
    message: expect.stringContaining(`${setting} is off`),
  });
  // Refused before anything was written.
  expect(fs.existsSync(dataDir)).toBe(false);
}

describe("the hub refuses a real server that can lose acknowledged commits", () => {
  it("refuses synchronous_commit = off (set for its database)", async () => {
    if (!testPostgresUrl()) throw new Error("TEST_POSTGRES_URL is not set: run `npm test`");
    const scratch = await createScratchPostgresDatabase();
    try {
      const admin = postgres(scratch.url, { max: 1, onnotice: () => undefined });
      const name = new URL(scratch.url).pathname.slice(1);
      await admin.unsafe(`alter database ${name} set synchronous_commit = off`);
      await admin.end();
      await expectRefusal(scratch.url, "synchronous_commit");
    } finally {
      await scratch.drop();
    }
  });

  // Each case starts its own server with fsync off: one case turns fsync back on, so sharing a server
  // would make the other case's verdict depend on the order they run in.
  async function withFsyncOffServer(fn: (server: TemporaryPostgres) => Promise<void>): Promise<void> {
    const server = await startTemporaryPostgres({ fsync: "off" });
    try {
      await fn(server);
    } finally {
      server.stop();
    }
  }

  describe("on a server started with fsync off", () => {
    it("refuses fsync = off", () =>
      withFsyncOffServer(async (server) => {
        await expectRefusal(server.url, "fsync");
      }));

    it("refuses full_page_writes = off", () =>
      withFsyncOffServer(async (server) => {
        const admin = postgres(server.url, { max: 1, onnotice: () => undefined });
        await admin.unsafe("alter system set fsync = on");
        await admin.unsafe("alter system set full_page_writes = off");
        await admin.unsafe("select pg_reload_conf()");
        await admin.end();
        await new Promise((r) => setTimeout(r, 300));
        await expectRefusal(server.url, "full_page_writes");
      }));
  });
});
