/**
 * The guest as a ledger witness. It keeps the last checkpoint it cosigned
 * (witness.json), reads the hub's newest checkpoint, fetches a consistency
 * proof from its size to that one, and cosigns only if the log's signature
 * (pinned key) and the proof verify (server/trust/ledger/witness.ts
 * `witnessCosign`). The hub stores the cosignature beside the checkpoint
 * (never as a log entry) and serves it with the checkpoint. Its new
 * state is stored durably before the cosignature is released. A failed
 * check is final for this guest: it reports it on hub health and stops
 * taking jobs — a hub whose log was truncated or rewritten does not get to
 * run things here.
 */
import { decodeBase64Strict, encodeBase64 } from "../../server/trust/ledger/base64";
import { parseSignedCheckpoint } from "../../server/trust/ledger/checkpoint";
import { parseVerifierKey, toSigner, type NoteSignature, type SignerKey } from "../../server/trust/ledger/note";
import { initialWitnessState, witnessCosign, type WitnessState } from "../../server/trust/ledger/witness";
import { loadWitnessState, saveWitnessState } from "./state";

export type WitnessStep = { kind: "cosigned"; size: number } | { kind: "unchanged"; size: number } | { kind: "failed"; reason: string } | { kind: "unreachable"; reason: string };

/**
 * How often a guest looks at the hub's newest checkpoint. A checkpoint is
 * signed within about a second of an append, so the newest one carries this
 * guest's cosignature within a few seconds; an idle round is one small GET.
 */
export const WITNESS_INTERVAL_MS = 2_000;

export class Witness {
  private state: WitnessState;
  private readonly signerKey: SignerKey;

  constructor(
    private readonly stateDir: string,
    private readonly hub: string,
    private readonly logKey: string,
    private readonly signer: string,
  ) {
    const parsed = parseVerifierKey(logKey);
    if (!parsed.ok) throw new Error(`pinned log key is invalid: ${parsed.reason}`);
    this.signerKey = toSigner(signer);
    const stored = loadWitnessState(stateDir);
    const root = stored === null ? undefined : decodeBase64Strict(stored.root);
    this.state = stored !== null && root !== undefined ? { origin: stored.origin, size: stored.size, root } : initialWitnessState(parsed.key.name);
  }

  get size(): number {
    return this.state.size;
  }

  /**
   * One witness round: read the hub's newest checkpoint (with the
   * cosignatures it already carries); if it is larger than what this guest
   * cosigned, fetch a consistency proof to it and cosign; if it is the same
   * checkpoint but does not carry this guest's cosignature yet (a submission
   * that was lost, or a guest restarted before delivering), cosign it again
   * and resubmit. An idle log is left alone: cosignatures are stored beside
   * the checkpoint, not appended, so a round makes no new checkpoint.
   */
  async step(): Promise<WitnessStep> {
    let note: string;
    try {
      const res = await fetch(`${this.hub}/api/ledger/checkpoint`, { signal: AbortSignal.timeout(10_000) });
      if (res.status === 404) return { kind: "unchanged", size: this.state.size };
      if (!res.ok) return { kind: "unreachable", reason: `checkpoint: HTTP ${res.status}` };
      note = await res.text();
    } catch (error) {
      return { kind: "unreachable", reason: error instanceof Error ? error.message : String(error) };
    }
    // Parsed for routing only; witnessCosign verifies the log's signature before anything is believed.
    const parsed = parseSignedCheckpoint(note);
    if (!parsed.ok) return { kind: "failed", reason: `the hub's checkpoint is malformed: ${parsed.reason}` };
    const size = parsed.checkpoint.size;
    const hashes: Uint8Array[] = [];
    if (size === this.state.size) {
      if (this.carriesOurCosignature(parsed.signatures)) return { kind: "unchanged", size };
    } else if (size > this.state.size) {
      let proof: { to_size: number; proof: string[] };
      try {
        const res = await fetch(`${this.hub}/api/ledger/proof/consistency?from=${this.state.size}&to=${size}`, { signal: AbortSignal.timeout(10_000) });
        if (!res.ok) {
          const body = (await res.json().catch(() => null)) as { message?: string } | null;
          // A hub that cannot prove consistency from what we cosigned is a failed check.
          if (res.status === 400) return { kind: "failed", reason: `hub cannot prove consistency from size ${this.state.size}: ${body?.message ?? res.status}` };
          return { kind: "unreachable", reason: `consistency proof: HTTP ${res.status}` };
        }
        proof = (await res.json()) as typeof proof;
      } catch (error) {
        return { kind: "unreachable", reason: error instanceof Error ? error.message : String(error) };
      }
      if (proof.to_size !== size) return { kind: "unreachable", reason: `consistency proof is to size ${proof.to_size}, asked for ${size}` };
      for (const element of proof.proof) {
        const hash = decodeBase64Strict(element);
        if (hash === undefined) return { kind: "failed", reason: "consistency proof element is not canonical base64" };
        hashes.push(hash);
      }
    }
    // A smaller tree than we cosigned, a different root at our size or a bad proof is refused here.
    const result = witnessCosign(this.state, note, hashes, this.logKey, this.signer);
    if (!result.ok) return { kind: "failed", reason: `${result.refusal}: ${result.reason}` };
    // Durable state first, then the cosignature leaves.
    if (result.state.size !== this.state.size) {
      saveWitnessState(this.stateDir, { origin: result.state.origin, size: result.state.size, root: encodeBase64(result.state.root) });
    }
    this.state = result.state;
    try {
      const res = await fetch(`${this.hub}/api/ledger/cosignature`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ size: result.checkpoint.size, line: result.line }),
        signal: AbortSignal.timeout(10_000),
      });
      // Not delivered: the next round sees the checkpoint without our line and resubmits.
      if (!res.ok) return { kind: "unreachable", reason: `cosignature not accepted: HTTP ${res.status}` };
    } catch (error) {
      return { kind: "unreachable", reason: error instanceof Error ? error.message : String(error) };
    }
    return { kind: "cosigned", size: result.checkpoint.size };
  }

  private carriesOurCosignature(signatures: readonly NoteSignature[]): boolean {
    return signatures.some((s) => s.name === this.signerKey.name && s.keyIdHex === this.signerKey.keyIdHex);
  }
}
