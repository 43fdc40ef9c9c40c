/**
 * Result intake: the hub keeps only output the signed evidence covers. A
 * hostile (or broken) guest that posts output chunks and then an envelope
 * whose artifacts do not cover them is refused, and nothing is stored as
 * the job's result.
 */
import { randomBytes, randomUUID, sign } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { buildLaunchEvidence, buildRefusalEvidence, generateHostKeyPair, signEvidence, type LaunchReadback } from "../trust/evidence";
import type { Database } from "../db";
import { actions, evidence, hostRequestNonces, hosts, jobOutputChunks, jobs } from "../db/schema";
import { LeaseholdError } from "../errors";
import { describeEachDatabase } from "../../test/support/databases";
import { uniqueName } from "../../test/pipeline/support";
import { ledgerEntries } from "../db/schema";
import { decodeEntry } from "../ledger/entry";
import type { HubRuntime } from "../hub/runtime";
import { HEADER_HOST, HEADER_NONCE, HEADER_SIGNATURE, HEADER_TIMESTAMP, requestSigningString, sha256Hex } from "../trust";
import { serveResult } from "./http";
import { pruneExpiredOutput, readJobOutput, receiveJobResult, receiveOutputChunk } from "./intake";

const HASH = `sha256:${"ab".repeat(32)}`;

const readback: LaunchReadback = {
  exit: { code: 0, signal: null, timed_out: false, oom_killed: false },
  timing: { started_at: "2026-01-01T00:00:00.000Z", ended_at: "2026-01-01T00:00:01.000Z", cpu_ms: 1 },
  enforcement: { namespaces: ["user", "mnt"], cgroup: { memory_max: 1 << 20, pids_max: 10, memsw_max: null }, seccomp: true, landlock_abi: 6 },
  limitations: [],
} as unknown as LaunchReadback;

interface Setup {
  host: { id: string; name: string; publicKeyPem: string };
  keys: ReturnType<typeof generateHostKeyPair>;
  jobId: string;
  actionId: string;
  common: { action_id: string; action_hash: string; host_id: string; producer: { capability: string; version: string } };
}

async function setup(db: Database, options: { callerKey?: string; on?: Setup } = {}): Promise<Setup> {
  const keys = options.on?.keys ?? generateHostKeyPair();
  const publicKeyPem = keys.publicKey.export({ type: "spki", format: "pem" }).toString();
  const host: { id: string; name: string } | undefined =
    options.on !== undefined ? { id: options.on.host.id, name: options.on.host.name } : (await db.insert(hosts).values({ name: uniqueName("host"), publicKey: publicKeyPem }).returning())[0];
  if (host === undefined) throw new Error("no host");
  const actionId = randomUUID();
  const jobId = randomUUID();
  await db.insert(actions).values({ id: actionId, channel: "mcp", callerKey: options.callerKey ?? `token:${randomUUID()}`, operation: "run_command", capabilityId: "shell", hostId: host.id, actionHash: HASH, prepared: {}, riskLevel: "read_only", state: "dispatched" });
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

describeEachDatabase("result intake: the request's nonce is recorded in the transaction that stores the result", (db) => {
  const pending = (host: string) => ({ hostId: host, nonce: randomUUID().replaceAll("-", ""), expiresAt: new Date(Date.now() + 120_000) });
  const ranBody = (s: Setup) => ({
    kind: "ran",
    evidence: signEvidence(buildLaunchEvidence({ ...s.common, launch: readback, bpf: { tier: "C", attached: false }, artifacts: [], redactions: { count: 0, kinds: [] } }), s.keys.privateKey),
    streams: {},
    structured: null,
    error: null,
  });
  const evidenceRows = async (d: Database, s: Setup) => (await d.select().from(evidence).where(eq(evidence.jobId, s.jobId))).length;

  it("hostile: the same signed result request replayed after it was stored is refused as a replay, and nothing is stored twice", async () => {
    const d = db().handle.db;
    const s = await setup(d);
    const nonce = pending(s.host.id);
    expect(await receiveJobResult(d, s.host, s.jobId, ranBody(s), nonce)).toEqual({ stored: true, duplicate: false });
    const error = await refusal(receiveJobResult(d, s.host, s.jobId, ranBody(s), nonce));
    expect(error.code).toBe("UNAUTHENTICATED");
    expect(error.message).toMatch(/replayed request/);
    expect(await evidenceRows(d, s)).toBe(1);
    const [nonces] = await d.select().from(hostRequestNonces).where(and(eq(hostRequestNonces.hostId, s.host.id), eq(hostRequestNonces.nonce, nonce.nonce)));
    expect(nonces).toBeDefined();
  });

  it("hostile: two copies of one signed result request at once store it once; the other is refused as a replay", async () => {
    const d = db().handle.db;
    const s = await setup(d);
    const nonce = pending(s.host.id);
    const outcomes = await Promise.allSettled([receiveJobResult(d, s.host, s.jobId, ranBody(s), nonce), receiveJobResult(d, s.host, s.jobId, ranBody(s), nonce)]);
    const stored = outcomes.filter((o) => o.status === "fulfilled");
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
    expect(stored).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect((refused[0]!.reason as LeaseholdError).code).toBe("UNAUTHENTICATED");
    expect(await evidenceRows(d, s)).toBe(1);
  });

  it("a result refused for its content records no nonce, so the guest's corrected retry is not mistaken for a replay", async () => {
    const d = db().handle.db;
    const s = await setup(d);
    const nonce = pending(s.host.id);
    const wrongHost = { ...ranBody(s), evidence: signEvidence(buildRefusalEvidence({ ...s.common, host_id: randomUUID(), refusal: { code: "POLICY_REFUSED", message: "x" }, at: new Date() }), s.keys.privateKey) };
    expect((await refusal(receiveJobResult(d, s.host, s.jobId, wrongHost, nonce))).code).toBe("INVALID_ARGUMENT");
    expect(await d.select().from(hostRequestNonces).where(eq(hostRequestNonces.nonce, nonce.nonce))).toEqual([]);
    expect(await evidenceRows(d, s)).toBe(0);
  });
});

describeEachDatabase("POST /api/agent/jobs/:id/result (the route handler)", (db) => {
  it("hostile: the same signed request sent again is refused 401 as a replay; the result is stored once", async () => {
    const d = db().handle.db;
    const s = await setup(d);
    const path = `/api/agent/jobs/${s.jobId}/result`;
    const body = Buffer.from(
      JSON.stringify({
        kind: "ran",
        evidence: signEvidence(buildLaunchEvidence({ ...s.common, launch: readback, bpf: { tier: "C", attached: false }, artifacts: [], redactions: { count: 0, kinds: [] } }), s.keys.privateKey),
        streams: {},
        structured: null,
        error: null,
      }),
    );
    const timestamp = String(Date.now());
    const nonce = randomBytes(16).toString("hex");
    const signature = sign(null, Buffer.from(requestSigningString({ method: "POST", pathAndQuery: path, timestamp, nonce, bodySha256: sha256Hex(body) })), s.keys.privateKey).toString("base64");
    const request = () =>
      new Request(`http://hub.invalid${path}`, {
        method: "POST",
        headers: { [HEADER_HOST]: s.host.id, [HEADER_TIMESTAMP]: timestamp, [HEADER_NONCE]: nonce, [HEADER_SIGNATURE]: signature, "content-type": "application/json" },
        body,
      });
    const runtime = { database: { handle: db().handle } } as unknown as HubRuntime;
    const first = await serveResult(runtime, request(), s.jobId);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ stored: true, duplicate: false });
    const again = await serveResult(runtime, request(), s.jobId);
    expect(again.status).toBe(401);
    expect(JSON.stringify(await again.json())).toMatch(/replayed request/);
    expect(await d.select().from(evidence).where(eq(evidence.jobId, s.jobId))).toHaveLength(1);
  });
});

const KiB = 1024;
const chunk = (fill: string, seq: number, stream = "stdout") => ({ stream, seq, data: Buffer.alloc(200 * KiB, fill).toString("base64") });

/** Runs a job to completion with `chunks` of 200 KiB on stdout, through the real intake. */
async function finishedJob(d: Database, s: Setup, fills: string[], quotas?: { tokenBytes: number; hostBytes: number }): Promise<void> {
  for (const [i, fill] of fills.entries()) await receiveOutputChunk(d, s.host, s.jobId, chunk(fill, i), quotas);
  const out = Buffer.concat(fills.map((f) => Buffer.alloc(200 * KiB, f)));
  const envelope = buildLaunchEvidence({ ...s.common, launch: readback, bpf: { tier: "C", attached: false }, artifacts: [{ name: "stdout", content: out, truncated: false }], redactions: { count: 0, kinds: [] } });
  await receiveJobResult(d, s.host, s.jobId, { kind: "ran", evidence: signEvidence(envelope, s.keys.privateKey), streams: {}, structured: null, error: null });
}

async function sealedArtifacts(d: Database, actionId: string): Promise<unknown> {
  const rows = await d.select({ body: ledgerEntries.body }).from(ledgerEntries);
  const entry = rows.flatMap((r) => {
    const decoded = decodeEntry(r.body);
    return decoded.ok ? [decoded.entry] : [];
  }).find((e) => e.type === "evidence/1" && e.action_id === actionId);
  return entry?.type === "evidence/1" ? entry.data.artifacts : undefined;
}

const jobResult = async (d: Database, jobId: string) => (await d.select().from(jobs).where(eq(jobs.id, jobId)))[0]?.result as Record<string, unknown> | null;

describeEachDatabase("stored output quotas and retention", (db) => {
  it("beyond the token's quota the oldest finished job's output is pruned (its evidence and sealed digest stay); the new output is stored", async () => {
    const d = db().handle.db;
    const quotas = { tokenBytes: 600 * KiB, hostBytes: 100 * 1024 * KiB };
    const callerKey = `token:${randomUUID()}`;
    const old = await setup(d, { callerKey });
    await finishedJob(d, old, ["a", "b"], quotas);
    const digestBefore = await sealedArtifacts(d, old.actionId);
    const next = await setup(d, { callerKey });
    expect(await receiveOutputChunk(d, next.host, next.jobId, chunk("c", 0), quotas)).toEqual({ stored: true });
    expect(await receiveOutputChunk(d, next.host, next.jobId, chunk("d", 1), quotas)).toEqual({ stored: true });
    expect(await readJobOutput(d, old.jobId)).toEqual({});
    expect((await jobResult(d, old.jobId))?.["output_pruned_by"]).toBe("quota_token");
    expect((await readJobOutput(d, next.jobId))["stdout"]?.length).toBe(400 * KiB);
    // Evidence stays: the envelope with the pruned output's sha256 and size, and the sealed entry.
    const [kept] = await d.select().from(evidence).where(eq(evidence.jobId, old.jobId));
    expect((kept?.envelope as { artifacts: { name: string; bytes: number }[] }).artifacts).toEqual([expect.objectContaining({ name: "stdout", bytes: 400 * KiB })]);
    expect(await sealedArtifacts(d, old.actionId)).toEqual(digestBefore);
    expect(digestBefore).toEqual([expect.objectContaining({ name: "stdout", bytes: 400 * KiB })]);
  });

  it("a running job whose own output passes the quota is refused RATE_LIMITED naming the setting, and nothing more is stored", async () => {
    const d = db().handle.db;
    const quotas = { tokenBytes: 300 * KiB, hostBytes: 100 * 1024 * KiB };
    const s = await setup(d);
    expect(await receiveOutputChunk(d, s.host, s.jobId, chunk("a", 0), quotas)).toEqual({ stored: true });
    const error = await refusal(receiveOutputChunk(d, s.host, s.jobId, chunk("b", 1), quotas));
    expect(error.code).toBe("RATE_LIMITED");
    expect(error.message).toContain("LEASEHOLD_OUTPUT_QUOTA_TOKEN_BYTES");
    expect((await readJobOutput(d, s.jobId))["stdout"]?.length).toBe(200 * KiB);
  });

  it("the host's quota spans tokens: another token's oldest finished output on that host is pruned", async () => {
    const d = db().handle.db;
    const quotas = { tokenBytes: 100 * 1024 * KiB, hostBytes: 600 * KiB };
    const first = await setup(d);
    await finishedJob(d, first, ["a", "b"], quotas);
    const second = await setup(d, { on: first });
    expect(await receiveOutputChunk(d, second.host, second.jobId, chunk("c", 0), quotas)).toEqual({ stored: true });
    expect(await receiveOutputChunk(d, second.host, second.jobId, chunk("d", 1), quotas)).toEqual({ stored: true });
    expect(await readJobOutput(d, first.jobId)).toEqual({});
    expect((await jobResult(d, first.jobId))?.["output_pruned_by"]).toBe("quota_host");
  });

  it("retention prunes output of jobs finished longer ago than the setting; recent output and all evidence stay", async () => {
    const d = db().handle.db;
    const old = await setup(d);
    await finishedJob(d, old, ["a"]);
    const recent = await setup(d);
    await finishedJob(d, recent, ["b"]);
    await d.update(jobs).set({ completedAt: new Date(Date.now() - 2 * 3_600_000) }).where(eq(jobs.id, old.jobId));
    expect(await pruneExpiredOutput(d, 3_600_000)).toBeGreaterThanOrEqual(1);
    expect(await readJobOutput(d, old.jobId)).toEqual({});
    expect((await jobResult(d, old.jobId))?.["output_pruned_by"]).toBe("retention");
    expect((await readJobOutput(d, recent.jobId))["stdout"]?.length).toBe(200 * KiB);
    expect(await d.select().from(evidence).where(eq(evidence.jobId, old.jobId))).toHaveLength(1);
    expect(await sealedArtifacts(d, old.actionId)).toEqual([expect.objectContaining({ name: "stdout", bytes: 200 * KiB })]);
  });
});
