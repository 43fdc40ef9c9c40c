/**
 * The sandbox-first observe scope through the real pipeline and database:
 * a token whose observe scope is `any` runs a run_command call at once under
 * the shared observe lease, whatever its risk, and the record says it ran
 * under observe and was not judged read-only; everything else — the default
 * scope, a call asking for a write lease, operations that need network or
 * workspace writes, read-only tokens — decides exactly as before.
 */
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { submitAction, type Caller, type PipelineDeps } from "../../server/actions";
import { createCapabilityRegistry } from "../../server/capabilities";
import { actions, agentTokens, approvals, jobs } from "../../server/db/schema";
import type { LedgerEntry } from "../../server/ledger/entry";
import { createGrant, listGrants } from "../../server/policy/grants";
import { describeEachDatabase } from "../support/databases";
import { rejectionOf } from "../support/refusals";
import { allEntries, entriesOf, insertAdmin, insertHost, insertToken, PASSKEY_OFF, testDeps } from "./support";

type TokenCaller = Extract<Caller, { kind: "token" }>;

function decisionOf(entries: LedgerEntry[]): Record<string, unknown> {
  const decision = entries.find((e) => e.type === "decision/1");
  if (decision === undefined) throw new Error("no decision/1 entry");
  return decision.data as Record<string, unknown>;
}

function run(deps: PipelineDeps, caller: Caller, host: string, command: string, extra: Record<string, unknown> = {}) {
  return submitAction(deps, caller, { operation: "run_command", arguments: { host, command, ...extra }, channel: "mcp" }, { waitMs: 0 });
}

describeEachDatabase("the observe scope (sandbox-first)", (db) => {
  it("observe any: a write (touch, rated above read_only) and a critical command are dispatched at once under the shared observe lease; decision/1 says observe_scope with lease observe and the unchanged risk", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const judged = await insertToken(d);
    const caller = await insertToken(d, { observe: "any" });

    // The same call on a default token: the verdict the observe scope must not change.
    const held = await rejectionOf(run(deps, judged, host.name, "touch x"));
    expect(held.code).toBe("APPROVAL_PENDING");
    const judgedRisk = held.details?.["risk"];
    expect(judgedRisk).not.toBe("read_only");

    const outcome = await run(deps, caller, host.name, "touch x");
    expect(outcome).toMatchObject({ status: "dispatched", decision: "observe_scope", sandbox: { lease: "observe", reason: "observe_scope" }, approval_id: null, grant_id: null });
    expect(outcome.risk.level).toBe(judgedRisk);
    const [job] = await d.select().from(jobs).where(eq(jobs.actionId, outcome.action_id));
    expect((job?.payload as { lease?: { mode?: string } }).lease?.mode).toBe("observe");
    // The hub-only argument never reaches the worker.
    expect((job?.payload as { payload?: { arguments?: Record<string, unknown> } }).payload?.arguments).not.toHaveProperty("lease");
    const entries = await entriesOf(d, outcome.action_id);
    expect(entries.map((e) => e.type)).toEqual(["decision/1", "lease/1", "dispatch/1"]);
    expect(decisionOf(entries)).toMatchObject({ outcome: "observe_scope", lease: "observe", risk: judgedRisk });
    expect(await d.select().from(approvals).where(eq(approvals.actionId, outcome.action_id))).toHaveLength(0);

    const critical = await run(deps, caller, host.name, "rm -rf / --no-preserve-root");
    expect(critical).toMatchObject({ decision: "observe_scope", risk: { level: "critical" }, lease_id: outcome.lease_id });
    expect(decisionOf(await entriesOf(d, critical.action_id))).toMatchObject({ outcome: "observe_scope", lease: "observe", risk: "critical" });
  });

  it("a read-only verdict on an observe-any token stays auto_allow (judged read-only, and the record says that instead)", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    const outcome = await run(testDeps(db().handle), await insertToken(d, { observe: "any" }), host.name, "ls -la");
    expect(outcome).toMatchObject({ decision: "auto_allow", sandbox: { lease: "observe", reason: "read_only" } });
    expect(decisionOf(await entriesOf(d, outcome.action_id))).toMatchObject({ outcome: "auto_allow", lease: "observe" });
  });

  it("lease \"write\" on an observe-any token takes the judged path: held for a person, exclusive lease recorded; on a default token it changes nothing", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const held = await rejectionOf(run(deps, await insertToken(d, { observe: "any" }), host.name, "touch x", { lease: "write" }));
    expect(held.code).toBe("APPROVAL_PENDING");
    const actionId = String(held.details?.["action_id"]);
    expect(decisionOf(await entriesOf(d, actionId))).toMatchObject({ outcome: "hold", lease: "exclusive" });
    // Default token: the same verdict and decision with or without it (the argument is in action_hash, so the actions differ).
    const judged = await insertToken(d);
    const a = await rejectionOf(run(deps, judged, host.name, "touch y"));
    const b = await rejectionOf(run(deps, judged, host.name, "touch y", { lease: "write" }));
    expect([a.code, b.code]).toEqual(["APPROVAL_PENDING", "APPROVAL_PENDING"]);
    expect(a.details?.["risk"]).toBe(b.details?.["risk"]);
    const ls = await run(deps, judged, host.name, "ls", { lease: "write" });
    expect(ls).toMatchObject({ decision: "auto_allow", sandbox: { lease: "observe", reason: "read_only" } });
  });

  it("observe any takes precedence over a matching grant: the call runs under observe and the grant's use stays unspent", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const admin = await insertAdmin(d);
    const grant = await createGrant(d, admin, { tool: "run_command", host: host.name, maxRisk: "high", uses: 1, expiresAt: new Date(Date.now() + 60_000), pattern: "touch [a-z]+" }, PASSKEY_OFF);
    const outcome = await run(deps, await insertToken(d, { observe: "any" }), host.name, "touch z");
    expect(outcome).toMatchObject({ decision: "observe_scope", grant_id: null });
    expect((await listGrants(d)).find((g) => g.id === grant.id)?.usesRemaining).toBe(1);
  });

  it("hostile: an observe-any token cannot get run_command_net or fs_write auto-allowed; they are held with an exclusive lease as for any token", async () => {
    const d = db().handle.db;
    const deps: PipelineDeps = { ...testDeps(db().handle), registry: createCapabilityRegistry({ enabled: ["egress-shell"] }) };
    const host = await insertHost(d);
    const caller = await insertToken(d, { observe: "any" });
    for (const call of [
      { operation: "run_command_net", arguments: { host: host.name, command: "touch x" } },
      { operation: "fs_write", arguments: { host: host.name, path: "notes.txt", content: "hi" } },
    ]) {
      const refused = await rejectionOf(submitAction(deps, caller, { ...call, channel: "mcp" }, { waitMs: 0 }));
      expect(refused.code, call.operation).toBe("APPROVAL_PENDING");
      const entries = await entriesOf(d, String(refused.details?.["action_id"]));
      expect(decisionOf(entries), call.operation).toMatchObject({ outcome: "hold", lease: "exclusive" });
    }
  });

  it("hostile: arguments cannot turn the scope on or pick the observe lease (unknown argument, lease other than \"write\"), and nothing is recorded but the refusal", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const judged = await insertToken(d);
    for (const extra of [{ observe: "any" }, { lease: "observe" }, { lease: "read" }, { lease: ["write"] }, { sandbox: { lease: "observe" } }]) {
      const before = (await allEntries(d)).length;
      const refused = await rejectionOf(run(deps, judged, host.name, "touch x", extra));
      expect(refused.code, JSON.stringify(extra)).toBe("INVALID_ARGUMENT");
      expect((await allEntries(d)).slice(before).map((e) => e.type)).toEqual(["refusal/1"]);
    }
    expect(await d.select().from(actions).where(eq(actions.tokenId, judged.tokenId))).toHaveLength(0);
  });

  it("hostile: a read-only caller is refused a mutating operation at step 1 even if it claims observe any", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    // The table refuses such a token; a caller object saying so anyway must still be refused first.
    const readOnly: TokenCaller = { ...(await insertToken(d, { readOnly: true })), observe: "any" };
    const refused = await rejectionOf(run(testDeps(db().handle), readOnly, host.name, "touch x"));
    expect(refused.code).toBe("FORBIDDEN");
    expect(refused.details?.["read_only"]).toBe(true);
  });

  it("a revoked observe-any token is refused like any other: no action, no lease, no job", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    const caller = await insertToken(d, { observe: "any" });
    await d.update(agentTokens).set({ revokedAt: new Date() }).where(eq(agentTokens.id, caller.tokenId));
    const refused = await rejectionOf(run(testDeps(db().handle), caller, host.name, "touch x"));
    expect(refused.details?.["token_revoked"]).toBe(true);
    expect(await d.select().from(actions).where(eq(actions.tokenId, caller.tokenId))).toHaveLength(0);
    expect(await d.select().from(jobs).where(eq(jobs.hostId, host.id))).toHaveLength(0);
  });
});
