/**
 * The actions list and detail, on both databases, over actions made by the
 * real pipeline and completed through the real result intake (a host key
 * signs the evidence, the integrator signs a checkpoint): search, the ledger
 * timeline, neutralised output, the re-verified envelope (and its failure
 * after a row is changed), the approval and the receipt.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { buildLaunchEvidence, generateHostKeyPair, signEvidence, type LaunchReadback } from "../trust/evidence";
import { resumeAction, submitAction } from "../actions";
import { approve, listApprovals } from "../approvals";
import type { Database } from "../db";
import { approvals, evidence, hosts } from "../db/schema";
import { claimJob } from "../dispatch";
import { ackJob } from "../jobs";
import { LeaseholdError } from "../errors";
import { receiveJobResult, receiveOutputChunk } from "../jobs/intake";
import { integrateOnce } from "../ledger/integrate";
import { loadOrCreateLogKey } from "../ledger/log-key";
import { describeEachDatabase } from "../../test/support/databases";
import { insertAdmin, insertToken, testDeps, uniqueName } from "../../test/pipeline/support";
import { actionDetail, likePattern, listActions } from ".";

const readback = {
  exit: { code: 0, signal: null, timed_out: false, oom_killed: false },
  timing: { started_at: "2026-01-01T00:00:00.000Z", ended_at: "2026-01-01T00:00:01.000Z", cpu_ms: 1 },
  enforcement: { namespaces: ["user", "mnt"], cgroup: { memory_max: 1 << 20, pids_max: 10, memsw_max: null }, seccomp: true, landlock_abi: 6 },
  limitations: [],
} as unknown as LaunchReadback;

const logKey = loadOrCreateLogKey(mkdtempSync(path.join(tmpdir(), "lh-records-")), "http://localhost:8700");

async function enrolledHost(d: Database) {
  const keys = generateHostKeyPair();
  const publicKeyPem = keys.publicKey.export({ type: "spki", format: "pem" }).toString();
  const [row] = await d.insert(hosts).values({ name: uniqueName("host"), publicKey: publicKeyPem }).returning();
  if (row === undefined) throw new Error("no host");
  return { host: { id: row.id, name: row.name, publicKeyPem }, keys };
}

/** Plays the guest: claims the job, streams `stdout`, posts signed evidence covering it; then the integrator runs. */
async function runAsGuest(d: Database, h: Awaited<ReturnType<typeof enrolledHost>>, actionId: string, actionHash: string, stdout: Buffer): Promise<void> {
  const job = await claimJob(d, h.host.id, "test-guest");
  if (job === null) throw new Error("no job to claim");
  await ackJob(d, h.host.id, job.id);
  await receiveOutputChunk(d, h.host, job.id, { stream: "stdout", seq: 0, data: stdout.toString("base64") });
  const envelope = buildLaunchEvidence({
    action_id: actionId,
    action_hash: actionHash,
    host_id: h.host.id,
    producer: { capability: "shell", version: "1.0.0" },
    launch: readback,
    bpf: { tier: "C", attached: false },
    artifacts: [{ name: "stdout", content: stdout, truncated: false }],
    redactions: { count: 0, kinds: [] },
  });
  await receiveJobResult(d, h.host, job.id, { kind: "ran", evidence: signEvidence(envelope, h.keys.privateKey), streams: {}, structured: null, error: null });
  expect((await integrateOnce(d, logKey)).kind).toBe("integrated");
}

async function notFound(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LeaseholdError) return error.code;
    throw error;
  }
  return "resolved";
}

it("likePattern takes LIKE's wildcards and escape literally", () => {
  expect(likePattern("50%_a\\b")).toBe("%50\\%\\_a\\\\b%");
});

describeEachDatabase("actions list and detail", (db) => {
  it("an auto-allowed command run by a guest: found by its command text and token name; detail has timeline, neutralised output, verified evidence and receipt", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const h = await enrolledHost(d);
    const caller = await insertToken(d);
    const marker = uniqueName("dash-marker");
    const outcome = await submitAction(deps, caller, { operation: "run_command", arguments: { host: h.host.name, command: `echo ${marker}` }, channel: "mcp" }, { waitMs: 0 });
    expect(outcome.decision).toBe("auto_allow");
    // Output with an OSC 52 clipboard write: shown escaped, never as a control sequence.
    await runAsGuest(d, h, outcome.action_id, outcome.action_hash, Buffer.from(`\x1b]52;c;cHduZWQ=\x07${marker}\n`));

    const byCommand = await listActions(d, { query: marker });
    expect(byCommand.items.map((i) => i.id)).toEqual([outcome.action_id]);
    expect(byCommand.items[0]).toMatchObject({ operation: "run_command", host: h.host.name, decision: "auto_allow", state: "completed", risk: "read_only", exit_code: 0, summary: `echo ${marker}` });
    const [token] = await db().handle.db.execute(sql`select name from agent_tokens where id = ${caller.tokenId}`).then((r) => ("rows" in (r as object) ? (r as { rows: Array<{ name: string }> }).rows : (r as unknown as Array<{ name: string }>)));
    expect((await listActions(d, { query: token?.name ?? "?" })).items.map((i) => i.id)).toContain(outcome.action_id);
    expect((await listActions(d, { query: h.host.name.toUpperCase() })).items.map((i) => i.id)).toEqual([outcome.action_id]);
    expect((await listActions(d, { query: `${marker}%` })).items).toEqual([]);

    const detail = await actionDetail(d, outcome.action_id);
    // The compiled policy's network, shown beside the arguments (run_command has none).
    expect(detail.network).toEqual({ mode: "none" });
    expect(detail.timeline.map((e) => e.type)).toEqual(["decision/1", "lease/1", "dispatch/1", "evidence/1"]);
    expect(detail.timeline.every((e) => e.leaf_index !== null && e.invalid === null)).toBe(true);
    const stdout = detail.output.find((s) => s.name === "stdout");
    expect(stdout?.controls).toBe(true);
    expect(stdout?.text).toBe(`\\x1b]52;c;cHduZWQ=\\x07${marker}\n`);
    expect(detail.evidence?.verified).toBe(true);
    expect(detail.evidence?.checks.map((c) => [c.name, c.ok])).toEqual([["signature", true], ["digest", true], ["binding", true], ["artifacts", true], ["sealed", true]]);
    expect(detail.evidence?.checks[0]?.detail).toContain(`host ${h.host.name}'s key`);
    expect(detail.receipt?.verified).toBe(true);
    expect(detail.receipt?.entry_type).toBe("evidence/1");
    expect(detail.receipt?.receipt.leaf_index).toBe(detail.timeline[3]?.leaf_index);
    expect(detail.exit?.code).toBe(0);
    expect(detail.approval).toBeNull();
  });

  it("hostile row edit: an envelope changed in the database after intake fails its signature check; the other checks say what still holds", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const h = await enrolledHost(d);
    const caller = await insertToken(d);
    const outcome = await submitAction(deps, caller, { operation: "run_command", arguments: { host: h.host.name, command: "echo tamper-me" }, channel: "mcp" }, { waitMs: 0 });
    await runAsGuest(d, h, outcome.action_id, outcome.action_hash, Buffer.from("fine\n"));
    expect((await actionDetail(d, outcome.action_id)).evidence?.verified).toBe(true);
    await d.execute(sql`update evidence set envelope = jsonb_set(envelope, '{exit,code}', '1'::jsonb) where action_id = ${outcome.action_id}`);
    const detail = await actionDetail(d, outcome.action_id);
    expect(detail.evidence?.verified).toBe(false);
    expect(detail.evidence?.checks.find((c) => c.name === "signature")).toMatchObject({ ok: false, detail: expect.stringContaining("signature does not verify") });
    expect(detail.evidence?.checks.find((c) => c.name === "binding")?.ok).toBe(true);
    // The row itself is still the edited one: the view changed nothing.
    const [row] = await d.select({ envelope: evidence.envelope }).from(evidence).where(eq(evidence.actionId, outcome.action_id));
    expect((row?.envelope as { exit: { code: number } }).exit.code).toBe(1);
  });

  it("a held action approved with a reason: the approval names who, when and why, and whether a passkey assertion is stored", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const h = await enrolledHost(d);
    const admin = await insertAdmin(d);
    const caller = await insertToken(d, { createdBy: "someone-else" });
    const request = { operation: "run_command", arguments: { host: h.host.name, command: "rm -rf ./build-dash" }, channel: "mcp" as const };
    const held = await submitAction(deps, caller, request, { waitMs: 0 }).catch((e: unknown) => e as LeaseholdError);
    expect((held as LeaseholdError).code).toBe("APPROVAL_PENDING");
    const actionId = String((held as LeaseholdError).details?.["action_id"]);
    expect((await listActions(d, { query: "build-dash" })).items[0]?.decision).toBe("pending");
    const listed = (await listApprovals(d)).find((a) => a.action_id === actionId);
    await approve(d, String(listed?.id), admin, "cleanup is fine", { expectedActionHash: listed?.action_hash });
    const outcome = await resumeAction(deps, caller, actionId, { waitMs: 1000 });
    await runAsGuest(d, h, actionId, outcome.action_hash, Buffer.from(""));

    const detail = await actionDetail(d, actionId);
    expect(detail.decision).toBe("approved");
    expect(detail.approval).toMatchObject({ state: "approved", decided_by: admin.username, reason: "cleanup is fine", assertion_stored: false, passkey: { status: "absent" } });
    expect(detail.timeline.map((e) => e.type)).toEqual(["decision/1", "approval/1", "lease/1", "dispatch/1", "evidence/1"]);
    expect((await listActions(d, { query: "approved" })).items.map((i) => i.id)).toContain(actionId);

    await d.update(approvals).set({ assertion: { credential_id: "cred-1", signature: "x" } }).where(eq(approvals.actionId, actionId));
    // A stored assertion is checked, not taken on trust: one naming no registered passkey fails.
    expect((await actionDetail(d, actionId)).approval).toMatchObject({ assertion_stored: true, passkey: { status: "failed", credential_id: "cred-1", detail: "no registered passkey has this credential id" } });
  });

  it("paging: limit and offset walk the list newest first without overlap; bad pages and unknown ids are refused", async () => {
    const d = db().handle.db;
    // Three actions of its own, so there are pages to walk whatever ran before (the cases run in any order).
    const deps = testDeps(db().handle);
    const h = await enrolledHost(d);
    const caller = await insertToken(d);
    for (let i = 0; i < 3; i++) {
      await submitAction(deps, caller, { operation: "run_command", arguments: { host: h.host.name, command: `echo page-${i}` }, channel: "mcp" }, { waitMs: 0 });
    }
    const first = await listActions(d, { limit: 2 });
    const second = await listActions(d, { limit: 2, offset: 2 });
    expect(first.total).toBeGreaterThanOrEqual(3);
    expect(first.has_more).toBe(true);
    expect(first.items.length).toBe(2);
    expect(second.items.map((i) => i.id).filter((id) => first.items.some((f) => f.id === id))).toEqual([]);
    expect(Date.parse(first.items[1]!.created_at)).toBeGreaterThanOrEqual(Date.parse(second.items[0]!.created_at));
    expect(await notFound(listActions(d, { limit: 0 }))).toBe("INVALID_ARGUMENT");
    expect(await notFound(actionDetail(d, "00000000-0000-4000-8000-000000000000"))).toBe("NOT_FOUND");
    expect(await notFound(actionDetail(d, "not-a-uuid"))).toBe("NOT_FOUND");
  });
});

describeEachDatabase("actions list and detail: caller-chosen text is shown escaped", (db) => {
  it("hostile: a bidi override and a zero-width space in the host name, the token name and the command appear as visible escapes in the list and the detail, never raw", async () => {
    const d = db().handle.db;
    const h = await enrolledHost(d);
    const token = await insertToken(d, { createdBy: "someone-else" });
    await d.execute(sql`update agent_tokens set name = ${"ci\u200bbot\u2066"} where id = ${token.tokenId}`);
    const marker = uniqueName("bidi");
    const held = await submitAction(testDeps(db().handle), token, { operation: "run_command", arguments: { host: h.host.name, command: `echo ${marker} ftm\u202eexe.sh` }, channel: "mcp" }, { waitMs: 0 }).catch((e: unknown) => e);
    expect(held).toBeInstanceOf(LeaseholdError);
    // Host names are checked at enrolment; a row changed behind the hub's back is still shown escaped.
    await d.update(hosts).set({ name: `${h.host.name}\u202e1bew` }).where(eq(hosts.id, h.host.id));
    const RAW = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}]/u;
    const page = await listActions(d, { query: marker });
    const item = page.items[0];
    expect(item).toMatchObject({ host: `${h.host.name}\\u202e1bew`, requester: { kind: "token", name: "ci\\u200bbot\\u2066" }, summary: `echo ${marker} ftm\\u202eexe.sh` });
    expect(JSON.stringify(item)).not.toMatch(RAW);
    const detail = await actionDetail(d, item!.id);
    expect(detail.host).toBe(`${h.host.name}\\u202e1bew`);
    expect(detail.requester.name).toBe("ci\\u200bbot\\u2066");
  });
});
