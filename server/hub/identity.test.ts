/**
 * One identity per database: the first process pins its keys, a process
 * with other keys is refused with one line naming both ids, two first
 * starts racing end with one pin, and a log key an older hub pinned in
 * ledger_log is adopted rather than replaced.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import type { HubConfig } from "../config";
import { checkHubIdentity, loadHubKeys, logKeyId, pinHubIdentity, type HubKeys } from "./identity";

function keysIn(dir: string): HubKeys {
  return loadHubKeys({ dataDir: dir, keyDir: dir, publicUrl: "http://127.0.0.1:8700" } as HubConfig);
}
const freshKeys = () => keysIn(fs.mkdtempSync(path.join(os.tmpdir(), "lh-identity-")));

describeEachDatabase("hub identity", (db) => {
  it("the first process pins its keys; the same keys pass; other keys are refused naming both key ids; a key directory shared by two processes passes", async () => {
    const d = db().handle.db;
    await d.execute(sql`delete from hub_identity`);
    const first = freshKeys();
    await pinHubIdentity(d, first);
    await pinHubIdentity(d, first);
    await pinHubIdentity(d, keysIn(first.dir));
    const other = freshKeys();
    const refused = await pinHubIdentity(d, other).then(
      () => undefined,
      (error: unknown) => error as { code: string; message: string },
    );
    expect(refused?.code).toBe("CONFIG_INVALID");
    expect(refused?.message).toContain(`job-signing key ${other.job.keyId}`);
    expect(refused?.message).toContain(`pinned job key ${first.job.keyId}`);
    expect(refused?.message).not.toContain("\n");
    expect(await checkHubIdentity(d, other)).toMatchObject({ ok: false });
    expect(await checkHubIdentity(d, first)).toEqual({ ok: true });
  });

  it("the same job key with another log key is refused too", async () => {
    const d = db().handle.db;
    await d.execute(sql`delete from hub_identity`);
    const first = freshKeys();
    await pinHubIdentity(d, first);
    const mixed: HubKeys = { ...first, log: freshKeys().log };
    await expect(pinHubIdentity(d, mixed)).rejects.toMatchObject({ code: "CONFIG_INVALID", message: expect.stringContaining("ledger log key") });
  });

  it("two first starts racing with different keys: exactly one pins, the other is refused", async () => {
    const d = db().handle.db;
    await d.execute(sql`delete from hub_identity`);
    const results = await Promise.allSettled([pinHubIdentity(d, freshKeys()), pinHubIdentity(d, freshKeys())]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
  });

  it("a log key already pinned by the ledger is adopted: a process holding another log key is refused", async () => {
    const d = db().handle.db;
    await d.execute(sql`delete from hub_identity`);
    const older = freshKeys();
    await d.execute(sql`insert into ledger_log (id, origin, verifier_key) values (1, ${older.log.origin}, ${older.log.verifier}) on conflict (id) do update set origin = excluded.origin, verifier_key = excluded.verifier_key`);
    await expect(pinHubIdentity(d, freshKeys())).rejects.toMatchObject({ message: expect.stringContaining("ledger log key") });
    await d.execute(sql`delete from hub_identity`);
    await pinHubIdentity(d, older);
    await d.execute(sql`delete from ledger_log`);
  });
});

describe("logKeyId", () => {
  it("takes the key id between the first two '+' even when the base64 key holds '+' too", () => {
    expect(logKeyId("127.0.0.1:8700/leasehold/abc+bbc71b30+ASCnodpA+Tv/55/gd9jF58deh9oVFbW/ZrrV0iXuo6ZC")).toBe("bbc71b30");
    expect(logKeyId("hub.example/leasehold+0a1b2c3d+AbCdEf")).toBe("0a1b2c3d");
    expect(logKeyId("not a key")).toBe("not a key");
  });
});
