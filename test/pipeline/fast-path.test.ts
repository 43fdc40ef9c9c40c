/**
 * The read-only fast path: an auto-allowed action that needs only
 * an observe lease is decided, leased and dispatched in ONE transaction —
 * decision/1, dispatch/1 and the job row commit together, so nothing of it
 * exists unless all of it does.
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { PGlite } from "@electric-sql/pglite";
import { submitAction } from "../../server/actions";
import { actions, agentTokens, jobs, leases } from "../../server/db/schema";
import { describeEachDatabase, openTestDatabase } from "../support/databases";
import { rejectionOf } from "../support/refusals";
import { allEntries, entriesOf, insertHost, insertToken, testDeps } from "./support";

describeEachDatabase("the read-only fast path", (db) => {
  it("an auto-allowed read-only call is queued with its decision, lease and dispatch sealed", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const caller = await insertToken(d);
    const outcome = await submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "ls -la" }, channel: "mcp" }, { waitMs: 0 });
    expect(outcome).toMatchObject({ status: "dispatched", decision: "auto_allow" });
    const [job] = await d.select().from(jobs).where(eq(jobs.actionId, outcome.action_id));
    expect(job?.state).toBe("queued");
    expect((job?.payload as { lease?: { mode?: string } }).lease?.mode).toBe("observe");
    const types = (await entriesOf(d, outcome.action_id)).map((e) => e.type);
    expect(types).toEqual(["decision/1", "lease/1", "dispatch/1"]);
    // The second call of the session reuses the observe lease: no new lease, no lease/1.
    const again = await submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "ls" }, channel: "mcp" }, { waitMs: 0 });
    expect(again.lease_id).toBe(outcome.lease_id);
    expect((await entriesOf(d, again.action_id)).map((e) => e.type)).toEqual(["decision/1", "dispatch/1"]);
  });

  it("race: eight concurrent first calls of one session on a fresh host (each may take the lease) all dispatch, under one observe lease — no deadlock between the rows' foreign-key locks and the lease's host lock", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const caller = await insertToken(d);
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: `ls -la # ${i}` }, channel: "mcp" }, { waitMs: 0 })),
    );
    expect(outcomes.map((o) => o.status)).toEqual(Array(8).fill("dispatched"));
    expect(new Set(outcomes.map((o) => o.lease_id)).size).toBe(1);
    expect(await d.select().from(jobs).where(eq(jobs.hostId, host.id))).toHaveLength(8);
  });

  it("hostile: a token revoked after its request was authenticated leaves only the refusal — no action, no lease, no job", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const caller = await insertToken(d);
    // Revoked behind the pipeline's back (the request's authentication already passed).
    await d.update(agentTokens).set({ revokedAt: new Date() }).where(eq(agentTokens.id, caller.tokenId));
    const before = (await allEntries(d)).length;
    const refused = await rejectionOf(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "ls" }, channel: "mcp" }, { waitMs: 0 }));
    expect(refused.code).toBe("FORBIDDEN");
    expect(refused.details?.["token_revoked"]).toBe(true);
    const added = (await allEntries(d)).slice(before);
    expect(added.map((e) => e.type)).toEqual(["refusal/1"]);
    expect(added[0]?.action_id).toBeNull();
    expect(await d.select().from(actions).where(eq(actions.tokenId, caller.tokenId))).toHaveLength(0);
    expect(await d.select().from(leases).where(eq(leases.hostId, host.id))).toHaveLength(0);
    expect(await d.select().from(jobs).where(eq(jobs.hostId, host.id))).toHaveLength(0);
  });
});

describe("the read-only fast path's commits [pglite]", () => {
  it("an auto-allowed read-only call opens one transaction and writes nothing outside it", async () => {
    const test = await openTestDatabase("pglite");
    try {
      const d = test.handle.db;
      const deps = testDeps(test.handle);
      const host = await insertHost(d);
      const caller = await insertToken(d);
      await submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "ls" }, channel: "mcp" }, { waitMs: 0 });

      // Count what the next call asks of the database (the client drizzle sends every statement through).
      const client = (test.handle.driver as { client: PGlite }).client as unknown as { query: (...a: unknown[]) => Promise<unknown>; transaction: (...a: unknown[]) => Promise<unknown> };
      const query = client.query.bind(client);
      const transaction = client.transaction.bind(client);
      let transactions = 0;
      const outside: string[] = [];
      client.query = (...args: unknown[]) => {
        outside.push(String(args[0]));
        return query(...args);
      };
      client.transaction = (...args: unknown[]) => {
        transactions += 1;
        return transaction(...args);
      };
      try {
        await submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "ls -l" }, channel: "mcp" }, { waitMs: 0 });
      } finally {
        client.query = query;
        client.transaction = transaction;
      }
      expect(transactions).toBe(1);
      expect(outside.filter((q) => /^\s*(insert|update|delete)\b/i.test(q))).toEqual([]);
    } finally {
      await test.dispose();
    }
  });
});
