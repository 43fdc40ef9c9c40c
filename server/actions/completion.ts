/**
 * Waiting for a dispatched action to finish on its host, and what the
 * waiting caller gets: scrubbed output, exit, an evidence summary and a
 * ledger receipt (leaf index, inclusion proof, signed checkpoint) for the
 * `evidence/1` entry. The receipt needs the entry integrated; the waiter
 * asks the in-process integrator to flush (when there is one) and polls the
 * leaf index, bounded — on timeout the result carries `receipt: null` and
 * the entry id, never a made-up index.
 */
import { eq } from "drizzle-orm";
import type { ActionCompletion, ActionOutcome, CompletionWaiter, SubmitOptions } from "./types";
import type { DatabaseHandle } from "../db";
import { actions, evidence } from "../db/schema";
import { LeaseholdError, type ErrorPayload } from "../errors";
import { isErrorCode } from "../errors";
import type { RunningIntegrator } from "../ledger/integrate";
import { leafIndexOf, proveInclusion } from "../ledger/prove";
import { takeCompletion } from "../jobs/handoff";
import { readJobOutput, type StoredCompletion } from "../jobs/intake";
import { listenForHostWakeups } from "../jobs/notify";
import { actionTopic, onOutputProgress, subscribeTopic, type TopicSubscription } from "../jobs/wake";
import { traceStage } from "../../common/trace/stage";

const POLL_MS = 250;
const RECEIPT_WAIT_MS = 5_000;
export const MAX_OUTPUT_RETURNED = 1024 * 1024;

function errorFromPayload(payload: ErrorPayload): LeaseholdError {
  return new LeaseholdError(payload.code, payload.message, { retryable: payload.retryable, hint: payload.hint, tier: payload.tier, details: payload.details });
}

async function receiptFor(handle: DatabaseHandle, entryId: bigint, integrator: RunningIntegrator | undefined): Promise<ActionCompletion["receipt"]> {
  const until = Date.now() + RECEIPT_WAIT_MS;
  // The entry was sealed moments ago and integrators do not run per append (server/ledger/integrate.ts):
  // ask for the batch first instead of reading a leaf index that is not there yet.
  // (Only when this process integrates: a standby's flush would wait for a batch it never runs.)
  if (integrator !== undefined && integrator.status().state === "running") await integrator.flush(RECEIPT_WAIT_MS).catch(() => undefined);
  for (;;) {
    const remembered = await integrator?.receipt(entryId);
    if (remembered) return remembered;
    const index = await leafIndexOf(handle.db, entryId);
    if (index !== null) {
      // The newest checkpoint covers it (integration signs a checkpoint per batch).
      for (;;) {
        try {
          const proof = await proveInclusion(handle.db, index);
          return { leaf_index: proof.leaf_index, tree_size: proof.tree_size, inclusion_proof: proof.proof, checkpoint: proof.checkpoint };
        } catch (error) {
          if (Date.now() > until) throw error;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }
    if (Date.now() > until) return null;
    if (integrator !== undefined) await integrator.flush(Math.max(1, until - Date.now())).catch(() => undefined);
    else await new Promise((r) => setTimeout(r, 50));
  }
}

/** The host's signature over the envelope: kept in the completion, or (completions stored before that) in the evidence row. */
async function signatureOf(handle: DatabaseHandle, completion: StoredCompletion): Promise<ActionCompletion["evidence"]["signature"]> {
  let sig = completion.signature;
  if (sig === undefined) {
    const [row] = await handle.db.select({ signature: evidence.signature }).from(evidence).where(eq(evidence.jobId, completion.job_id)).limit(1);
    sig = row?.signature;
  }
  return sig === undefined ? null : { alg: "Ed25519", key_id: completion.key_id, sig };
}

/** What a caller is shown of a stored completion: output, exit, evidence summary with the signed envelope, receipt. */
export async function summariseCompletion(handle: DatabaseHandle, completion: StoredCompletion, integrator: RunningIntegrator | undefined, handedOutput?: Record<string, Buffer>): Promise<ActionCompletion> {
  const output = handedOutput ?? (await readJobOutput(handle.db, completion.job_id));
  const env = completion.envelope;
  const artifact = (name: string) => env.artifacts.find((a) => a.name === name);
  const inputs = env.artifacts.filter((a) => a.name === "input").map(({ name, sha256, bytes }) => ({ name, sha256, bytes }));
  const text = (name: string): string => {
    const bytes = output[name] ?? Buffer.alloc(0);
    return bytes.subarray(0, MAX_OUTPUT_RETURNED).toString("utf8");
  };
  return {
    state: completion.state,
    exit: env.exit ?? null,
    output: {
      stdout: text("stdout"),
      stderr: text("stderr"),
      stdout_bytes: artifact("stdout")?.bytes ?? 0,
      stderr_bytes: artifact("stderr")?.bytes ?? 0,
      stdout_truncated: artifact("stdout")?.truncated ?? false,
      stderr_truncated: artifact("stderr")?.truncated ?? false,
    },
    structured: completion.structured,
    evidence: {
      digest: completion.envelope_digest,
      key_id: completion.key_id,
      state: env.state,
      tier: env.enforcement?.bpf?.tier ?? null,
      // Which code produced the result, as the host verified it, and what it read.
      worker_digest: env.producer.worker_digest ?? null,
      ...(inputs.length === 0 ? {} : { inputs }),
      ...(env.enforcement?.bpf?.object_sha256 === undefined ? {} : { bpf_object_sha256: env.enforcement.bpf.object_sha256 }),
      // What the kernel refused is the agent's business too: it tells a misbehaving workload from a closed network.
      ...(env.enforcement?.bpf?.denials === undefined ? {} : { denials: env.enforcement.bpf.denials, denials_dropped: env.enforcement.bpf.denials_dropped ?? 0 }),
      ...(env.resolved_names === undefined ? {} : { resolved_names: env.resolved_names }),
      // Host paths the lease had, with the tree digests and snapshot id of each rw label (what a rollback names).
      ...(env.mounts === undefined ? {} : { mounts: env.mounts }),
      redactions: env.redactions,
      limitations: env.limitations,
      envelope: env,
      signature: await signatureOf(handle, completion),
    },
    ledger_entry_id: completion.evidence_entry_id,
    receipt: await receiptFor(handle, BigInt(completion.evidence_entry_id), integrator),
  };
}

const FINAL = new Set(["completed", "failed", "unknown", "cancelled"]);

export function createCompletionWaiter(handle: DatabaseHandle, integrator?: RunningIntegrator): CompletionWaiter {
  return {
    async wait(outcome: ActionOutcome, options: Pick<SubmitOptions, "signal" | "onProgress">): Promise<ActionOutcome> {
      // Subscribed before anything is awaited, so the completion's wake-up cannot slip past.
      const woken = subscribeTopic(actionTopic(outcome.action_id));
      await listenForHostWakeups(handle);
      // This process hears a progress report twice when it both relays and LISTENs: pass on changes only.
      let last = "";
      const stopListening = options.onProgress === undefined
        ? () => undefined
        : onOutputProgress(outcome.action_id, (p) => {
            const key = `${p.stdout_bytes}:${p.stderr_bytes}`;
            if (key === last) return;
            last = key;
            options.onProgress?.({ stage: "running", actionId: outcome.action_id, host: outcome.host, stdout_bytes: p.stdout_bytes, stderr_bytes: p.stderr_bytes });
          });
      try {
        return await waitForFinal(outcome, options, woken);
      } finally {
        woken.close();
        stopListening();
      }
    },
  };

  async function waitForFinal(outcome: ActionOutcome, options: Pick<SubmitOptions, "signal">, woken: TopicSubscription): Promise<ActionOutcome> {
    const deadline = Date.parse(outcome.job.deadline) + 30_000;
    // A job this very call queued (not a replay) has not run yet: the first read waits for its
    // wake-up (or the poll) instead of finding it still dispatched (one read per call).
    if (!outcome.replayed) await woken.wait(POLL_MS, options.signal);
    for (;;) {
      // Stored by this process's intake a moment ago (handoff.ts): not read back.
      const handed = takeCompletion(outcome.action_id);
      const [row] =
        handed === undefined
          ? await handle.db.select({ state: actions.state, result: actions.result }).from(actions).where(eq(actions.id, outcome.action_id))
          : [{ state: handed.completion.state, result: { completion: handed.completion } }];
      if (row === undefined) throw new LeaseholdError("NOT_FOUND", `action ${outcome.action_id} vanished`, { tier: "hub" });
      if (FINAL.has(row.state)) {
        const stored = (row.result ?? {}) as { completion?: StoredCompletion; error?: ErrorPayload };
        if (stored.completion !== undefined) {
          traceStage(outcome.action_id, "hub.woken");
          const completion = await summariseCompletion(handle, stored.completion, integrator, handed?.output);
          traceStage(outcome.action_id, "hub.receipt");
          if (stored.completion.state === "failed" && stored.completion.error !== null) {
            const e = stored.completion.error;
            throw new LeaseholdError(isErrorCode(e.code) ? e.code : "INTERNAL", e.message, {
              tier: "guest",
              details: { ...(e.details ?? {}), action_id: outcome.action_id, evidence: completion.evidence, receipt: completion.receipt },
            });
          }
          return { ...outcome, status: completion.state === "cancelled" ? "cancelled" : "completed", result: completion };
        }
        if (stored.error !== undefined) throw errorFromPayload(stored.error);
        throw new LeaseholdError("INTERNAL", `action ${outcome.action_id} ended as ${row.state} without a result`, { tier: "hub" });
      }
      if (options.signal?.aborted) throw new LeaseholdError("TIMEOUT", "the caller stopped waiting; the action continues on its host", { tier: "hub", details: { action_id: outcome.action_id } });
      if (Date.now() > deadline) throw new LeaseholdError("TIMEOUT", "the action passed its job deadline without a result", { tier: "hub", details: { action_id: outcome.action_id } });
      await woken.wait(POLL_MS, options.signal);
    }
  }
}
