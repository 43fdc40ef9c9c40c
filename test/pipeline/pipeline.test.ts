import { describe, expect, it } from "vitest";
import { createCapabilityRegistry } from "../../server/capabilities";
import shellManifest from "../../server/capabilities/builtin/shell.json" with { type: "json" };
import { checkDeliveredJob } from "../../server/trust";
import { approve, deny, listApprovals } from "../../server/approvals";
import { submitAction, resumeAction, type ActionOutcome } from "../../server/actions";
import { claimJob, verifyJob } from "../../server/dispatch";
import { LeaseholdError } from "../../server/errors";
import { createGrant, listGrants } from "../../server/policy/grants";
import { describeEachDatabase } from "../support/databases";
import { codeOf } from "../support/refusals";
import { actionState, allEntries, completeJob, entriesOf, insertAdmin, insertHost, insertToken, testDeps, PASSKEY_OFF } from "./support";


async function pendingError(promise: Promise<unknown>): Promise<LeaseholdError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LeaseholdError) return error;
    throw error;
  }
  throw new Error("expected an error");
}

describeEachDatabase("action pipeline", (db) => {
  it("auto-allows a read-only command, dispatches a signed job, and a test executor claims it", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const caller = await insertToken(db().handle.db);
    const outcome = await submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "ls -la" }, channel: "mcp" }, { waitMs: 0 });
    expect(outcome.decision).toBe("auto_allow");
    expect(outcome.risk.level).toBe("read_only");
    expect(outcome.action_hash).toMatch(/^sha256:[0-9a-f]{64}$/);

    const job = await claimJob(db().handle.db, host.id, "test-executor");
    expect(job?.id).toBe(outcome.job.id);
    expect(verifyJob(job?.document, job?.signature ?? "", deps.jobKey.publicKey)).toEqual({ ok: true });
    expect(job?.document.action_hash).toBe(outcome.action_hash);
    expect(job?.document.payload.sandbox.network).toEqual({ mode: "none" });
    // A tampered job is refused by the verifier.
    const tampered = structuredClone(job?.document) as NonNullable<typeof job>["document"];
    (tampered.action["arguments"] as Record<string, unknown>)["command"] = "rm -rf /";
    expect(verifyJob(tampered, job?.signature ?? "", deps.jobKey.publicKey).ok).toBe(false);
    expect(await claimJob(db().handle.db, host.id)).toBeNull();
    await completeJob(db().handle.db, outcome.job.id, { exit: 0 });
    expect(await actionState(db().handle.db, outcome.action_id)).toBe("completed");
  });

  it("a manifest that pins a worker digest puts it in the signed job's action (hashed); an unpinned one adds no field", async () => {
    const digest = `sha256:${"5c".repeat(32)}`;
    const pinnedRegistry = createCapabilityRegistry({ includeBuiltins: false, manifests: [{ source: "test:shell-pinned", manifest: { ...shellManifest, worker_digest: digest } }] });
    const host = await insertHost(db().handle.db);
    const caller = await insertToken(db().handle.db);
    const request = { operation: "run_command", arguments: { host: host.name, command: "ls" }, channel: "mcp" as const };
    const deps = { ...testDeps(db().handle), registry: pinnedRegistry };
    const pinned = await submitAction(deps, caller, request, { waitMs: 0 });
    const job = await claimJob(db().handle.db, host.id, "test-executor");
    expect(job?.id).toBe(pinned.job.id);
    expect(job?.document.action["capability"]).toEqual({ id: "shell", version: "1.0.0", worker_digest: digest });
    const checked = checkDeliveredJob({ id: job!.id, document: job!.document, signature: job!.signature }, { jobKey: deps.jobKey.publicKey, hostId: host.id, now: Date.now() });
    expect(checked.ok && checked.job.capability.worker_digest).toBe(digest);
    await completeJob(db().handle.db, pinned.job.id, { exit: 0 });
    const plain = await submitAction(testDeps(db().handle), caller, request, { waitMs: 0 });
    const plainJob = await claimJob(db().handle.db, host.id, "test-executor");
    expect(plainJob?.id).toBe(plain.job.id);
    expect(plainJob?.document.action["capability"]).toEqual({ id: "shell", version: "1.0.0" });
    await completeJob(db().handle.db, plain.job.id, { exit: 0 });
  });

  it("holds a risky action, wakes on approval, and seals every step in order", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const admin = await insertAdmin(db().handle.db);
    const caller = await insertToken(db().handle.db, { createdBy: "someone-else" });
    const request = { operation: "run_command", arguments: { host: host.name, command: "rm -rf ./build" }, channel: "mcp" as const };

    const pending = await pendingError(submitAction(deps, caller, request, { waitMs: 50 }));
    expect(pending.code).toBe("APPROVAL_PENDING");
    const actionId = String(pending.details?.["action_id"]);
    expect(pending.details?.["risk"]).toBe("high");

    const listed = (await listApprovals(db().handle.db)).find((a) => a.action_id === actionId);
    expect(listed?.operation).toBe("run_command");
    const waiting = resumeAction(deps, caller, actionId, { waitMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await approve(db().handle.db, String(listed?.id), admin, "looks fine", { expectedActionHash: listed?.action_hash });
    const outcome: ActionOutcome = await waiting;
    expect(Date.now() - started).toBeLessThan(1500);
    expect(outcome.decision).toBe("approved");

    const entries = await entriesOf(db().handle.db, actionId);
    const steps = entries.map((entry) => `${entry.type}${"outcome" in entry.data ? `:${String(entry.data.outcome)}` : ""}${"event" in entry.data ? `:${String(entry.data.event)}` : ""}`);
    console.log(`ledger entries of one held-then-approved action [${db().kind}]:\n${entries.map((e, i) => `  ${i + 1}. ${steps[i]} ${JSON.stringify(e.data)}`).join("\n")}`);
    expect(steps).toEqual(["decision/1:hold", "approval/1:approved", "lease/1:acquired", "dispatch/1"]);
    expect(new Set(entries.map((e) => ("action_hash" in e.data ? e.data.action_hash : outcome.action_hash)))).toEqual(new Set([outcome.action_hash]));
  });

  it("denial and expiry are final and sealed", async () => {
    const deps = testDeps(db().handle);
    // Short enough to expire within the test, long enough that a slow submission still returns pending first.
    const expiring = testDeps(db().handle, { approvalTtlMs: 1500 });
    const host = await insertHost(db().handle.db);
    const admin = await insertAdmin(db().handle.db);
    const caller = await insertToken(db().handle.db);

    const first = await pendingError(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "touch a" }, channel: "mcp" }, { waitMs: 0 }));
    expect(first.code).toBe("APPROVAL_PENDING");
    const approvalId = String(first.details?.["approval_id"]);
    await deny(db().handle.db, approvalId, admin, "not now");
    expect(await codeOf(resumeAction(deps, caller, String(first.details?.["action_id"]), { waitMs: 0 }))).toBe("APPROVAL_DENIED");
    expect(await codeOf(approve(db().handle.db, approvalId, admin))).toBe("POLICY_REFUSED");

    const second = await pendingError(submitAction(expiring, caller, { operation: "run_command", arguments: { host: host.name, command: "touch b" }, channel: "mcp" }, { waitMs: 0 }));
    expect(second.code).toBe("APPROVAL_PENDING");
    // The wait ends at the expiry (an event), well before this bound.
    expect(await codeOf(resumeAction(expiring, caller, String(second.details?.["action_id"]), { waitMs: 15_000 }))).toBe("APPROVAL_EXPIRED");
    expect(await codeOf(approve(db().handle.db, String(second.details?.["approval_id"]), admin))).toBe("APPROVAL_EXPIRED");
    const outcomes = (await entriesOf(db().handle.db, String(second.details?.["action_id"]))).map((e) => (e.type === "approval/1" ? e.data.outcome : e.type));
    expect(outcomes).toEqual(["decision/1", "expired"]);
  });

  it("refuses a decision on a changed action and enforces four-eyes", async () => {
    const deps = testDeps(db().handle, { fourEyes: true });
    const host = await insertHost(db().handle.db);
    const owner = await insertAdmin(db().handle.db);
    const other = await insertAdmin(db().handle.db);
    const caller = await insertToken(db().handle.db, { createdBy: owner.id });
    const held = await pendingError(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "mkdir x" }, channel: "mcp" }, { waitMs: 0 }));
    const approvalId = String(held.details?.["approval_id"]);
    expect(await codeOf(approve(db().handle.db, approvalId, other, null, { expectedActionHash: `sha256:${"0".repeat(64)}` }))).toBe("POLICY_REFUSED");
    expect(await codeOf(approve(db().handle.db, approvalId, owner, null, { fourEyes: true }))).toBe("POLICY_REFUSED");
    // Tamper with the stored action: the hash no longer matches, so nobody can approve it.
    await db().handle.db.execute(
      (await import("drizzle-orm")).sql`update actions set prepared = jsonb_set(prepared, '{arguments,command}', '"rm -rf /"') where id = ${String(held.details?.["action_id"])}`,
    );
    expect(await codeOf(approve(db().handle.db, approvalId, other, null, { fourEyes: true }))).toBe("POLICY_REFUSED");
  });

  it("read-only tokens: mutating operations are refused before arguments or target are resolved", async () => {
    const deps = testDeps(db().handle);
    const caller = await insertToken(db().handle.db, { readOnly: true });
    // No such host and invalid arguments: the answer is still the read-only refusal.
    const error = await pendingError(submitAction(deps, caller, { operation: "run_command", arguments: { nonsense: true }, channel: "mcp" }, { waitMs: 0 }));
    expect(error.code).toBe("FORBIDDEN");
    expect(error.details?.["read_only"]).toBe(true);
    const refusals = (await allEntries(db().handle.db)).filter((e) => e.type === "refusal/1" && e.data.stage === "authenticate");
    expect(refusals.length).toBeGreaterThan(0);
    // Read-only operations still work for it.
    const host = await insertHost(db().handle.db);
    const outcome = await submitAction(deps, caller, { operation: "fs_read", arguments: { host: host.name, path: "notes.txt" }, channel: "mcp" }, { waitMs: 0 });
    expect(outcome.risk.level).toBe("read_only");
  });

  it("unknown host → NOT_FOUND; out-of-scope host → FORBIDDEN; bad arguments → INVALID_ARGUMENT; all sealed", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const scoped = await insertToken(db().handle.db, { hosts: ["elsewhere"] });
    const before = (await allEntries(db().handle.db)).filter((e) => e.type === "refusal/1").length;
    expect(await codeOf(submitAction(deps, scoped, { operation: "run_command", arguments: { host: "no-such-host", command: "ls" }, channel: "mcp" }, { waitMs: 0 }))).toBe("NOT_FOUND");
    expect(await codeOf(submitAction(deps, scoped, { operation: "run_command", arguments: { host: host.name, command: "ls" }, channel: "mcp" }, { waitMs: 0 }))).toBe("FORBIDDEN");
    expect(await codeOf(submitAction(deps, scoped, { operation: "run_command", arguments: { host: host.name, command: "ls", extra: 1 }, channel: "mcp" }, { waitMs: 0 }))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(submitAction(deps, scoped, { operation: "no_such_tool", arguments: {}, channel: "mcp" }, { waitMs: 0 }))).toBe("NOT_FOUND");
    const notReady = { ...deps, readiness: { check: () => Promise.resolve({ ready: false as const, reason: "no report" }) } };
    const any = await insertToken(db().handle.db);
    expect(await codeOf(submitAction(notReady, any, { operation: "run_command", arguments: { host: host.name, command: "ls" }, channel: "mcp" }, { waitMs: 0 }))).toBe("CAPABILITY_UNAVAILABLE");
    const after = (await allEntries(db().handle.db)).filter((e) => e.type === "refusal/1").length;
    expect(after - before).toBe(5);
  });

  it("critical is always held, even with a matching grant", async () => {
    const deps = testDeps(db().handle);
    const host = await insertHost(db().handle.db);
    const caller = await insertToken(db().handle.db);
    const admin = await insertAdmin(db().handle.db);
    // A grant whose pattern, env, stdin and cwd all match, with the highest ceiling a grant may have.
    const grant = await createGrant(db().handle.db, admin, { tool: "run_command", host: host.name, maxRisk: "high", uses: 5, expiresAt: new Date(Date.now() + 60_000), pattern: "rm -rf /" }, PASSKEY_OFF);
    const error = await pendingError(submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "rm -rf /" }, channel: "mcp" }, { waitMs: 0 }));
    expect(error.code).toBe("APPROVAL_PENDING");
    expect(error.details?.["risk"]).toBe("critical");
    expect((await listGrants(db().handle.db)).find((g) => g.id === grant.id)?.usesRemaining).toBe(5);
  });
});

describe("risk floors", () => {
  it("run_code is at least medium, fs_write at least low", async () => {
    const { assessActionRisk } = await import("../../server/policy/assess-action");
    expect((await assessActionRisk({ capability: "code", operation: { name: "run_code", mutating: true }, prepared: { language: "python3", code: "print(1)" } })).level).toBe("medium");
    expect((await assessActionRisk({ capability: "code", operation: { name: "run_code", mutating: true }, prepared: { language: "bash", code: "rm -rf /" } })).level).toBe("critical");
    expect((await assessActionRisk({ capability: "workspace", operation: { name: "fs_write", mutating: true }, prepared: { path: "a" } })).level).toBe("low");
    expect((await assessActionRisk({ capability: "shell", operation: { name: "run_command", mutating: true }, prepared: { command: "ls", env: { LD_PRELOAD: "/x.so" } } })).level).toBe("high");
    expect((await assessActionRisk({ capability: "mystery", operation: { name: "poke", mutating: true }, prepared: {} })).level).toBe("high");
  });
});
