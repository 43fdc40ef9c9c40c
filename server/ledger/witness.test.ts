import { createPublicKey, verify } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signCheckpoint } from "../trust/ledger/checkpoint";
import { parseVerifierKey, parseSignatureLine } from "../trust/ledger/note";
import { consistencyProof } from "../trust/ledger/proof";
import { buildLog, syntheticEntry } from "./testdata/log-builder";
import { addCosignature, cosign, cosignatureMessage, generateCosignerKey, initialWitnessState, verifyCosignature, witnessCosign, type WitnessState } from "../trust/ledger/witness";
import { generateSignerKey } from "../trust/ledger/note";

const ORIGIN = "leasehold.test/log";
const log = generateSignerKey(ORIGIN);
const witness = generateCosignerKey("host-1.leasehold.test/witness");

describe("tlog-cosignature/v1", () => {
  const body = `${ORIGIN}\n5\n${Buffer.alloc(32, 1).toString("base64")}\n`;

  it("signs keyid ‖ big-endian timestamp ‖ Ed25519 over the spec's message", () => {
    const line = cosign(body, witness.signer, 1679315147);
    const parsed = parseSignatureLine(line);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const key = parseVerifierKey(witness.verifier);
    if (!key.ok) throw new Error(key.reason);
    expect(parsed.signature.keyIdHex).toBe(key.key.keyIdHex);
    expect(parsed.signature.signature).toHaveLength(72);
    expect(Buffer.from(parsed.signature.signature.subarray(0, 8)).readBigUInt64BE()).toBe(1679315147n);
    expect(cosignatureMessage(body, 1679315147)).toBe(`cosignature/v1\ntime 1679315147\n${body}`);
    // Independent check with node:crypto directly.
    const spki = Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), key.key.publicKey]);
    const ok = verify(null, Buffer.from(cosignatureMessage(body, 1679315147)), createPublicKey({ key: spki, format: "der", type: "spki" }), parsed.signature.signature.subarray(8));
    expect(ok).toBe(true);
    expect(verifyCosignature(body, line, witness.verifier)).toMatchObject({ ok: true, timestamp: 1679315147 });
  });

  it("rejects another body, another key, a note key, or a future timestamp", () => {
    const line = cosign(body, witness.signer, 100);
    expect(verifyCosignature(body.replace("\n5\n", "\n6\n"), line, witness.verifier).ok).toBe(false);
    expect(verifyCosignature(body, line, generateCosignerKey("host-1.leasehold.test/witness").verifier).ok).toBe(false);
    expect(verifyCosignature(body, line, log.verifier).ok).toBe(false);
    expect(verifyCosignature(body, line, witness.verifier, { now: 99 }).ok).toBe(false);
    expect(verifyCosignature(body, line, witness.verifier, { now: 99, maxSkewSeconds: 5 }).ok).toBe(true);
    expect(() => cosign(body, log.signer, 1)).toThrow(/0x04/);
  });

  it("adds a cosignature line to a signed checkpoint", () => {
    const note = signCheckpoint({ origin: ORIGIN, size: 5, root: Buffer.alloc(32, 1), extensions: [] }, log.signer);
    const cosigned = addCosignature(note, cosign(body, witness.signer, 7));
    expect(cosigned.split("\n— ")).toHaveLength(3);
  });
});

describe("witness", () => {
  const built = buildLog({ origin: ORIGIN, logSigner: log.signer, logVerifier: log.verifier, size: 60, checkpointSizes: [10, 25, 60] });
  const note = (size: number): string => built.checkpoints.find((c) => c.note.includes(`\n${size}\n`))!.note;
  const now = (): number => 1_750_000_000;

  async function advance(state: WitnessState, size: number): Promise<WitnessState> {
    const proof = await consistencyProof(state.size, size, built.store);
    const result = witnessCosign(state, note(size), proof, log.verifier, witness.signer, now);
    if (!result.ok) throw new Error(result.reason);
    expect(verifyCosignature(note(size).slice(0, note(size).lastIndexOf("\n\n") + 1), result.line, witness.verifier).ok).toBe(true);
    return result.state;
  }

  it("cosigns a log that only grows", async () => {
    let state = initialWitnessState(ORIGIN);
    state = await advance(state, 10);
    state = await advance(state, 25);
    state = await advance(state, 25);
    state = await advance(state, 60);
    expect(state.size).toBe(60);
  });

  it("refuses a smaller tree (truncation)", async () => {
    const state = await advance(initialWitnessState(ORIGIN), 25);
    const result = witnessCosign(state, note(10), [], log.verifier, witness.signer, now);
    expect(result).toMatchObject({ ok: false, refusal: "smaller_size" });
  });

  it("refuses a rewritten log, at the same size or larger", async () => {
    const state = await advance(initialWitnessState(ORIGIN), 25);
    // The operator rewrites entry 7 and re-signs with the real log key.
    const rewritten = buildLog({
      origin: ORIGIN, logSigner: log.signer, logVerifier: log.verifier, size: 60, checkpointSizes: [25, 60],
      entryBytes: (i) => (i === 7 ? syntheticEntry(1007) : syntheticEntry(i)),
    });
    const sameSize = witnessCosign(state, rewritten.checkpoints[0]!.note, [], log.verifier, witness.signer, now);
    expect(sameSize).toMatchObject({ ok: false, refusal: "fork_at_same_size" });
    const proof = await consistencyProof(25, 60, rewritten.store);
    const larger = witnessCosign(state, rewritten.checkpoints[1]!.note, proof, log.verifier, witness.signer, now);
    expect(larger).toMatchObject({ ok: false, refusal: "inconsistent" });
  });

  it("refuses a bad log signature, another origin, or a proof for other sizes", async () => {
    const state = await advance(initialWitnessState(ORIGIN), 10);
    const impostor = generateSignerKey(ORIGIN);
    const forged = signCheckpoint({ origin: ORIGIN, size: 25, root: built.roots.get(25)!, extensions: [] }, impostor.signer);
    const proof = await consistencyProof(10, 25, built.store);
    expect(witnessCosign(state, forged, proof, log.verifier, witness.signer, now)).toMatchObject({ ok: false, refusal: "bad_log_signature" });
    expect(witnessCosign({ ...state, origin: "elsewhere" }, note(25), proof, log.verifier, witness.signer, now)).toMatchObject({ ok: false, refusal: "unknown_origin" });
    const wrongProof = await consistencyProof(9, 25, built.store);
    expect(witnessCosign(state, note(25), wrongProof, log.verifier, witness.signer, now)).toMatchObject({ ok: false, refusal: "inconsistent" });
    expect(witnessCosign(state, note(25), proof.slice(1), log.verifier, witness.signer, now)).toMatchObject({ ok: false, refusal: "inconsistent" });
  });
});
