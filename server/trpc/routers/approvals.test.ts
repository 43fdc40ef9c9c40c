/**
 * The approvals router on both databases: the queue a browser
 * reads (fair across requesters, the full prepared action as structured,
 * scrubbed data), decisions bound to the hash shown (one by one and in a
 * batch, each item to its own hash), and "approve and allow similar" — the
 * narrowest grant, never for critical — ending with the next identical call
 * running without a person while one with other options is held.
 */
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { actionPipelineFor, createActionPipeline, installActionPipeline, submitAction } from "../../actions";
import { createAdminSession, type AdminRole } from "../../admins";
import type { Database, DatabaseHandle } from "../../db";
import { adminUsers, approvals, grants } from "../../db/schema";
import type { HubRuntime } from "../../hub/runtime";
import { sha256Hex } from "../../policy/grants";
import { describeEachDatabase, openTestDatabase } from "../../../test/support/databases";
import { rejectionOf } from "../../../test/support/refusals";
import { insertHost, insertToken, readyForTests, testDeps, uniqueName } from "../../../test/pipeline/support";
import { TRPCError } from "../init";
import { appRouter } from "../root";
import { sessionHeaders } from "./test-callers";

const GH_TOKEN = `ghp_${"Q7w6".repeat(9)}`;

function runtimeFor(handle: DatabaseHandle): HubRuntime {
  const runtime = { database: { handle }, config: { publicUrl: "http://localhost:8700", dataDir: "/nonexistent" } } as unknown as HubRuntime;
  installActionPipeline(runtime, createActionPipeline(testDeps(handle)));
  return runtime;
}

async function callerAs(handle: DatabaseHandle, runtime: HubRuntime, role: AdminRole) {
  const [row] = await handle.db.insert(adminUsers).values({ username: uniqueName(role), passwordHash: "unused", role }).returning();
  if (row === undefined) throw new Error("no admin row");
  const session = await createAdminSession(handle.db, row.id);
  return appRouter.createCaller({ runtime, headers: sessionHeaders(session, runtime.config) });
}

async function hold(handle: DatabaseHandle, caller: Awaited<ReturnType<typeof insertToken>>, host: string, args: Record<string, unknown>) {
  const held = await rejectionOf(submitAction(testDeps(handle), caller, { operation: "run_command", arguments: { host, ...args }, channel: "mcp" }, { waitMs: 0 }));
  expect(held.code).toBe("APPROVAL_PENDING");
  const approvalId = String(held.details?.["approval_id"]);
  const [row] = await handle.db.select({ actionHash: approvals.actionHash }).from(approvals).where(eq(approvals.id, approvalId));
  return { actionId: String(held.details?.["action_id"]), approvalId, actionHash: String(row?.actionHash) };
}

async function stateOf(db: Database, approvalId: string): Promise<string | undefined> {
  const [row] = await db.select({ state: approvals.state }).from(approvals).where(eq(approvals.id, approvalId));
  return row?.state;
}

async function trpcError(promise: Promise<unknown>): Promise<TRPCError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TRPCError) return error;
    throw error;
  }
  throw new Error("expected the call to fail");
}

function leaseholdCode(error: TRPCError): string | undefined {
  return (error.cause as { code?: string } | undefined)?.code;
}

describeEachDatabase("approvals router", (db) => {
  it("list: fair across requesters (a later request of another token is on the first page) and each item is the prepared action in full, scrubbed", async () => {
    // A database of its own: pending approvals other cases left (they run in any order) would fill the two-item page.
    const fresh = await openTestDatabase(db().kind);
    try {
      const { handle } = fresh;
      const runtime = runtimeFor(handle);
      const owner = await callerAs(handle, runtime, "owner");
      const host = await insertHost(handle.db);
      const flood = await insertToken(handle.db);
      const other = await insertToken(handle.db);
      for (let i = 0; i < 4; i += 1) await hold(handle, flood, host.name, { command: `chmod -f 600 lh-flood-${i}; echo flood-${i}` });
      const late = await hold(handle, other, host.name, {
        command: "chmod -f 600 lh-late; echo late",
        cwd: "sub",
        env: { GITHUB_TOKEN: GH_TOKEN, MODE: "fast" },
        stdin: "hello\u001b[31m",
      });
      const page = await owner.approvals.list({ limit: 2 });
      expect(page.items.map((i) => i.action_id)).toContain(late.actionId);
      expect(page.has_more).toBe(true);
      expect(page.by_requester.find((r) => r.requester.id === flood.tokenId)?.count).toBeGreaterThanOrEqual(4);
      const second = await owner.approvals.list({ offset: 2, limit: 2 });
      expect(second.items.map((i) => i.action_id)).not.toContain(late.actionId);

      const item = page.items.find((i) => i.action_id === late.actionId);
      expect(item).toBeDefined();
      if (item === undefined) return;
      expect(item.approval_id).toBe(late.approvalId);
      expect(item.action_hash).toBe(late.actionHash);
      expect(item.risk).toBe("medium");
      expect(item.host).toBe(host.name);
      expect(item.requester).toMatchObject({ kind: "token", id: other.tokenId });
      expect(item.session).toMatch(/^session [0-9a-f]{8}$/);
      expect(item.subject?.name).toBe("command");
      expect(item.subject?.segments.map((s) => s.text).join("")).toBe("chmod -f 600 lh-late; echo late");
      expect(item.subject?.segments.filter((s) => s.risky).map((s) => s.text).join("|")).toMatch(/chmod/);
      expect(item.cwd).toBe("sub");
      expect(item.env).toEqual([
        { name: "GITHUB_TOKEN", value: "[REDACTED:github_token]" },
        { name: "MODE", value: "fast" },
      ]);
      expect(JSON.stringify(page)).not.toContain(GH_TOKEN);
      expect(item.stdin).toMatchObject({ bytes: Buffer.byteLength("hello\u001b[31m"), sha256: sha256Hex("hello\u001b[31m"), preview: "hello⟨ESC⟩[31m", cut: false });
      expect(item.reasons.some((r) => r.level === "medium" && r.rule === "command.permissions")).toBe(true);
      expect(Date.parse(item.deadline)).toBeGreaterThan(Date.now());
    } finally {
      await fresh.dispose();
    }
  });

  it("approve and deny are bound to the hash shown: another hash is refused and changes nothing; deny needs a reason", async () => {
    const { handle } = db();
    const runtime = runtimeFor(handle);
    const approver = await callerAs(handle, runtime, "approver");
    const host = await insertHost(handle.db);
    const token = await insertToken(handle.db);
    const a = await hold(handle, token, host.name, { command: "chmod -f 600 lh-a; echo a" });
    const b = await hold(handle, token, host.name, { command: "chmod -f 600 lh-b; echo b" });
    const wrong = await trpcError(approver.approvals.approve({ approvalId: a.approvalId, actionHash: b.actionHash }));
    expect(leaseholdCode(wrong)).toBe("POLICY_REFUSED");
    expect(await stateOf(handle.db, a.approvalId)).toBe("pending");
    expect(await approver.approvals.approve({ approvalId: a.approvalId, actionHash: a.actionHash })).toEqual({ id: a.approvalId, state: "approved" });

    expect((await trpcError(approver.approvals.deny({ approvalId: b.approvalId, actionHash: b.actionHash, reason: "  " }))).code).toBe("BAD_REQUEST");
    expect(await stateOf(handle.db, b.approvalId)).toBe("pending");
    expect(await approver.approvals.deny({ approvalId: b.approvalId, actionHash: b.actionHash, reason: "not on a Friday" })).toEqual({ id: b.approvalId, state: "denied" });
    const [row] = await handle.db.select().from(approvals).where(eq(approvals.id, b.approvalId));
    expect(row?.reason).toBe("not on a Friday");
  });

  it("batch: each item is bound to its own hash — an item carrying another item's hash fails alone, the rest are decided; a batch deny needs a reason", async () => {
    const { handle } = db();
    const runtime = runtimeFor(handle);
    const owner = await callerAs(handle, runtime, "owner");
    const host = await insertHost(handle.db);
    const token = await insertToken(handle.db);
    const held = [];
    for (let i = 0; i < 3; i += 1) held.push(await hold(handle, token, host.name, { command: `chmod -f 600 lh-batch-${i}; echo batch-${i}` }));
    const [x, y, z] = held as [(typeof held)[0], (typeof held)[0], (typeof held)[0]];
    const { results } = await owner.approvals.batch({
      decision: "approve",
      items: [
        { approvalId: x.approvalId, actionHash: x.actionHash },
        { approvalId: y.approvalId, actionHash: x.actionHash }, // y shown with x's hash
        { approvalId: z.approvalId, actionHash: z.actionHash },
      ],
    });
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    const failed = results[1];
    expect(failed?.ok === false && failed.error.code).toBe("POLICY_REFUSED");
    expect(await stateOf(handle.db, x.approvalId)).toBe("approved");
    expect(await stateOf(handle.db, y.approvalId)).toBe("pending");
    expect(await stateOf(handle.db, z.approvalId)).toBe("approved");

    expect((await trpcError(owner.approvals.batch({ decision: "deny", items: [{ approvalId: y.approvalId, actionHash: y.actionHash }] }))).code).toBe("BAD_REQUEST");
    expect(await stateOf(handle.db, y.approvalId)).toBe("pending");
    const denied = await owner.approvals.batch({ decision: "deny", reason: "batch says no", items: [{ approvalId: y.approvalId, actionHash: y.actionHash }, { approvalId: x.approvalId, actionHash: x.actionHash }] });
    expect(denied.results.map((r) => (r.ok ? r.state : r.error.code))).toEqual(["denied", "POLICY_REFUSED"]);
  });

  it("proposeGrant is the narrowest grant: this host and tool, the exact command escaped (anchored by the matcher), exact env/stdin/cwd, 3 uses, 1 hour", async () => {
    const { handle } = db();
    const runtime = runtimeFor(handle);
    const owner = await callerAs(handle, runtime, "owner");
    const host = await insertHost(handle.db);
    const token = await insertToken(handle.db);
    const command = "find . -maxdepth 0 -exec echo a.b (c)* {} +";
    const h = await hold(handle, token, host.name, { command: `${command}`.replace("(c)*", "'(c)*'"), cwd: "sub", env: { MODE: "fast", GITHUB_TOKEN: GH_TOKEN }, stdin: "data" });
    const before = Date.now();
    const p = await owner.approvals.proposeGrant({ approvalId: h.approvalId, actionHash: h.actionHash });
    const exact = "find . -maxdepth 0 -exec echo a.b '(c)*' {} +";
    expect(p.pattern).toBe("find \\. -maxdepth 0 -exec echo a\\.b '\\(c\\)\\*' \\{\\} \\+");
    const anchored = new RegExp(`^(?:${p.pattern})$`, "u");
    expect(anchored.test(exact)).toBe(true);
    for (const wider of ["find . -maxdepth 1 -exec echo a.b '(c)*' {} +", "find X -maxdepth 0 -exec echo aXb '(c)*' {} +", `${exact}; rm -rf ~`, `x ${exact}`]) expect(anchored.test(wider), wider).toBe(false);
    expect(p).toMatchObject({ tool: "run_command", host: host.name, maxRisk: "medium", uses: 3, cwd: "sub", stdinSha256: sha256Hex("data") });
    expect(Date.parse(p.expiresAt) - before).toBeGreaterThan(3590_000);
    expect(Date.parse(p.expiresAt) - before).toBeLessThanOrEqual(3600_000 + 60_000);
    // Env: shown scrubbed; the raw value never leaves the hub in a proposal.
    expect(p.env).toEqual([
      { name: "GITHUB_TOKEN", value: "[REDACTED:github_token]" },
      { name: "MODE", value: "fast" },
    ]);
    expect(JSON.stringify(p)).not.toContain(GH_TOKEN);
    // Bound to the hash shown.
    expect(leaseholdCode(await trpcError(owner.approvals.proposeGrant({ approvalId: h.approvalId, actionHash: `sha256:${"0".repeat(64)}` })))).toBe("POLICY_REFUSED");
  });

  it("hostile: never for critical — proposeGrant and approveAndGrant refuse, nothing is approved and no grant is created", async () => {
    const { handle } = db();
    const runtime = runtimeFor(handle);
    const owner = await callerAs(handle, runtime, "owner");
    const host = await insertHost(handle.db);
    const token = await insertToken(handle.db);
    const h = await hold(handle, token, host.name, { command: "rm -rf /" });
    const grantsBefore = (await handle.db.select().from(grants)).length;
    const proposed = await trpcError(owner.approvals.proposeGrant({ approvalId: h.approvalId, actionHash: h.actionHash }));
    expect(leaseholdCode(proposed)).toBe("POLICY_REFUSED");
    expect(proposed.message).toContain("critical");
    const edits = { pattern: "rm -rf /", uses: 1, expiresAt: new Date(Date.now() + 600_000).toISOString(), maxRisk: "high", cwd: "." };
    expect(leaseholdCode(await trpcError(owner.approvals.approveAndGrant({ approvalId: h.approvalId, actionHash: h.actionHash, grant: edits })))).toBe("POLICY_REFUSED");
    expect(await stateOf(handle.db, h.approvalId)).toBe("pending");
    expect((await handle.db.select().from(grants)).length).toBe(grantsBefore);
    // A medium action cannot be widened to a critical ceiling either.
    const m = await hold(handle, token, host.name, { command: "chmod -f 600 lh-m; echo m" });
    expect(leaseholdCode(await trpcError(owner.approvals.approveAndGrant({ approvalId: m.approvalId, actionHash: m.actionHash, grant: { ...edits, pattern: null, maxRisk: "critical" } })))).toBe("POLICY_REFUSED");
    expect(await stateOf(handle.db, m.approvalId)).toBe("pending");
  });

  it("approveAndGrant approves, then creates the confirmed grant: the next identical call runs without a person, a call with other options is held; a wrong hash creates nothing", async () => {
    const { handle } = db();
    const runtime = runtimeFor(handle);
    const approver = await callerAs(handle, runtime, "approver");
    const host = await insertHost(handle.db);
    const token = await insertToken(handle.db);
    const args = { command: "chmod -f 600 lh-similar; echo similar", env: { MODE: "fast" }, stdin: "in" };
    const h = await hold(handle, token, host.name, args);
    const p = await approver.approvals.proposeGrant({ approvalId: h.approvalId, actionHash: h.actionHash });
    const grant = { pattern: p.pattern, uses: p.uses, expiresAt: p.expiresAt, maxRisk: p.maxRisk, cwd: p.cwd };
    const grantsBefore = (await handle.db.select().from(grants)).length;
    expect(leaseholdCode(await trpcError(approver.approvals.approveAndGrant({ approvalId: h.approvalId, actionHash: `sha256:${"1".repeat(64)}`, grant })))).toBe("POLICY_REFUSED");
    expect((await handle.db.select().from(grants)).length).toBe(grantsBefore);

    const done = await approver.approvals.approveAndGrant({ approvalId: h.approvalId, actionHash: h.actionHash, grant });
    expect(done.approval).toEqual({ id: h.approvalId, state: "approved" });
    expect(done.grant.usesRemaining).toBe(3);
    const [row] = await handle.db.select().from(grants).where(eq(grants.id, done.grant.id));
    expect(row).toMatchObject({ tool: "run_command", host: host.name, argumentPattern: p.pattern, env: { MODE: "fast" }, stdinSha256: sha256Hex("in"), cwd: ".", maxRisk: "medium" });

    const again = await submitAction(testDeps(handle), token, { operation: "run_command", arguments: { host: host.name, ...args }, channel: "mcp" }, { waitMs: 0 });
    expect(again.decision).toBe("grant");
    for (const variant of [
      { ...args, command: "chmod -f 644 lh-similar; echo similar" },
      { ...args, env: { MODE: "slow" } },
      { ...args, stdin: "other" },
    ]) {
      const other = await rejectionOf(submitAction(testDeps(handle), token, { operation: "run_command", arguments: { host: host.name, ...variant }, channel: "mcp" }, { waitMs: 0 }));
      expect(other.code).toBe("APPROVAL_PENDING");
    }
  });

  it("auditors cannot decide: every deciding procedure refuses them with FORBIDDEN and the approval stays pending", async () => {
    const { handle } = db();
    const runtime = runtimeFor(handle);
    const auditor = await callerAs(handle, runtime, "auditor");
    const host = await insertHost(handle.db);
    const token = await insertToken(handle.db);
    const h = await hold(handle, token, host.name, { command: "chmod -f 600 lh-audit; echo audit" });
    const ref = { approvalId: h.approvalId, actionHash: h.actionHash };
    const calls = [
      () => auditor.approvals.list(),
      () => auditor.approvals.approve(ref),
      () => auditor.approvals.deny({ ...ref, reason: "no" }),
      () => auditor.approvals.batch({ decision: "approve", items: [ref] }),
      () => auditor.approvals.proposeGrant(ref),
      () => auditor.approvals.approveAndGrant({ ...ref, grant: { pattern: null, uses: 1, expiresAt: new Date(Date.now() + 60_000).toISOString(), maxRisk: "medium", cwd: "." } }),
    ];
    for (const call of calls) expect((await trpcError(call())).code).toBe("FORBIDDEN");
    expect(await stateOf(handle.db, h.approvalId)).toBe("pending");
  });

  it("the pipeline tells onHeld (the webhook) about each held action after commit, and nothing about an action that runs", async () => {
    const { handle } = db();
    const host = await insertHost(handle.db);
    const token = await insertToken(handle.db);
    const notices: unknown[] = [];
    const deps = { ...testDeps(handle), onHeld: (n: unknown) => notices.push(n) };
    await submitAction(deps, token, { operation: "run_command", arguments: { host: host.name, command: "ls" }, channel: "mcp" }, { waitMs: 0 });
    const held = await rejectionOf(submitAction(deps, token, { operation: "run_command", arguments: { host: host.name, command: "chmod -f 600 lh-hook; echo hook" }, channel: "mcp" }, { waitMs: 0 }));
    for (let i = 0; i < 50 && notices.length === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(notices).toEqual([
      { approvalId: String(held.details?.["approval_id"]), actionId: String(held.details?.["action_id"]), host: host.name, operation: "run_command", risk: "medium", deadline: expect.any(Date) },
    ]);
  });

  it("the hub wires LEASEHOLD_WEBHOOK_URL/SECRET to held actions: a receiver on loopback gets the signed notice with the approval link", async () => {
    const { handle } = db();
    const bodies: Array<{ body: string; signature: string }> = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        bodies.push({ body: Buffer.concat(chunks).toString("utf8"), signature: String(req.headers["x-leasehold-signature"]) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const dataDir = mkdtempSync(path.join(tmpdir(), "lh-webhook-"));
    try {
      const secret = "wired-webhook-secret-0123";
      const runtime = {
        database: { handle },
        config: { publicUrl: "http://localhost:8700", dataDir, mcp: { maxHeldPerToken: 20 }, webhook: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, secret } },
        ledger: { integrator: undefined },
      } as unknown as HubRuntime;
      const deps = actionPipelineFor(runtime).deps;
      const host = await insertHost(handle.db);
      const token = await insertToken(handle.db);
      const held = await rejectionOf(submitAction({ ...deps, readiness: readyForTests }, token, { operation: "run_command", arguments: { host: host.name, command: "chmod -f 600 lh-wired; echo wired" }, channel: "mcp" }, { waitMs: 0 }));
      const approvalId = String(held.details?.["approval_id"]);
      for (let i = 0; i < 100 && bodies.length === 0; i += 1) await new Promise((r) => setTimeout(r, 50));
      expect(bodies).toHaveLength(1);
      const [got] = bodies as [{ body: string; signature: string }];
      expect(got.signature).toBe(`sha256=${createHmac("sha256", secret).update(got.body).digest("hex")}`);
      expect(JSON.parse(got.body)).toMatchObject({ type: "approval.requested", approval_id: approvalId, host: host.name, operation: "run_command", risk: "medium", url: `http://localhost:8700/approvals#${approvalId}` });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
