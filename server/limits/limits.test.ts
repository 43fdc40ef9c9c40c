/**
 * Limits kept in the database hold across processes: each test takes from
 * several connections at once (on PostgreSQL, one pool stands for several
 * hub processes; the statements are the same) and counts what got through.
 */
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import { executeRows } from "../db";
import { acquireInFlight, countInFlight, IN_FLIGHT_LEASE_MS, renewHolder, renewInFlight } from "./in-flight";
import { takeToken } from "./buckets";
import { windowFail, windowWaitSeconds } from "./windows";

describeEachDatabase("limits in the database", (db) => {
  it("a token bucket lets exactly its burst through 60 concurrent takes, says when to retry, and keys apart", async () => {
    const d = db().handle.db;
    const key = `t-${randomUUID()}`;
    const decisions = await Promise.all(Array.from({ length: 60 }, () => takeToken(d, key, { ratePerMinute: 60, burst: 10 })));
    const through = decisions.filter((x) => x.ok).length;
    // 60/min refills one a second: a slow run may earn one or two more.
    expect(through).toBeGreaterThanOrEqual(10);
    expect(through).toBeLessThanOrEqual(12);
    expect(decisions.find((x) => !x.ok)).toEqual({ ok: false, retryAfterS: 1 });
    expect((await takeToken(d, `other-${key}`, { ratePerMinute: 60, burst: 10 })).ok).toBe(true);
  });

  it("a bucket refills by the database's clock", async () => {
    const d = db().handle.db;
    const key = `refill-${randomUUID()}`;
    for (let i = 0; i < 3; i++) expect((await takeToken(d, key, { ratePerMinute: 60, burst: 3 })).ok).toBe(true);
    expect((await takeToken(d, key, { ratePerMinute: 60, burst: 3 })).ok).toBe(false);
    await d.execute(sql`update limit_buckets set refilled_at = refilled_at - interval '1.5 seconds' where key = ${key}`);
    expect((await takeToken(d, key, { ratePerMinute: 60, burst: 3 })).ok).toBe(true);
  });

  it("in-flight places: 20 concurrent acquires of 4 places give exactly 4; releases are idempotent", async () => {
    const d = db().handle.db;
    const key = `f-${randomUUID()}`;
    const got = await Promise.all(Array.from({ length: 20 }, () => acquireInFlight(d, key, 4)));
    const held = got.filter((r) => r !== null);
    expect(held.length).toBe(4);
    expect(await countInFlight(d, key)).toBe(4);
    await held[0]!();
    await held[0]!();
    expect(await countInFlight(d, key)).toBe(3);
    expect(await acquireInFlight(d, key, 4)).not.toBeNull();
    expect(await acquireInFlight(d, key, 4)).toBeNull();
  });

  it("places of a process that stopped renewing (it died) are given back by the sweep; live ones keep counting; a late release gives back nothing more", async () => {
    const d = db().handle.db;
    const key = `dead-${randomUUID()}`;
    await renewHolder(d);
    const mine = await acquireInFlight(d, key, 3);
    expect(mine).not.toBeNull();
    // Two places held by a process that registered and then died.
    await d.execute(sql`insert into limit_holders (holder, renewed_at) values ('a-dead-process', clock_timestamp() - make_interval(secs => ${IN_FLIGHT_LEASE_MS / 1000 + 1}))`);
    await d.execute(sql`update limit_in_flight set total = total + 2, holders = holders || '{"a-dead-process": 2}'::jsonb where key = ${key}`);
    expect(await countInFlight(d, key)).toBe(3);
    expect(await acquireInFlight(d, key, 3)).toBeNull();
    await renewInFlight(d);
    expect(await countInFlight(d, key)).toBe(1);
    const [row] = await executeRows<{ holders: Record<string, number> }>(d, sql`select holders from limit_in_flight where key = ${key}`);
    expect(Object.keys(row!.holders)).not.toContain("a-dead-process");
    await mine!();
    await mine!();
    expect(await countInFlight(d, key)).toBe(0);
    // This process's share is 0 now: a release that comes late (after a sweep) cannot go below it.
    const again = await acquireInFlight(d, key, 3);
    await d.execute(sql`update limit_in_flight set total = 0, holders = '{}'::jsonb where key = ${key}`);
    await again!();
    expect(await countInFlight(d, key)).toBe(0);
  });

  it("failure windows count concurrent failures exactly and restart when they run out", async () => {
    const d = db().handle.db;
    const key = `w-${randomUUID()}`;
    const now = new Date("2030-01-01T00:00:00Z");
    const counts = await Promise.all(Array.from({ length: 15 }, () => windowFail(d, key, 60_000, now)));
    expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(await windowWaitSeconds(d, key, 15, now)).toBe(60);
    expect(await windowWaitSeconds(d, key, 16, now)).toBeUndefined();
    expect(await windowFail(d, key, 60_000, new Date(now.getTime() + 60_000))).toBe(1);
  });
});
