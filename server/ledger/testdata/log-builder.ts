import { signCheckpoint } from "../../trust/ledger/checkpoint";
import { ENTRY_TYPES, encodeEntry, type EntryInput } from "../entry";
import type { ExportCheckpoint, ExportEntry, ExportSource } from "../export-format";
import { hashLeaf } from "../../trust/ledger/hash";
import { MemoryNodeStore, extendTree, EMPTY_FRONTIER } from "../../trust/ledger/tree";
import { cosign } from "../../trust/ledger/witness";
import { sampleEntries } from "./fixtures";

/** Entry i of a synthetic log: the sample entries in turn, each with its own action id and time. */
export function syntheticEntry(i: number): Uint8Array {
  const samples = sampleEntries();
  const type = ENTRY_TYPES[i % ENTRY_TYPES.length]!;
  const sample = samples[type];
  const time = new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString();
  return encodeEntry({ ...sample, time, action_id: sample.action_id === null ? null : `act_${i}` } as EntryInput);
}

export interface BuiltLog {
  source: ExportSource;
  entries: ExportEntry[];
  checkpoints: ExportCheckpoint[];
  store: MemoryNodeStore;
  roots: Map<number, Uint8Array>;
}

/**
 * A log as the hub would hold it: entries, the node store the integrator
 * wrote, signed checkpoints at the given sizes and (optionally) witness
 * cosignatures on each.
 */
export function buildLog(options: {
  origin: string;
  logSigner: string;
  logVerifier: string;
  size: number;
  checkpointSizes: number[];
  witnesses?: Array<{ signer: string; verifier: string }>;
  entryBytes?: (i: number) => Uint8Array;
}): BuiltLog {
  const make = options.entryBytes ?? syntheticEntry;
  const entries: ExportEntry[] = [];
  const store = new MemoryNodeStore();
  const roots = new Map<number, Uint8Array>();
  const sizes = new Set(options.checkpointSizes);
  let frontier = EMPTY_FRONTIER;
  if (sizes.has(0)) roots.set(0, extendTree(frontier, []).root);
  for (let i = 0; i < options.size; i++) {
    const bytes = make(i);
    const leafHash = hashLeaf(bytes);
    entries.push({ index: i, bytes, leafHash });
    const result = extendTree(frontier, [leafHash]);
    store.put(result.newNodes);
    frontier = result.frontier;
    if (sizes.has(i + 1)) roots.set(i + 1, result.root);
  }
  const checkpoints = [...sizes]
    .sort((a, b) => a - b)
    .map((size): ExportCheckpoint => {
      const root = roots.get(size);
      if (root === undefined) throw new Error(`no root for size ${size}`);
      const note = signCheckpoint({ origin: options.origin, size, root, extensions: [] }, options.logSigner);
      const body = note.slice(0, note.lastIndexOf("\n\n") + 1);
      const cosignatures = (options.witnesses ?? []).map((w, k) => ({ witnessKey: w.verifier, line: cosign(body, w.signer, 1_750_000_000 + size + k) }));
      return { note, cosignatures };
    });
  return {
    source: { origin: options.origin, logKey: options.logVerifier, entries, checkpoints },
    entries,
    checkpoints,
    store,
    roots,
  };
}
