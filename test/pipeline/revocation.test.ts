/**
 * Revoking a token ends what it started. Its held approvals are
 * denied (reason "token revoked"), its queued jobs cancelled, its leases
 * released — each sealed — and the pipeline re-checks the token before it
 * dispatches, so an approval given after a revocation never runs.
 * A job already running when the token is revoked finishes (see
 * server/tokens/README.md "Revocation").
 */
import { eq, sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { resumeAction, submitAction } from "../../server/actions";
import { approve, getApproval } from "../../server/approvals";
import { claimJob } from "../../server/dispatch";
import { ackJob, beat } from "../../server/jobs";
import { agentTokens, jobs, leases } from "../../server/db/schema";
import { beginAuthorization, decideAuthorization, exchangeCode, mcpResourceUrl } from "../../server/oauth";
import { clientResolver, registerClientByAdmin } from "../../server/oauth/clients";
import { challengeOf } from "../../server/oauth/pkce";
import { authenticateToken, revokeToken } from "../../server/tokens";
import { describeEachDatabase } from "../support/databases";
import { codeOf, rejectionOf } from "../support/refusals";
import { actionState, allEntries, entriesOf, insertAdmin, insertHost, insertToken, testDeps } from "./support";

describeEachDatabase("token revocation ends what the token started", (db) => {
  async function jobsOf(actionId: string) {
    return db().handle.db.select().from(jobs).where(eq(jobs.actionId, actionId));
  }

  it("hostile (review's case): an action held before the revocation and approved after it does not run", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const admin = await insertAdmin(d);
    const caller = await insertToken(d, { createdBy: "someone-else" });
    const held = await rejectionOf(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "rm notes.txt" }, channel: "mcp" }, { waitMs: 0 }));
    expect(held.code).toBe("APPROVAL_PENDING");
    const actionId = String(held.details?.["action_id"]);
    const approvalId = String(held.details?.["approval_id"]);

    await revokeToken(d, caller.tokenId, "cli");
    const approveCode = await codeOf(approve(d, approvalId, admin, "ok"));
    const resumed = await codeOf(resumeAction(deps, caller, actionId, { waitMs: 0 }));
    expect({ approveCode, resumed }).toEqual({ approveCode: "POLICY_REFUSED", resumed: "APPROVAL_DENIED" });
    expect(await jobsOf(actionId)).toHaveLength(0);
    const approval = await getApproval(d, approvalId);
    expect({ state: approval?.state, reason: approval?.reason }).toEqual({ state: "denied", reason: "token revoked" });
    const sealed = (await entriesOf(d, actionId)).map((e) => (e.type === "approval/1" ? `approval:${e.data.outcome}` : e.type));
    expect(sealed).toEqual(["decision/1", "approval:denied"]);
  });

  it("an OAuth grant is revoked the same way: its held action's approval is denied and its access token stops working", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const hub = "http://127.0.0.1:8700";
    const ctx = { db: d, publicUrl: hub, adminHost: "localhost", resolver: clientResolver([]), knownTools: ["run_command"] };
    const client = await registerClientByAdmin(d, { name: "grant holder", redirectUris: ["http://127.0.0.1:4000/cb"] }, "owner-id", "localhost");
    const verifier = "v".repeat(50);
    const begun = await beginAuthorization(ctx, new URLSearchParams({ response_type: "code", client_id: client.id, redirect_uri: "http://127.0.0.1:4000/cb", code_challenge: challengeOf(verifier), code_challenge_method: "S256", scope: "mcp:write" }), { adminId: "00000000-0000-4000-8000-0000000000bb", username: "owner" });
    if (begun.kind !== "consent") throw new Error(JSON.stringify(begun));
    const { location } = await decideAuthorization(ctx, { handle: begun.pending.handle, approve: true, readOnly: false, tools: null, hosts: null, lifetimeS: 3600 }, { adminId: "00000000-0000-4000-8000-0000000000bb", username: "owner" });
    const issued = await exchangeCode(d, hub, { clientId: client.id, code: new URL(location).searchParams.get("code") ?? "", redirectUri: "http://127.0.0.1:4000/cb", codeVerifier: verifier, resource: null });
    if (!issued.ok) throw new Error(issued.description);
    const auth = await authenticateToken(d, issued.body.access_token, new Date(), mcpResourceUrl(hub));
    if (!auth.ok) throw new Error(auth.reason);
    const caller = { kind: "token" as const, tokenId: auth.token.id, readOnly: false, tools: null, hosts: null, sessionId: "oauth-session", label: "oauth grant" };
    const held = await rejectionOf(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "rm notes.txt" }, channel: "mcp" }, { waitMs: 0 }));
    expect(held.code).toBe("APPROVAL_PENDING");
    const result = await revokeToken(d, auth.token.id, "owner-id");
    expect(result.ended.approvalsDenied).toBe(1);
    expect((await getApproval(d, String(held.details?.["approval_id"])))?.reason).toBe("token revoked");
    expect(await authenticateToken(d, issued.body.access_token, new Date(), mcpResourceUrl(hub))).toEqual({ ok: false, reason: "revoked" });
  });

  it("hostile: the pipeline re-checks the token at resumption — an approval that slipped past the revocation is refused at dispatch, sealed, no job", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const admin = await insertAdmin(d);
    const caller = await insertToken(d, { createdBy: "someone-else" });
    const held = await rejectionOf(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "rm notes.txt" }, channel: "mcp" }, { waitMs: 0 }));
    const actionId = String(held.details?.["action_id"]);
    // The approval is given first, then the token row is revoked without the cascade (a revocation
    // racing the approver): only the re-check at dispatch stands between them and a run.
    await approve(d, String(held.details?.["approval_id"]), admin, "ok");
    await d.update(agentTokens).set({ revokedAt: new Date() }).where(eq(agentTokens.id, caller.tokenId));
    const error = await rejectionOf(resumeAction(deps, caller, actionId, { waitMs: 0 }));
    expect(error.code).toBe("FORBIDDEN");
    expect(error.message).toContain("revoked");
    expect(await jobsOf(actionId)).toHaveLength(0);
    const refusal = (await entriesOf(d, actionId)).find((e) => e.type === "refusal/1");
    expect(refusal?.type === "refusal/1" ? { stage: refusal.data.stage, code: refusal.data.code } : null).toEqual({ stage: "dispatch", code: "FORBIDDEN" });
    const active = await d.select().from(leases).where(sql`${leases.ownerId} = ${caller.tokenId} and ${leases.releasedAt} is null`);
    expect(active).toHaveLength(0);
  });

  it("hostile: a revocation racing the dispatch of an approved action never leaves a runnable job (either refused, or queued then cancelled)", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const admin = await insertAdmin(d);
    const outcomes: string[] = [];
    for (let round = 0; round < 6; round += 1) {
      const caller = await insertToken(d, { createdBy: "someone-else" });
      const held = await rejectionOf(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: `rm f${round}` }, channel: "mcp" }, { waitMs: 0 }));
      const actionId = String(held.details?.["action_id"]);
      await approve(d, String(held.details?.["approval_id"]), admin, "ok");
      const [resumed] = await Promise.all([codeOf(resumeAction(deps, caller, actionId, { waitMs: 0 })), revokeToken(d, caller.tokenId, "cli")]);
      const states = (await jobsOf(actionId)).map((j) => j.state);
      outcomes.push(`${resumed}:${states.join(",") || "no job"}`);
      expect(states.filter((state) => state !== "cancelled")).toEqual([]);
      expect(await activeLeaseCount(caller.tokenId)).toBe(0);
    }
    console.log(`revocation racing dispatch, per round (resume code : job states) [${db().kind}]: ${outcomes.join("  ")}`);
  });

  async function activeLeaseCount(tokenId: string): Promise<number> {
    return (await db().handle.db.select().from(leases).where(sql`${leases.ownerId} = ${tokenId} and ${leases.releasedAt} is null`)).length;
  }

  it("revocation denies held approvals, cancels queued jobs and releases leases, all sealed; a running job is told to stop (cancel/1 by token_revoked)", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const hostA = await insertHost(d);
    const hostB = await insertHost(d);
    const caller = await insertToken(d);
    const other = await insertToken(d);
    // A running job (claimed by the guest) on host A, a queued one on host B, a held one.
    const running = await submitAction(deps, caller, { operation: "run_command", arguments: { host: hostA.name, command: "ls" }, channel: "mcp" }, { waitMs: 0 });
    expect((await claimJob(d, hostA.id, "test-executor"))?.id).toBe(running.job.id);
    await ackJob(d, hostA.id, running.job.id);
    const queued = await submitAction(deps, caller, { operation: "run_command", arguments: { host: hostB.name, command: "ls" }, channel: "mcp" }, { waitMs: 0 });
    const held = await rejectionOf(submitAction(deps, caller, { operation: "run_command", arguments: { host: hostB.name, command: "touch x" }, channel: "mcp" }, { waitMs: 0 }));
    const othersHeld = await rejectionOf(submitAction(deps, other, { operation: "run_command", arguments: { host: hostB.name, command: "touch y" }, channel: "mcp" }, { waitMs: 0 }));
    const activeLeases = async (tokenId: string) => d.select().from(leases).where(sql`${leases.ownerId} = ${tokenId} and ${leases.releasedAt} is null`);
    expect((await activeLeases(caller.tokenId)).length).toBeGreaterThan(0);

    const result = await revokeToken(d, caller.tokenId, "cli");
    expect(result.ended).toEqual({ approvalsDenied: 1, jobsCancelled: 1, leasesReleased: (await d.select().from(leases).where(eq(leases.ownerId, caller.tokenId))).length, jobsRunning: 1 });

    expect((await getApproval(d, String(held.details?.["approval_id"])))?.state).toBe("denied");
    expect((await getApproval(d, String(othersHeld.details?.["approval_id"])))?.state).toBe("pending");
    expect((await jobsOf(queued.action_id))[0]?.state).toBe("cancelled");
    expect(await actionState(d, queued.action_id)).toBe("failed");
    expect(await claimJob(d, hostB.id, "test-executor")).toBeNull();
    expect((await jobsOf(running.action_id))[0]?.state).toBe("claimed");
    expect(await activeLeases(caller.tokenId)).toHaveLength(0);

    const entries = await allEntries(d);
    const kinds = entries.map((e) => (e.type === "job/1" ? `job:${e.data.event}:${e.action_id}` : e.type === "approval/1" ? `approval:${e.data.outcome}:${e.action_id}` : e.type === "lease/1" ? `lease:${e.data.event}` : e.type === "token/1" ? `token:${e.data.event}` : ""));
    expect(kinds).toContain("token:revoked");
    expect(kinds).toContain(`job:cancelled:${queued.action_id}`);
    expect(kinds).toContain(`approval:denied:${String(held.details?.["action_id"])}`);
    // The running job stays the guest's until its result comes; its next heartbeat answer says stop.
    const stop = entries.find((e) => e.type === "cancel/1" && e.action_id === running.action_id);
    expect(stop?.type === "cancel/1" ? { stage: stop.data.stage, by: stop.data.by } : null).toEqual({ stage: "running", by: "token_revoked" });
    expect(await beat(d, hostA.id, running.job.id)).toEqual({ alive: true, stop: true });
    const tokenLeases = new Set((await d.select().from(leases).where(eq(leases.ownerId, caller.tokenId))).map((l) => l.id));
    expect(entries.filter((e) => e.type === "lease/1" && e.data.event === "revoked" && tokenLeases.has(e.data.lease_id)).length).toBe(result.ended.leasesReleased);
  });
});
