import { sql } from "drizzle-orm";
import { executeRows, type Database } from "../db";
import { LeaseholdError } from "../errors";
import { appendEntry } from "./append";
import { parseSignedCheckpoint } from "../trust/ledger/checkpoint";
import { digestOf } from "./entry";
import { parseSignatureLine, parseVerifierKey, SIGNATURE_TYPE } from "../trust/ledger/note";
import { checkpointAt } from "./prove";
import { verifyCosignature } from "../trust/ledger/witness";

export interface WitnessRecord {
  key_id: string;
  name: string;
  verifier_key: string;
}

/** Registers a witness whose cosignatures the hub will accept (sealed in the ledger). */
export async function registerWitness(db: Database, verifierKey: string, actor: string): Promise<WitnessRecord> {
  const parsed = parseVerifierKey(verifierKey);
  if (!parsed.ok) throw new LeaseholdError("INVALID_ARGUMENT", `witness key: ${parsed.reason}`, { tier: "ledger" });
  if (parsed.key.type !== SIGNATURE_TYPE.cosignatureV1) {
    throw new LeaseholdError("INVALID_ARGUMENT", "witness key must be a cosignature/v1 (type 0x04) verifier key", { tier: "ledger" });
  }
  const record = { key_id: parsed.key.keyIdHex, name: parsed.key.name, verifier_key: verifierKey };
  await appendEntry(db, {
    type: "admin/1",
    time: new Date(),
    action_id: null,
    actor,
    data: { operation: "ledger.witness_add", target_digest: digestOf(verifierKey), settings_digest: null },
  });
  await db.execute(
    sql`insert into ledger_witnesses (key_id, name, verifier_key) values (${record.key_id}, ${record.name}, ${verifierKey})
        on conflict (key_id) do update set removed_at = null`,
  );
  return record;
}

export async function listWitnesses(db: Database): Promise<WitnessRecord[]> {
  return executeRows<{ key_id: string; name: string; verifier_key: string } & Record<string, unknown>>(
    db,
    sql`select key_id, name, verifier_key from ledger_witnesses where removed_at is null order by name`,
  );
}

/**
 * Accepts a witness's cosignature on the checkpoint of `size`. The witness
 * did the hard part (consistency from what it last cosigned); the hub checks
 * the cosignature is by a registered witness over exactly the checkpoint it
 * signed at that size and stores it beside that checkpoint. A second
 * cosignature by the same witness on the same size is accepted and ignored
 * (the first is kept), so a witness may safely resubmit.
 */
export async function submitCosignature(db: Database, size: number, line: string): Promise<{ witness: string; timestamp: number }> {
  if (!Number.isSafeInteger(size) || size < 0) throw new LeaseholdError("INVALID_ARGUMENT", "size must be a non-negative integer", { tier: "ledger" });
  const signature = parseSignatureLine(line);
  if (!signature.ok) throw new LeaseholdError("INVALID_ARGUMENT", `cosignature line: ${signature.reason}`, { tier: "ledger" });
  const note = await checkpointAt(db, size);
  if (!note) throw new LeaseholdError("NOT_FOUND", `no checkpoint at tree size ${size}`, { tier: "ledger" });
  const [witness] = await executeRows<{ key_id: string; verifier_key: string }>(
    db,
    sql`select key_id, verifier_key from ledger_witnesses where key_id = ${signature.signature.keyIdHex} and removed_at is null`,
  );
  if (!witness) throw new LeaseholdError("FORBIDDEN", `no registered witness has key id ${signature.signature.keyIdHex}`, { tier: "ledger" });
  const parsed = parseSignedCheckpoint(note);
  if (!parsed.ok) throw new LeaseholdError("INTERNAL", `stored checkpoint at ${size} is unparseable: ${parsed.reason}`, { tier: "ledger" });
  const check = verifyCosignature(parsed.body, line, witness.verifier_key, { now: Math.floor(Date.now() / 1000), maxSkewSeconds: 300 });
  if (!check.ok) throw new LeaseholdError("FORBIDDEN", `cosignature refused: ${check.reason}`, { tier: "ledger" });
  // Stored beside the checkpoint it cosigns (C2SP tlog-cosignature), never
  // appended to the log: an entry would make a new checkpoint for the
  // witness to cosign, so an idle log would grow by one entry per witness
  // round and its newest checkpoint would never carry a cosignature. The
  // line authenticates itself, so storing it needs no seal.
  await db.execute(
    sql`insert into ledger_cosignatures (tree_size, witness_name, witness_key_id, signature_line)
        values (${BigInt(size)}, ${check.witness.name}, ${witness.key_id}, ${line})
        on conflict (tree_size, witness_key_id) do nothing`,
  );
  return { witness: check.witness.name, timestamp: check.timestamp };
}

// Served with checkpoints, so it lives with them in prove.ts.
export { cosignaturesAt } from "./prove";
