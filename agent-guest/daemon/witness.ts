/**
 * The guest as a ledger witness. It keeps the last checkpoint it cosigned
 * (witness.json), fetches a consistency proof from that size to the hub's
 * newest checkpoint, and cosigns only if the log's signature (pinned key)
 * and the proof verify (server/ledger/witness.ts `witnessCosign`). Its new
 * state is stored durably before the cosignature is released. A failed
 * check is final for this guest: it reports it on hub health and stops
 * taking jobs — a hub whose log was truncated or rewritten does not get to
 * run things here.
 */
import { decodeBase64Strict, encodeBase64 } from "../../server/ledger/base64";
import { parseVerifierKey } from "../../server/ledger/note";
import { initialWitnessState, witnessCosign, type WitnessState } from "../../server/ledger/witness";
import { loadWitnessState, saveWitnessState } from "./state";

export type WitnessStep = { kind: "cosigned"; size: number } | { kind: "unchanged"; size: number } | { kind: "failed"; reason: string } | { kind: "unreachable"; reason: string };

export class Witness {
  private state: WitnessState;

  constructor(
    private readonly stateDir: string,
    private readonly hub: string,
    private readonly logKey: string,
    private readonly signer: string,
  ) {
    const parsed = parseVerifierKey(logKey);
    if (!parsed.ok) throw new Error(`pinned log key is invalid: ${parsed.reason}`);
    const stored = loadWitnessState(stateDir);
    const root = stored === null ? undefined : decodeBase64Strict(stored.root);
    this.state = stored !== null && root !== undefined ? { origin: stored.origin, size: stored.size, root } : initialWitnessState(parsed.key.name);
  }

  get size(): number {
    return this.state.size;
  }

  async step(): Promise<WitnessStep> {
    let proof: { to_size: number; proof: string[]; checkpoint: string };
    try {
      const res = await fetch(`${this.hub}/api/ledger/proof/consistency?from=${this.state.size}`, { signal: AbortSignal.timeout(10_000) });
      if (res.status === 404) return { kind: "unchanged", size: this.state.size };
      if (!res.ok) {
        const body = (await res.json().catch(() => null)) as { code?: string; message?: string } | null;
        // A hub that cannot prove consistency from what we cosigned (e.g. our size is beyond its tree) is a failed check.
        if (res.status === 400) return { kind: "failed", reason: `hub cannot prove consistency from size ${this.state.size}: ${body?.message ?? res.status}` };
        return { kind: "unreachable", reason: `consistency proof: HTTP ${res.status}` };
      }
      proof = (await res.json()) as typeof proof;
    } catch (error) {
      return { kind: "unreachable", reason: error instanceof Error ? error.message : String(error) };
    }
    if (proof.to_size === this.state.size && this.state.size > 0) {
      const result = witnessCosign(this.state, proof.checkpoint, [], this.logKey, this.signer);
      return result.ok ? { kind: "unchanged", size: this.state.size } : { kind: "failed", reason: result.reason };
    }
    const hashes: Uint8Array[] = [];
    for (const element of proof.proof) {
      const hash = decodeBase64Strict(element);
      if (hash === undefined) return { kind: "failed", reason: "consistency proof element is not canonical base64" };
      hashes.push(hash);
    }
    const result = witnessCosign(this.state, proof.checkpoint, hashes, this.logKey, this.signer);
    if (!result.ok) return { kind: "failed", reason: `${result.refusal}: ${result.reason}` };
    // Durable state first, then the cosignature leaves.
    saveWitnessState(this.stateDir, { origin: result.state.origin, size: result.state.size, root: encodeBase64(result.state.root) });
    this.state = result.state;
    try {
      const res = await fetch(`${this.hub}/api/ledger/cosignature`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ size: result.checkpoint.size, line: result.line }),
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) return { kind: "unreachable", reason: `cosignature not accepted: HTTP ${res.status}` };
    } catch (error) {
      return { kind: "unreachable", reason: error instanceof Error ? error.message : String(error) };
    }
    return { kind: "cosigned", size: result.checkpoint.size };
  }
}
