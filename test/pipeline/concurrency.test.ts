import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createActionPipeline, createActionScheduler, submitAction, type ActionScheduler } from "../../server/actions";
import { initShellRisk } from "../../server/policy/risk";
import { approve } from "../../server/approvals";
import { grants, jobs } from "../../server/db/schema";
import { LeaseholdError } from "../../server/errors";
import { listLeases, releaseSessionLeases, revokeLease } from "../../server/leases";
import { createGrant, listGrants, revokeGrant } from "../../server/policy/grants";
import { describeEachDatabase, openTestDatabase } from "../support/databases";
import { codeOf } from "../support/refusals";
import { allEntries, insertAdmin, insertHost, insertToken, testDeps, PASSKEY_OFF } from "./support";


describeEachDatabase("grants, leases, idempotency", (db) => {
  it("many concurrent callers race for a grant's last use: exactly one wins", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const admin = await insertAdmin(db().handle.db);
    const grant = await createGrant(db().handle.db, admin, { tool: "run_command", host: host.name, maxRisk: "high", uses: 1, expiresAt: new Date(Date.now() + 60_000), pattern: "touch [a-z0-9]+" }, PASSKEY_OFF);
    const callers = await Promise.all(Array.from({ length: 12 }, () => insertToken(db().handle.db)));
    // Distinct hosts would not race; distinct sessions on one host race for the grant, then for the lease.
    const results = await Promise.allSettled(
      callers.map((caller, i) => submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: `touch f${i}` }, channel: "mcp" }, { waitMs: 0 })),
    );
    const codes = results.map((r) => (r.status === "fulfilled" ? "grant" : r.reason instanceof LeaseholdError ? r.reason.code : "?"));
    expect(codes.filter((c) => c === "grant")).toHaveLength(1);
    expect(codes.filter((c) => c === "APPROVAL_PENDING")).toHaveLength(11);
    const [row] = await db().handle.db.select().from(grants).where(eq(grants.id, grant.id));
    expect(row?.usesRemaining).toBe(0);
    const consumed = (await allEntries(db().handle.db)).filter((e) => e.type === "grant/1" && e.data.grant_id === grant.id && e.data.event === "consumed");
    expect(consumed).toHaveLength(1);
    expect(await listGrants(db().handle.db)).not.toContainEqual(expect.objectContaining({ id: grant.id }));
  });

  it("grants: pattern, ceiling, revocation; critical never grantable", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const admin = await insertAdmin(db().handle.db);
    expect(await codeOf(createGrant(db().handle.db, admin, { tool: "run_command", host: host.name, maxRisk: "critical", uses: 1, expiresAt: new Date(Date.now() + 60_000) }))).toBe("POLICY_REFUSED");
    const grant = await createGrant(db().handle.db, admin, { tool: "run_command", host: host.name, maxRisk: "low", uses: 5, expiresAt: new Date(Date.now() + 60_000), pattern: "mkdir [a-z]+" });
    const caller = await insertToken(db().handle.db);
    const ok = await submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "mkdir build" }, channel: "mcp" }, { waitMs: 0 });
    expect(ok.decision).toBe("grant");
    expect(ok.grant_id).toBe(grant.id);
    // Pattern mismatch and ceiling exceeded are held.
    expect(await codeOf(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "mkdir build; touch x" }, channel: "mcp" }, { waitMs: 0 }))).toBe("APPROVAL_PENDING");
    await revokeGrant(db().handle.db, admin, grant.id);
    expect(await codeOf(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "mkdir other" }, channel: "mcp" }, { waitMs: 0 }))).toBe("APPROVAL_PENDING");
    expect(await codeOf(revokeGrant(db().handle.db, admin, grant.id))).toBe("NOT_FOUND");
  });

  it("a second session's mutating call gets HOST_BUSY with an opaque holder id; read-only actions (by operation or by assessed risk) share; release on session end and admin revoke", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const admin = await insertAdmin(db().handle.db);
    const grant = await createGrant(db().handle.db, admin, { tool: "run_command", host: host.name, maxRisk: "low", uses: 10, expiresAt: new Date(Date.now() + 60_000), pattern: "touch [a-z]" });
    const usesLeft = async () => (await db().handle.db.select().from(grants).where(eq(grants.id, grant.id)))[0]?.usesRemaining;
    const holder = await insertToken(db().handle.db);
    const other = await insertToken(db().handle.db);
    const touch = (caller: typeof holder, name: string) => submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: `touch ${name}` }, channel: "mcp" }, { waitMs: 0 });
    const first = await touch(holder, "a");
    expect(first.decision).toBe("grant");
    let busy: LeaseholdError | undefined;
    try {
      await touch(other, "b");
    } catch (error) {
      busy = error as LeaseholdError;
    }
    expect(busy?.code).toBe("HOST_BUSY");
    expect(busy?.retryable).toBe(true);
    expect(busy?.message).toMatch(/another holder \(holder_[0-9a-f]{16}\) until /);
    expect(busy?.details?.["holder_id"]).toMatch(/^holder_[0-9a-f]{16}$/);
    expect(JSON.stringify(busy?.details)).not.toContain("test token");
    // Retrying against a busy host does not drain the grant: a use is spent only when the lease can be taken.
    expect(await usesLeft()).toBe(9);
    for (let i = 0; i < 3; i++) expect(await codeOf(touch(other, "b"))).toBe("HOST_BUSY");
    expect(await usesLeft()).toBe(9);
    // A call no grant covers is still held for a person, busy host or not.
    expect(await codeOf(submitAction(deps, other, { operation: "run_command", arguments: { host: host.name, command: "mkdir nope" }, channel: "mcp" }, { waitMs: 0 }))).toBe("APPROVAL_PENDING");
    // Read-only actions share the host: a read-only operation, and a read_only command through run_command.
    const pwd = await submitAction(deps, other, { operation: "run_command", arguments: { host: host.name, command: "pwd" }, channel: "mcp" }, { waitMs: 0 });
    expect(pwd.decision).toBe("auto_allow");
    expect((await submitAction(deps, other, { operation: "fs_list", arguments: { host: host.name, path: "." }, channel: "mcp" }, { waitMs: 0 })).decision).toBe("auto_allow");
    // The signed job carries the mode: the guest gives an observe job no write access to the workspace.
    expect(await jobLeaseMode(pwd.job.id)).toBe("observe");
    expect(await jobLeaseMode(first.job.id)).toBe("exclusive");

    expect(await releaseSessionLeases(db().handle.db, String(holder.sessionId))).toBe(1);
    expect((await touch(other, "c")).decision).toBe("grant");
    const active = (await listLeases(db().handle.db, { hostId: host.id })).find((lease) => lease.mode === "exclusive");
    await revokeLease(db().handle.db, String(active?.id), admin);
    expect((await touch(holder, "d")).decision).toBe("grant");
    const events = (await allEntries(db().handle.db)).flatMap((e) => (e.type === "lease/1" && e.data.host_id === host.id ? [`${e.data.mode}:${e.data.event}`] : []));
    expect(events).toEqual(["exclusive:acquired", "observe:acquired", "exclusive:released", "exclusive:acquired", "exclusive:revoked", "exclusive:acquired"]);

    async function jobLeaseMode(jobId: string): Promise<unknown> {
      const [job] = await db().handle.db.select().from(jobs).where(eq(jobs.id, jobId));
      return (job?.payload as { lease?: { mode?: string } } | undefined)?.lease?.mode;
    }
  });

  it("idle leases lapse (sealed) and the host is free again", async () => {
    const deps = testDeps(db().handle, { leaseIdleMs: 100 });
    const host = await insertHost(db().handle.db);
    const a = await insertToken(db().handle.db);
    const b = await insertToken(db().handle.db);
    await submitAction(deps, a, { operation: "run_command", arguments: { host: host.name, command: "ls" }, channel: "mcp" }, { waitMs: 0 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await submitAction(deps, b, { operation: "run_command", arguments: { host: host.name, command: "ls" }, channel: "mcp" }, { waitMs: 0 })).decision).toBe("auto_allow");
    const events = (await allEntries(db().handle.db)).flatMap((e) => (e.type === "lease/1" && e.data.host_id === host.id ? [e.data.event] : []));
    expect(events).toEqual(["acquired", "lapsed", "acquired"]);
  });

  it("idempotency: same key + same arguments → the first outcome; different arguments → IDEMPOTENCY_CONFLICT; keys are per caller", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const admin = await insertAdmin(db().handle.db);
    const caller = await insertToken(db().handle.db);
    const args = { host: host.name, command: "touch once", idempotency_key: "k-1" };
    const first = await codeOf(submitAction(deps, caller, { operation: "run_command", arguments: args, channel: "mcp" }, { waitMs: 0 }));
    expect(first).toBe("APPROVAL_PENDING");
    // Repeating the call continues the same held action (no second approval).
    const again = await submitAction(deps, caller, { operation: "run_command", arguments: args, channel: "mcp" }, { waitMs: 0 }).catch((e: LeaseholdError) => e);
    const actionId = (again as LeaseholdError).details?.["action_id"];
    const list = (await (await import("../../server/approvals")).listApprovals(db().handle.db)).filter((a) => a.action_id === actionId);
    expect(list).toHaveLength(1);
    await approve(db().handle.db, String(list[0]?.id), admin);
    const done = await submitAction(deps, caller, { operation: "run_command", arguments: args, channel: "mcp" }, { waitMs: 0 });
    const replay = await submitAction(deps, caller, { operation: "run_command", arguments: args, channel: "mcp" }, { waitMs: 0 });
    expect(replay.action_id).toBe(done.action_id);
    expect(replay.job.id).toBe(done.job.id);
    expect(replay.replayed).toBe(true);
    expect(await codeOf(submitAction(deps, caller, { operation: "run_command", arguments: { ...args, command: "touch twice" }, channel: "mcp" }, { waitMs: 0 }))).toBe("IDEMPOTENCY_CONFLICT");
    // Another caller's identical key is its own.
    const stranger = await insertToken(db().handle.db);
    const strangers = (await submitAction(deps, stranger, { operation: "run_command", arguments: args, channel: "mcp" }, { waitMs: 0 }).catch((e: LeaseholdError) => e)) as LeaseholdError;
    expect(strangers.code).toBe("APPROVAL_PENDING");
    expect(strangers.details?.["action_id"]).not.toBe(done.action_id);
    // Concurrent duplicates produce one action and spend one grant use.
    const otherHost = await insertHost(db().handle.db);
    await createGrant(db().handle.db, admin, { tool: "fs_write", host: otherHost.name, maxRisk: "low", uses: 10, expiresAt: new Date(Date.now() + 60_000) });
    const writer = await insertToken(db().handle.db);
    const same = { host: otherHost.name, path: "a.txt", content: "x", idempotency_key: "write-1" };
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => submitAction(deps, writer, { operation: "fs_write", arguments: same, channel: "mcp" }, { waitMs: 0 })));
    expect(new Set(outcomes.map((o) => o.action_id)).size).toBe(1);
    const [left] = await db().handle.db.select().from(grants).where(eq(grants.host, otherHost.name));
    expect(left?.usesRemaining).toBe(9);
  });

  it("idempotency keys are bounded in number", async () => {
    const deps = testDeps(db().handle, { idempotencyMaxKeys: 2 });
    const host = await insertHost(db().handle.db);
    const admin = await insertAdmin(db().handle.db);
    await createGrant(db().handle.db, admin, { tool: "fs_write", host: host.name, maxRisk: "low", uses: 10, expiresAt: new Date(Date.now() + 60_000) });
    const caller = await insertToken(db().handle.db);
    const read = (key: string) => submitAction(deps, caller, { operation: "fs_write", arguments: { host: host.name, path: "a", content: "x", idempotency_key: key }, channel: "mcp" }, { waitMs: 0 });
    const first = await read("a");
    await read("b");
    await read("c");
    // "a" was forgotten: the same key now starts a new action.
    expect((await read("a")).action_id).not.toBe(first.action_id);
  });
});

describe("per-session scheduling", () => {
  it("runs read-only calls in parallel (≤4), mutating calls as per-host barriers, and delivers results in request order", async () => {
    const scheduler = createActionScheduler({ readOnlyParallel: 4 });
    const log: string[] = [];
    let running = 0;
    let peak = 0;
    const task = (name: string, ms: number) => async () => {
      running += 1;
      peak = Math.max(peak, running);
      log.push(`start ${name}`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      log.push(`end ${name}`);
      running -= 1;
      return name;
    };
    const delivered: string[] = [];
    const calls = [
      scheduler.run("s", { mutating: false, host: "h" }, task("r1", 60)),
      scheduler.run("s", { mutating: false, host: "h" }, task("r2", 10)),
      scheduler.run("s", { mutating: false, host: "h" }, task("r3", 10)),
      scheduler.run("s", { mutating: false, host: "h" }, task("r4", 10)),
      scheduler.run("s", { mutating: false, host: "h" }, task("r5", 10)),
      scheduler.run("s", { mutating: true, host: "h" }, task("w1", 20)),
      scheduler.run("s", { mutating: false, host: "h" }, task("r6", 5)),
      scheduler.run("s", { mutating: true, host: "h" }, task("w2", 5)),
    ].map((p) => p.then((name) => delivered.push(name)));
    await Promise.all(calls);
    expect(peak).toBeLessThanOrEqual(4);
    expect(delivered).toEqual(["r1", "r2", "r3", "r4", "r5", "w1", "r6", "w2"]);
    // w1 starts only after every earlier call ended; r6 only after w1; w2 after r6.
    const at = (entry: string) => log.indexOf(entry);
    for (const r of ["r1", "r2", "r3", "r4", "r5"]) expect(at(`end ${r}`)).toBeLessThan(at("start w1"));
    expect(at("end w1")).toBeLessThan(at("start r6"));
    expect(at("end r6")).toBeLessThan(at("start w2"));
  });

  it("the service schedules a mutating operation by its assessed risk: ls through run_command runs like a read, anything else is a barrier", async () => {
    await initShellRisk();
    const seen: Array<{ command: unknown; mutating: boolean }> = [];
    const inner = createActionScheduler();
    const spy: ActionScheduler = {
      run(key, task, fn) {
        seen.push({ command: current, mutating: task.mutating });
        return inner.run(key, task, fn);
      },
    };
    let current: unknown;
    const test = await openTestDatabase("pglite");
    try {
      const pipeline = createActionPipeline(testDeps(test.handle), spy);
      const host = await insertHost(test.handle.db);
      const caller = await insertToken(test.handle.db);
      for (const command of ["ls -la", "cat a | wc -l", "touch x", "ls; rm -rf x", "", 42]) {
        current = command;
        await pipeline.submit(caller, { operation: "run_command", arguments: { host: host.name, command }, channel: "mcp" }, { waitMs: 0 }).catch(() => undefined);
      }
      current = "fs_read";
      await pipeline.submit(caller, { operation: "fs_read", arguments: { host: host.name, path: "a" }, channel: "mcp" }, { waitMs: 0 });
      expect(seen).toEqual([
        { command: "ls -la", mutating: false },
        { command: "cat a | wc -l", mutating: false },
        { command: "touch x", mutating: true },
        { command: "ls; rm -rf x", mutating: true },
        { command: "", mutating: true },
        { command: 42, mutating: true },
        { command: "fs_read", mutating: false },
      ]);
    } finally {
      await test.dispose();
    }
  });

  it("the pipeline service schedules per session", async () => {
    const test = await openTestDatabase("pglite");
    try {
      const pipeline = createActionPipeline(testDeps(test.handle));
      const host = await insertHost(test.handle.db);
      const caller = await insertToken(test.handle.db);
      const results = await Promise.all(
        ["a", "b", "c"].map((p) => pipeline.submit(caller, { operation: "fs_read", arguments: { host: host.name, path: p }, channel: "mcp" }, { waitMs: 0 })),
      );
      expect(results.map((r) => r.decision)).toEqual(["auto_allow", "auto_allow", "auto_allow"]);
    } finally {
      await test.dispose();
    }
  });
});
