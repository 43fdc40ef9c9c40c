/**
 * What a guest sends back for a job: scrubbed output chunks, then the signed
 * evidence envelope and the result. The hub believes nothing before the
 * envelope's signature verifies with the host key recorded at enrolment; it
 * then checks the envelope names this job's action, hash and host, that the
 * chunks it holds are exactly what the envelope's artifact digests cover
 * (every stored stream has an artifact with its sha256 and byte count; output
 * with no artifact — an envelope with none — is refused),
 * stores the envelope, seals `evidence/1` and completes the action — in one
 * transaction, conditional on the job still being claimed, so a retried
 * delivery (guest retry, hub restart) is stored once.
 */
import { createHash } from "node:crypto";
import { and, asc, eq, sql } from "drizzle-orm";
import { verifyEvidence, type EvidenceEnvelope } from "../trust/evidence/envelope";
import { executeRows, type Database } from "../db";
import { actions, evidence, jobOutputChunks, jobs } from "../db/schema";
import { isErrorCode, LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { hashActor } from "../ledger/entry";
import { recordNonce, REPLAYED_REASON, type AuthenticatedHost, type PendingNonce } from "../hosts/auth";
import { OUTPUT_CHUNK_BYTES, type GuestJobResult } from "../trust/protocol";
import { offerCompletion } from "./handoff";
import { hostPublicKey } from "../hosts/public-keys";
import { notifyOthersAtCommit } from "./notify";
import { actionTopic, wake } from "./wake";
import { stopWasRequested } from "./stop";
import { traceStage } from "../../common/trace/stage";

const STREAMS = new Set(["stdout", "stderr"]);

async function jobOf(db: Database, host: AuthenticatedHost, jobId: string) {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(jobId)) throw new LeaseholdError("NOT_FOUND", "no such job for this host", { tier: "hub" });
  const [job] = await db.select().from(jobs).where(and(eq(jobs.id, jobId), eq(jobs.hostId, host.id)));
  if (job === undefined) throw new LeaseholdError("NOT_FOUND", "no such job for this host", { tier: "hub" });
  return job;
}

/**
 * Bounds on stored job output (LEASEHOLD_OUTPUT_QUOTA_TOKEN_BYTES,
 * LEASEHOLD_OUTPUT_QUOTA_HOST_BYTES). Bytes are the chunks' decoded size.
 */
export interface OutputQuotas {
  /** Per caller (`actions.caller_key`: a token, or an admin), across hosts. */
  tokenBytes: number;
  /** Per host, across callers. */
  hostBytes: number;
}

export const DEFAULT_OUTPUT_QUOTAS: OutputQuotas = { tokenBytes: 256 * 1024 * 1024, hostBytes: 1024 * 1024 * 1024 };

// Decoded bytes of stored base64 chunks (padding makes it at most 2 bytes high per chunk).
const storedBytes = sql`coalesce(sum(octet_length(c.data) / 4 * 3), 0)::bigint`;

/** Deletes a finished job's stored chunks and records why on the job; its evidence and ledger digests stay. */
async function pruneJobOutput(tx: Database, jobId: string, reason: "quota_token" | "quota_host" | "retention"): Promise<void> {
  await tx.delete(jobOutputChunks).where(eq(jobOutputChunks.jobId, jobId));
  await tx.execute(
    sql`update jobs set result = coalesce(result, '{}'::jsonb) || jsonb_build_object('output_pruned_at', now()::text, 'output_pruned_by', ${reason}::text) where id = ${jobId}`,
  );
}

/**
 * Makes room for `need` more bytes within one quota scope by pruning the
 * output of the scope's oldest finished jobs (never a job still running).
 * RATE_LIMITED when even that is not enough: the running jobs' own output
 * already fills the quota.
 */
async function makeRoom(tx: Database, scope: { kind: "token"; callerKey: string } | { kind: "host"; hostId: string }, need: number, quota: number, jobId: string): Promise<void> {
  const within = scope.kind === "token" ? sql`a.caller_key = ${scope.callerKey}` : sql`j.host_id = ${scope.hostId}`;
  const [usage] = await executeRows<{ n: string | number }>(
    tx,
    sql`select ${storedBytes} as n from job_output_chunks c join jobs j on j.id = c.job_id join actions a on a.id = j.action_id where ${within}`,
  );
  let used = Number(usage?.n ?? 0);
  if (used + need <= quota) return;
  const oldest = await executeRows<{ id: string; n: string | number }>(
    tx,
    sql`select j.id, ${storedBytes} as n from job_output_chunks c join jobs j on j.id = c.job_id join actions a on a.id = j.action_id
        where ${within} and j.state not in ('queued', 'offered', 'claimed') and j.id <> ${jobId}
        group by j.id, j.completed_at order by j.completed_at nulls first, j.id limit 1000`,
  );
  for (const job of oldest) {
    await pruneJobOutput(tx, job.id, scope.kind === "token" ? "quota_token" : "quota_host");
    used -= Number(job.n);
    if (used + need <= quota) return;
  }
  const setting = scope.kind === "token" ? "LEASEHOLD_OUTPUT_QUOTA_TOKEN_BYTES" : "LEASEHOLD_OUTPUT_QUOTA_HOST_BYTES";
  throw new LeaseholdError("RATE_LIMITED", `stored output quota reached: ${used + need} bytes would pass ${setting}=${quota} for this ${scope.kind} (running jobs' output alone fills it)`, {
    tier: "hub",
    retryable: false,
    details: { quota: setting, quota_bytes: quota },
  });
}

/**
 * Stores one scrubbed chunk, within the output quotas: beyond the caller's or
 * the host's quota the oldest finished jobs' output is pruned first (their
 * envelopes and the ledger's digests stay); a chunk the running jobs' own
 * output leaves no room for is refused (RATE_LIMITED). One transaction under
 * per-host and per-caller advisory locks, so concurrent chunks count once.
 */
export async function receiveOutputChunk(db: Database, host: AuthenticatedHost, jobId: string, body: unknown, quotas: OutputQuotas = DEFAULT_OUTPUT_QUOTAS): Promise<{ stored: boolean }> {
  const { stream, seq, data } = (body ?? {}) as { stream?: unknown; seq?: unknown; data?: unknown };
  if (typeof stream !== "string" || !STREAMS.has(stream) || typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 0 || seq > 100_000 || typeof data !== "string") {
    throw new LeaseholdError("INVALID_ARGUMENT", "output chunk must be {stream: stdout|stderr, seq, data (base64)}", { tier: "hub" });
  }
  const bytes = Buffer.from(data, "base64");
  if (bytes.toString("base64") !== data || bytes.length > OUTPUT_CHUNK_BYTES) throw new LeaseholdError("INVALID_ARGUMENT", "chunk data must be canonical base64 of at most 256 KiB", { tier: "hub" });
  const job = await jobOf(db, host, jobId);
  if (job.state !== "claimed") return { stored: false };
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    const [owner] = await tx.select({ callerKey: actions.callerKey }).from(actions).where(eq(actions.id, job.actionId));
    const callerKey = owner?.callerKey ?? "unknown";
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`leasehold-output-host:${host.id}`}))`);
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`leasehold-output-caller:${callerKey}`}))`);
    const [held] = await tx
      .select({ seq: jobOutputChunks.seq })
      .from(jobOutputChunks)
      .where(and(eq(jobOutputChunks.jobId, jobId), eq(jobOutputChunks.stream, stream), eq(jobOutputChunks.seq, seq)));
    if (held !== undefined) return { stored: false };
    await makeRoom(tx, { kind: "host", hostId: host.id }, bytes.length, quotas.hostBytes, jobId);
    await makeRoom(tx, { kind: "token", callerKey }, bytes.length, quotas.tokenBytes, jobId);
    const rows = await tx.insert(jobOutputChunks).values({ jobId, stream, seq, data }).onConflictDoNothing().returning({ seq: jobOutputChunks.seq });
    return { stored: rows.length > 0 };
  });
}

/**
 * Prunes the stored output of jobs that finished longer ago than `retentionMs`
 * (LEASEHOLD_OUTPUT_RETENTION_S). Their evidence envelopes (with the output's
 * sha256 and size) and the sealed evidence/1 entries stay. Returns how many
 * jobs' output it pruned (at most `limit` per pass).
 */
export async function pruneExpiredOutput(db: Database, retentionMs: number, limit = 500): Promise<number> {
  const expired = await executeRows<{ id: string }>(
    db,
    sql`select distinct c.job_id as id from job_output_chunks c join jobs j on j.id = c.job_id
        where j.state not in ('queued', 'offered', 'claimed') and j.completed_at < now() - ${retentionMs} * interval '1 millisecond' limit ${limit}`,
  );
  for (const job of expired) {
    await db.transaction(async (tx) => pruneJobOutput(tx as unknown as Database, job.id, "retention"));
  }
  return expired.length;
}

/** The job's output as stored: concatenated chunks per stream. */
export async function readJobOutput(db: Database, jobId: string): Promise<Record<string, Buffer>> {
  const rows = await db.select().from(jobOutputChunks).where(eq(jobOutputChunks.jobId, jobId)).orderBy(asc(jobOutputChunks.stream), asc(jobOutputChunks.seq));
  const out: Record<string, Buffer[]> = {};
  for (const row of rows) (out[row.stream] ??= []).push(Buffer.from(row.data, "base64"));
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, Buffer.concat(v)]));
}

/** What actions.result.completion holds once the guest's result is stored. */
export interface StoredCompletion {
  /** `cancelled`: the hub asked the guest to stop it and the signed envelope says the lease was killed (`exit.cancelled`). */
  state: "completed" | "failed" | "cancelled";
  job_id: string;
  evidence_entry_id: string;
  envelope_digest: string;
  envelope: EvidenceEnvelope;
  key_id: string;
  /** The host's Ed25519 signature (base64) over JCS(envelope); absent on completions stored before it was kept here (it is in the evidence table). */
  signature?: string;
  structured: Record<string, unknown> | null;
  error: { code: string; message: string; details?: Record<string, unknown> } | null;
}

function invalid(message: string): never {
  throw new LeaseholdError("INVALID_ARGUMENT", `job result refused by the hub: ${message}`, { tier: "hub" });
}

function replayed(): never {
  throw new LeaseholdError("UNAUTHENTICATED", `host request refused: ${REPLAYED_REASON}`, { tier: "hub" });
}

/**
 * Stores a guest's result. `pendingNonce`: the signed request's nonce, not
 * yet recorded (auth.ts `deferNonce`); it is recorded as the first write of
 * the transaction that stores the result, so a replay — after, or racing
 * the original — stores nothing and is refused. Paths that store nothing
 * record it on its own (a replay of a delivered result is refused as one).
 */
// eslint-disable-next-line max-lines-per-function -- verify, store and seal one result in one transaction; the order of the checks is the contract
export async function receiveJobResult(db: Database, host: AuthenticatedHost, jobId: string, body: unknown, pendingNonce?: PendingNonce): Promise<{ stored: boolean; duplicate: boolean }> {
  const result = (body ?? {}) as Partial<GuestJobResult>;
  if (result.kind !== "ran" && result.kind !== "refused") invalid("kind must be ran or refused");
  const job = await jobOf(db, host, jobId);
  traceStage(job.actionId, "hub.result_received");
  if (job.state === "completed" || job.state === "failed") {
    if (pendingNonce !== undefined && !(await recordNonce(db, pendingNonce))) replayed();
    return { stored: true, duplicate: true };
  }
  if (job.state !== "claimed") {
    throw new LeaseholdError("INVALID_ARGUMENT", `job already ended as ${job.state === "lost" ? "unknown (its heartbeat was lost)" : job.state}; the result is not accepted`, {
      tier: "hub",
      details: { job_state: job.state },
    });
  }
  const verified = verifyEvidence(result.evidence, hostPublicKey(host.publicKeyPem));
  if (!verified.ok) invalid(`evidence: ${verified.reason}`);
  const envelope = verified.envelope;
  const document = job.payload as { action_hash: string; action_id: string };
  if (envelope.action_id !== job.actionId || envelope.action_hash !== document.action_hash || envelope.host_id !== host.id) {
    invalid("evidence names another action, action_hash or host");
  }
  // The chunks held must be exactly the bytes the envelope's digests cover: every stored
  // stream needs an artifact (a guest must not hand the hub output its evidence does not
  // vouch for, e.g. chunks and then an envelope with no artifacts), and every artifact's
  // bytes must be held.
  const output = await readJobOutput(db, jobId);
  const streamArtifacts = envelope.artifacts.filter((a) => STREAMS.has(a.name));
  if (new Set(streamArtifacts.map((a) => a.name)).size !== streamArtifacts.length) invalid("the envelope names a stream twice");
  for (const [name, bytes] of Object.entries(output)) {
    if (bytes.length > 0 && !streamArtifacts.some((a) => a.name === name)) {
      invalid(`stored ${name} is not covered by the evidence (${bytes.length} bytes held, no ${name} artifact in the envelope)`);
    }
  }
  for (const artifact of streamArtifacts) {
    const bytes = output[artifact.name] ?? Buffer.alloc(0);
    if (bytes.length !== artifact.bytes || createHash("sha256").update(bytes).digest("hex") !== artifact.sha256) {
      throw new LeaseholdError("INVALID_ARGUMENT", `job result refused by the hub: stored ${artifact.name} does not match the envelope digest (missing chunks?)`, {
        tier: "hub",
        retryable: true,
      });
    }
  }
  let error: StoredCompletion["error"] = null;
  if (result.kind === "refused") {
    const e = result.error;
    if (e === null || e === undefined || typeof e.code !== "string" || !isErrorCode(e.code) || typeof e.message !== "string") invalid("a refusal needs {code, message}");
    error = { code: e.code, message: e.message.slice(0, 2000), ...(e.details ? { details: e.details } : {}) };
  }
  const structured = result.structured !== null && typeof result.structured === "object" ? result.structured : null;
  // Cancelled only when both agree: the hub asked for the stop, and the host's signed envelope says it killed the lease.
  const stop = stopWasRequested(job.result) ? { stop: (job.result as { stop: unknown }).stop } : {};
  const cancelled = "stop" in stop && result.kind === "ran" && envelope.exit?.cancelled === true;
  const stored = await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Database;
    if (pendingNonce !== undefined && !(await recordNonce(tx, pendingNonce))) replayed();
    const [claimed] = await tx
      .update(jobs)
      .set({ state: result.kind === "ran" ? "completed" : "failed", completedAt: new Date(), result: { kind: result.kind, envelope_digest: verified.digest, ...stop } })
      .where(and(eq(jobs.id, jobId), eq(jobs.state, "claimed")))
      .returning({ id: jobs.id });
    if (claimed === undefined) return null;
    const signed = result.evidence as { signature: { key_id: string; sig: string } };
    const [inserted] = await tx
      .insert(evidence)
      .values({ actionId: job.actionId, jobId, hostId: host.id, envelope, envelopeSha256: verified.digest, signature: signed.signature.sig })
      .onConflictDoNothing()
      .returning({ id: evidence.id });
    if (inserted === undefined) {
      // This job already has its sealed evidence (a re-delivered job the guest refused as a replay):
      // the first result stands; the job goes back to what it was.
      await tx.update(jobs).set({ state: "completed" }).where(eq(jobs.id, jobId));
      return null;
    }
    const stdout = envelope.artifacts.filter((a) => /^[a-z][a-z0-9_]{0,31}$/.test(a.name)).slice(0, 16);
    const entryId = await appendEntry(tx, {
      type: "evidence/1",
      time: new Date(),
      action_id: job.actionId,
      actor: hashActor("host", host.id),
      data: {
        action_hash: envelope.action_hash as `sha256:${string}`,
        host_id: host.id,
        envelope_digest: verified.digest,
        state: envelope.state,
        tier: envelope.enforcement?.bpf?.tier ?? "C",
        exit_code: envelope.exit?.code ?? null,
        timed_out: envelope.exit?.timed_out ?? false,
        artifacts: stdout,
        redaction_count: envelope.redactions.count,
      },
    });
    const completion: StoredCompletion = {
      state: cancelled ? "cancelled" : result.kind === "ran" ? "completed" : "failed",
      job_id: jobId,
      evidence_entry_id: entryId.toString(),
      envelope_digest: verified.digest,
      envelope,
      key_id: signed.signature.key_id,
      signature: signed.signature.sig,
      structured,
      error,
    };
    // The completion joins what the action's result already holds, in the UPDATE itself (one round trip).
    await tx
      .update(actions)
      .set({ state: completion.state, result: sql`coalesce(${actions.result}, '{}'::jsonb) || jsonb_build_object('completion', ${JSON.stringify(completion)}::jsonb)`, updatedAt: new Date() })
      .where(eq(actions.id, job.actionId));
    await notifyOthersAtCommit(db, tx, actionTopic(job.actionId));
    return completion;
  });
  traceStage(job.actionId, "hub.sealed");
  if (stored !== null) offerCompletion(job.actionId, { completion: stored, output });
  wake(actionTopic(job.actionId));
  return { stored: true, duplicate: stored === null };
}
