/**
 * Result intake: the hub keeps only output the signed evidence covers. A
 * hostile (or broken) guest that posts output chunks and then an envelope
 * whose artifacts do not cover them is refused, and nothing is stored as
 * the job's result.
 */
import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { buildLaunchEvidence, buildRefusalEvidence, generateHostKeyPair, signEvidence, type LaunchReadback } from "../../agent-guest/evidence";
import type { Database } from "../db";
import { actions, evidence, hosts, jobOutputChunks, jobs } from "../db/schema";
import { LeaseholdError } from "../errors";
import { describeEachDatabase } from "../../test/support/databases";
import { uniqueName } from "../../test/pipeline/support";
import { readJobOutput, receiveJobResult, receiveOutputChunk } from "./intake";

const HASH = `sha256:${"ab".repeat(32)}`;

const readback: LaunchReadback = {
  exit: { code: 0, signal: null, timed_out: false, oom_killed: false },
  timing: { started_at: "2026-01-01T00:00:00.000Z", ended_at: "2026-01-01T00:00:01.000Z", cpu_ms: 1 },
  enforcement: { namespaces: ["user", "mnt"], cgroup: { memory_max: 1 << 20, pids_max: 10, memsw_max: null }, seccomp: true, landlock_abi: 6 },
  limitations: [],
} as unknown as LaunchReadback;

async function setup(db: Database) {
  const keys = generateHostKeyPair();
  const publicKeyPem = keys.publicKey.export({ type: "spki", format: "pem" }).toString();
  const [host] = await db.insert(hosts).values({ name: uniqueName("host"), publicKey: publicKeyPem }).returning();
  if (host === undefined) throw new Error("no host");
  const actionId = randomUUID();
  const jobId = randomUUID();
  await db.insert(actions).values({ id: actionId, channel: "mcp", callerKey: "token:test", operation: "run_command", capabilityId: "shell", hostId: host.id, actionHash: HASH, prepared: {}, riskLevel: "read_only", state: "dispatched" });
  await db.insert(jobs).values({ id: jobId, actionId, hostId: host.id, payload: { action_hash: HASH, action_id: actionId }, signature: "x", state: "claimed", deadline: new Date(Date.now() + 60_000), claimedBy: `host:${host.id}`, claimedAt: new Date(), heartbeatAt: new Date() });
  const common = { action_id: actionId, action_hash: HASH, host_id: host.id, producer: { capability: "shell", version: "1.0.0" } };
  return { host: { id: host.id, name: host.name, publicKeyPem }, keys, jobId, actionId, common };
}

async function refusal(promise: Promise<unknown>): Promise<LeaseholdError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LeaseholdError) return error;
    throw error;
  }
  throw new Error("expected the result to be refused");
}

describeEachDatabase("result intake: output must be covered by the evidence", (db) => {
  it("hostile guest: chunks posted, then an envelope with no artifacts → INVALID_ARGUMENT, job still claimed, no evidence stored", async () => {
    const d = db().handle.db;
    const s = await setup(d);
    await receiveOutputChunk(d, s.host, s.jobId, { stream: "stdout", seq: 0, data: Buffer.from("uncovered output").toString("base64") });
    const envelope = buildRefusalEvidence({ ...s.common, refusal: { code: "POLICY_REFUSED", message: "x" }, at: new Date() });
    const error = await refusal(receiveJobResult(d, s.host, s.jobId, { kind: "refused", evidence: signEvidence(envelope, s.keys.privateKey), streams: {}, structured: null, error: { code: "POLICY_REFUSED", message: "x" } }));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toMatch(/stdout is not covered by the evidence/);
    expect((await d.select().from(jobs).where(eq(jobs.id, s.jobId)))[0]?.state).toBe("claimed");
    expect(await d.select().from(evidence).where(eq(evidence.jobId, s.jobId))).toEqual([]);
    expect((await d.select().from(actions).where(eq(actions.id, s.actionId)))[0]?.state).toBe("dispatched");
  });

  it("hostile guest: stdout covered but a stderr chunk the envelope does not name → refused, nothing stored", async () => {
    const d = db().handle.db;
    const s = await setup(d);
    const out = Buffer.from("ok\n");
    await receiveOutputChunk(d, s.host, s.jobId, { stream: "stdout", seq: 0, data: out.toString("base64") });
    await receiveOutputChunk(d, s.host, s.jobId, { stream: "stderr", seq: 0, data: Buffer.from("smuggled").toString("base64") });
    const envelope = buildLaunchEvidence({ ...s.common, launch: readback, bpf: { tier: "C", attached: false }, artifacts: [{ name: "stdout", content: out, truncated: false }], redactions: { count: 0, kinds: [] } });
    const error = await refusal(receiveJobResult(d, s.host, s.jobId, { kind: "ran", evidence: signEvidence(envelope, s.keys.privateKey), streams: {}, structured: null, error: null }));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toMatch(/stderr is not covered by the evidence/);
    expect(await d.select().from(evidence).where(eq(evidence.jobId, s.jobId))).toEqual([]);
  });

  it("a refusal envelope with no artifacts and no chunks, and a run whose chunks match its artifacts, are stored", async () => {
    const d = db().handle.db;
    const refused = await setup(d);
    const envelope = buildRefusalEvidence({ ...refused.common, refusal: { code: "POLICY_REFUSED", message: "x" }, at: new Date() });
    expect(await receiveJobResult(d, refused.host, refused.jobId, { kind: "refused", evidence: signEvidence(envelope, refused.keys.privateKey), streams: {}, structured: null, error: { code: "POLICY_REFUSED", message: "x" } })).toEqual({ stored: true, duplicate: false });

    const ran = await setup(d);
    const out = Buffer.from("hello\n");
    await receiveOutputChunk(d, ran.host, ran.jobId, { stream: "stdout", seq: 0, data: out.toString("base64") });
    const launched = buildLaunchEvidence({ ...ran.common, launch: readback, bpf: { tier: "C", attached: false }, artifacts: [{ name: "stdout", content: out, truncated: false }, { name: "stderr", content: Buffer.alloc(0), truncated: false }], redactions: { count: 0, kinds: [] } });
    expect(await receiveJobResult(d, ran.host, ran.jobId, { kind: "ran", evidence: signEvidence(launched, ran.keys.privateKey), streams: {}, structured: null, error: null })).toEqual({ stored: true, duplicate: false });
    expect((await readJobOutput(d, ran.jobId))["stdout"]?.toString()).toBe("hello\n");
    expect(await d.select().from(jobOutputChunks).where(eq(jobOutputChunks.jobId, refused.jobId))).toEqual([]);
  });
});
