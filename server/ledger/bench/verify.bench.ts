/**
 * Ledger export + offline verification benchmark:
 *   npx tsx server/ledger/bench/verify.bench.ts [entries]
 *
 * Prints figures; asserts nothing (correctness lives in the tests). Each
 * figure is printed next to a baseline measured in the same run on the same
 * data — plain SHA-256 of every entry, and a plain read of the file — so the
 * numbers mean something on a busy or slow machine.
 */
import { hash } from "node:crypto";
import { createReadStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signCheckpoint } from "../../trust/ledger/checkpoint";
import { encodeEntry } from "../entry";
import { exportLines, writeLinesToFile, type ExportCheckpoint, type ExportEntry } from "../export-format";
import { hashLeaf } from "../../trust/ledger/hash";
import { generateSignerKey } from "../../trust/ledger/note";
import { consistencyProof, inclusionProof, verifyConsistency, verifyInclusion } from "../../trust/ledger/proof";
import { sampleEntries } from "../testdata/fixtures";
import { seededRandom } from "../../../test/support/random";
import { CompactRange, rootAt, type NodeKey, type NodeReader, type StoredNode } from "../../trust/ledger/tree";
import { verifyExport } from "../verify";
import { cosign, generateCosignerKey } from "../../trust/ledger/witness";
import { reportBench, type BenchFigure } from "../../../tools/lib/bench-report";

const N = Number(process.argv[2] ?? 1_000_000);
const CHECKPOINT_EVERY = 100_000;
const ORIGIN = "bench.leasehold.test/log";

/** Perfect-subtree hashes in one flat buffer per level: what a node table holds, without 2M small objects. */
class FlatNodeStore implements NodeReader {
  private levels: Uint8Array[] = [];
  private counts: number[] = [];

  put(node: StoredNode): void {
    let buffer = this.levels[node.level] ?? new Uint8Array(32 * 1024);
    const count = this.counts[node.level] ?? 0;
    if (node.index !== count) throw new Error("nodes must arrive in order");
    if ((count + 1) * 32 > buffer.length) {
      const grown = new Uint8Array(buffer.length * 2);
      grown.set(buffer);
      buffer = grown;
    }
    buffer.set(node.hash, count * 32);
    this.levels[node.level] = buffer;
    this.counts[node.level] = count + 1;
  }

  get(level: number, index: number): Uint8Array {
    if (index >= (this.counts[level] ?? 0)) throw new Error(`missing node ${level}/${index}`);
    return this.levels[level]!.subarray(index * 32, index * 32 + 32);
  }

  async getNodes(keys: readonly NodeKey[]): Promise<readonly Uint8Array[]> {
    return keys.map((k) => this.get(k.level, k.index));
  }
}

// Entry i: a real, schema-valid decision entry whose action id carries i in a
// fixed-width field, so building a million costs one encodeEntry plus a splice.
const template = Buffer.from(
  encodeEntry({ ...sampleEntries()["decision/1"], action_id: "act_0000000000" }),
);
const marker = template.indexOf("act_0000000000") + 4;
function entryBytes(i: number): Uint8Array {
  const bytes = Buffer.from(template);
  bytes.write(String(i).padStart(10, "0"), marker, "latin1");
  return bytes;
}

const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;
const fmt = (n: number): string => n.toLocaleString("en-US", { maximumFractionDigits: 1 });
const line = (label: string, value: string): void => console.log(`${label.padEnd(44)} ${value}`);

async function main(): Promise<void> {
  console.log(`ledger verify benchmark: ${fmt(N)} entries of ${template.length} bytes, checkpoint every ${fmt(CHECKPOINT_EVERY)}, node ${process.version}\n`);
  const log = generateSignerKey(ORIGIN);
  const witness = generateCosignerKey("witness.bench.leasehold.test");

  // Baseline: SHA-256 of every entry, nothing else (the floor for any verifier).
  let t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) hash("sha256", entryBytes(i), "buffer");
  const baselineHash = ms(t);
  line("baseline: sha256 of every entry", `${fmt(baselineHash)} ms`);
  const figures: BenchFigure[] = [{ name: "baseline: sha256 of every entry", value: baselineHash, unit: "ms" }];

  // Integration: leaf hashes, tree extension, node store writes, checkpoints.
  const store = new FlatNodeStore();
  const range = new CompactRange();
  const checkpoints: ExportCheckpoint[] = [];
  const put = (node: StoredNode): void => store.put(node);
  t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) {
    range.append(hashLeaf(entryBytes(i)), put);
    if (range.size % CHECKPOINT_EVERY === 0 || range.size === N) {
      const note = signCheckpoint({ origin: ORIGIN, size: range.size, root: range.root(), extensions: [] }, log.signer);
      const body = note.slice(0, note.lastIndexOf("\n\n") + 1);
      checkpoints.push({ note, cosignatures: [{ witnessKey: witness.verifier, line: cosign(body, witness.signer, 1_750_000_000) }] });
    }
  }
  const integrate = ms(t);
  line("integrate (leaf hash + tree + node store)", `${fmt(integrate)} ms  (${fmt((N / integrate) * 1000)} entries/s, ${(integrate / baselineHash).toFixed(2)}× baseline)`);
  figures.push({ name: "integrate (leaf hash + tree + node store)", value: integrate, unit: "ms", baseline: "sha256 of every entry", ratio: integrate / baselineHash });

  const dir = mkdtempSync(join(tmpdir(), "leasehold-bench-"));
  const file = join(dir, "export.jsonl");
  try {
    function* entries(): Generator<ExportEntry> {
      for (let i = 0; i < N; i++) yield { index: i, bytes: entryBytes(i), leafHash: store.get(0, i) };
    }
    t = process.hrtime.bigint();
    await writeLinesToFile(file, exportLines({ origin: ORIGIN, logKey: log.verifier, entries: entries(), checkpoints }));
    const write = ms(t);
    const size = statSync(file).size;
    line("export write", `${fmt(write)} ms  (${fmt(size / 1048576)} MiB)`);

    // Baseline: read the file and count newlines.
    t = process.hrtime.bigint();
    let newlines = 0;
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
      const buf = chunk as Buffer;
      for (let at = buf.indexOf(10); at >= 0; at = buf.indexOf(10, at + 1)) newlines += 1;
    }
    const baselineRead = ms(t);
    line("baseline: read file, count lines", `${fmt(baselineRead)} ms  (${fmt(newlines)} lines)`);
    figures.push({ name: "export write", value: write, unit: "ms" }, { name: "baseline: read file, count lines", value: baselineRead, unit: "ms" });

    t = process.hrtime.bigint();
    const report = await verifyExport(createReadStream(file, { highWaterMark: 1 << 20 }), log.verifier, { witnessKeys: [witness.verifier] });
    const verify = ms(t);
    line("verify (what `leasehold verify` does)", `${fmt(verify)} ms  ok=${report.ok}  (${(verify / baselineHash).toFixed(2)}× sha256 baseline)`);
    if (!report.ok) console.log("  failure:", report.failure);
    line("export write + verify", `${fmt(write + verify)} ms  (target < 10,000 ms)`);
    figures.push(
      { name: "verify (what `leasehold verify` does)", value: verify, unit: "ms", baseline: "sha256 of every entry", ratio: verify / baselineHash },
      { name: "verify vs reading the file", value: verify, unit: "ms", baseline: "read file, count lines", ratio: verify / baselineRead },
      { name: "export write + verify", value: write + verify, unit: "ms", goal: "< 10,000 ms for 1,000,000 entries" },
    );

    t = process.hrtime.bigint();
    const checked = await verifyExport(createReadStream(file, { highWaterMark: 1 << 20 }), log.verifier, { checkEntries: true });
    line("verify with checkEntries (schema per entry)", `${fmt(ms(t))} ms  ok=${checked.ok}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  // Proofs against the 1M-leaf store.
  const random = seededRandom(7);
  const root = range.root();
  const PROOFS = 10_000;
  const picks = Array.from({ length: PROOFS }, () => Math.floor(random() * N));
  t = process.hrtime.bigint();
  const proofs: Uint8Array[][] = [];
  for (const index of picks) proofs.push(await inclusionProof(index, N, store));
  const gen = ms(t);
  t = process.hrtime.bigint();
  let good = 0;
  for (let k = 0; k < PROOFS; k++) if (verifyInclusion(store.get(0, picks[k]!), picks[k]!, N, proofs[k]!, root).ok) good += 1;
  const ver = ms(t);
  line("inclusion proof generation (in-memory store)", `${fmt((gen / PROOFS) * 1000)} µs/proof  (${proofs[0]!.length} hashes)`);
  line("inclusion proof verification", `${fmt((ver / PROOFS) * 1000)} µs/proof  (${good}/${PROOFS} ok)`);

  const oldSizes = Array.from({ length: 1000 }, () => 1 + Math.floor(random() * (N - 1)));
  const oldRoots = await Promise.all(oldSizes.map((m) => rootAt(m, store)));
  t = process.hrtime.bigint();
  const cproofs: Uint8Array[][] = [];
  for (const m of oldSizes) cproofs.push(await consistencyProof(m, N, store));
  const cgen = ms(t);
  t = process.hrtime.bigint();
  let cgood = 0;
  for (let k = 0; k < oldSizes.length; k++) if (verifyConsistency(oldSizes[k]!, N, cproofs[k]!, oldRoots[k]!, root).ok) cgood += 1;
  const cver = ms(t);
  line("consistency proof generation", `${fmt((cgen / oldSizes.length) * 1000)} µs/proof`);
  line("consistency proof verification", `${fmt((cver / oldSizes.length) * 1000)} µs/proof  (${cgood}/${oldSizes.length} ok)`);
  figures.push(
    { name: "inclusion proof generation", value: (gen / PROOFS) * 1000, unit: "µs/proof" },
    { name: "inclusion proof verification", value: (ver / PROOFS) * 1000, unit: "µs/proof" },
    { name: "consistency proof generation", value: (cgen / oldSizes.length) * 1000, unit: "µs/proof" },
    { name: "consistency proof verification", value: (cver / oldSizes.length) * 1000, unit: "µs/proof" },
  );
  reportBench("verify", { entries: N, entry_bytes: template.length, node: process.version }, figures);
}

await main();
