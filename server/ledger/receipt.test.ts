import { describe, expect, it } from "vitest";
import { generateSignerKey } from "../trust/ledger/note";
import { buildReceipt, verifyReceipt } from "./receipt";
import { buildLog } from "./testdata/log-builder";

const ORIGIN = "leasehold.test/log";
const log = generateSignerKey(ORIGIN);
const built = buildLog({ origin: ORIGIN, logSigner: log.signer, logVerifier: log.verifier, size: 40, checkpointSizes: [40] });
const note = built.checkpoints[0]!.note;

describe("receipts", () => {
  it("prove an entry is in the signed log", async () => {
    const receipt = await buildReceipt(17, 40, note, built.store);
    expect(verifyReceipt(built.entries[17]!.bytes, receipt, log.verifier)).toMatchObject({ ok: true, checkpoint: { size: 40 } });
  });

  it("fail for another entry, index, key or a bad proof", async () => {
    const receipt = await buildReceipt(17, 40, note, built.store);
    expect(verifyReceipt(built.entries[18]!.bytes, receipt, log.verifier).ok).toBe(false);
    expect(verifyReceipt(built.entries[17]!.bytes, { ...receipt, leaf_index: 16 }, log.verifier).ok).toBe(false);
    expect(verifyReceipt(built.entries[17]!.bytes, receipt, generateSignerKey(ORIGIN).verifier).ok).toBe(false);
    expect(verifyReceipt(built.entries[17]!.bytes, { ...receipt, inclusion_proof: receipt.inclusion_proof.slice(1) }, log.verifier).ok).toBe(false);
    expect(verifyReceipt(built.entries[17]!.bytes, { ...receipt, inclusion_proof: ["not base64!"] }, log.verifier).ok).toBe(false);
  });
});
