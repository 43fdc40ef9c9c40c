import { randomBytes } from "node:crypto";
import type { Database } from "../../db";
import { appendEntry } from "../append";
import { digestOf, hashActor } from "../entry";
import { generateSignerKey, parseSignerKey } from "../../trust/ledger/note";
import type { LogKey } from "../log-key";

/** A log key held in memory (the data-dir file is tested separately). */
export function memoryLogKey(origin = `test.invalid/leasehold/${randomBytes(4).toString("hex")}`): LogKey {
  const { signer } = generateSignerKey(origin);
  const parsed = parseSignerKey(signer);
  if (!parsed.ok) throw new Error(parsed.reason);
  return { origin, signer: parsed.key, verifier: parsed.key.verifierText };
}

/** Appends a distinct, valid admin/1 entry; `tag` makes its bytes unique. */
export function appendTestEntry(db: Database, tag: string): Promise<bigint> {
  return appendEntry(db, {
    type: "admin/1",
    time: new Date(),
    action_id: null,
    actor: hashActor("system", "ledger-test"),
    data: { operation: "test.append", target_digest: digestOf(tag), settings_digest: null },
  });
}
