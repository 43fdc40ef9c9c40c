import { ledgerEntries } from "../db/schema";
import type { Database } from "../db";
import { LeaseholdError } from "../errors";
import { tryEncodeEntry, type EntryInput } from "./entry";
import { ledgerCounters } from "./metrics";

/**
 * Appends one entry to the log.
 *
 * Durability contract: the returned id means the entry is committed (the
 * INSERT's transaction is durable on a server with fsync and
 * synchronous_commit on, which the hub checks at start). Any failure throws
 * LEDGER_UNAVAILABLE — there is no "maybe written" — and a caller recording
 * a step of an action must not take that step when this throws.
 *
 * Each append is a single-row INSERT into an append-only table: no shared
 * row is updated, so concurrent appends never queue on one lock. Leaf
 * indices are assigned later by the integrator.
 */
export async function appendEntry(db: Database, input: EntryInput): Promise<bigint> {
  const encoded = tryEncodeEntry(input);
  const counters = ledgerCounters();
  if (!encoded.ok) {
    counters.appendsFailed += 1;
    throw new LeaseholdError("INVALID_ARGUMENT", `ledger entry rejected: ${encoded.reason}`, { tier: "ledger" });
  }
  const started = performance.now();
  let id: bigint | undefined;
  try {
    const [row] = await db.insert(ledgerEntries).values({ body: encoded.bytes }).returning({ id: ledgerEntries.id });
    id = row?.id;
  } catch (error) {
    counters.appendsFailed += 1;
    throw new LeaseholdError("LEDGER_UNAVAILABLE", `ledger append failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`, {
      tier: "ledger",
      hint: "the step it records was not taken; retry when the database is back",
      cause: error,
    });
  }
  if (id === undefined) {
    counters.appendsFailed += 1;
    throw new LeaseholdError("LEDGER_UNAVAILABLE", "ledger append returned no id", { tier: "ledger" });
  }
  counters.appendsAccepted += 1;
  if (performance.now() - started > 250) counters.appendsSlow += 1;
  return id;
}
