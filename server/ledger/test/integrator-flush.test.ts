/**
 * The background integrator runs on demand: an append alone does
 * not start a batch — a flush does (or the poll) — and callers that flush
 * while no batch runs share one batch, which answers every one of them.
 */
import { expect, it } from "vitest";
import { describeEachDatabase } from "../../../test/support/databases";
import { startIntegrator } from "../integrate";
import { ledgerCounters } from "../metrics";
import { leafIndexOf, proveInclusion } from "../prove";
import { appendTestEntry, memoryLogKey } from "./fixtures";
import { countingTransactions } from "../../../test/support/count-transactions";

describeEachDatabase("the integrator integrates when asked", (db) => {
  // One log per database: the first batch pins its key.
  const key = memoryLogKey();
  it("an append waits for a flush (no batch per append); ten concurrent flushes are answered by at most two batches that cover all ten entries", async () => {
    const d = db().handle.db;
    // A poll far beyond the test: any batch here was asked for.
    const integrator = startIntegrator(d, key, { pollMs: 600_000 });
    try {
      await integrator.flush(10_000); // the first pass: whatever an earlier test left
      const first = await appendTestEntry(d, "alone");
      await new Promise((r) => setTimeout(r, 300));
      expect(await leafIndexOf(d, first)).toBeNull();

      const ids = [first];
      for (let i = 0; i < 9; i += 1) ids.push(await appendTestEntry(d, `entry ${i}`));
      const before = ledgerCounters().batchesIntegrated;
      await Promise.all(ids.map(() => integrator.flush(10_000)));
      const batches = ledgerCounters().batchesIntegrated - before;
      expect(batches).toBeGreaterThanOrEqual(1);
      expect(batches).toBeLessThanOrEqual(2);
      const indices = await Promise.all(ids.map((id) => leafIndexOf(d, id)));
      expect(indices.every((index) => index !== null)).toBe(true);
      expect(new Set(indices).size).toBe(10);
    } finally {
      await integrator.stop();
    }
  });

  it("a flush asked while a batch runs is answered by a later batch that sees the entry appended before it", async () => {
    const d = db().handle.db;
    const integrator = startIntegrator(d, key, { pollMs: 600_000 });
    try {
      await integrator.flush(10_000);
      await appendTestEntry(d, "first");
      const running = integrator.flush(10_000); // starts a batch
      const late = await appendTestEntry(d, "appended while that batch may run");
      await integrator.flush(10_000);
      await running;
      expect(await leafIndexOf(d, late)).not.toBeNull();
    } finally {
      await integrator.stop();
    }
  });

  it("an idle poll with nobody waiting runs no batch transaction, and an entry appended without a flush is still integrated by the poll", async () => {
    const d = db().handle.db;
    // The integrator's database, counting the transactions it opens (an empty batch is one).
    const counted = countingTransactions(d);
    const integrator = startIntegrator(counted.db, key, { pollMs: 20 });
    try {
      await integrator.flush(10_000);
      await new Promise((r) => setTimeout(r, 100)); // the poll after the flush finds the log idle
      counted.reset();
      await new Promise((r) => setTimeout(r, 500)); // ~25 polls
      expect(counted.count()).toBe(0);

      const id = await appendTestEntry(d, "integrated by the poll");
      const deadline = Date.now() + 5_000;
      while ((await leafIndexOf(d, id)) === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(await leafIndexOf(d, id)).not.toBeNull();
      expect(counted.count()).toBeGreaterThanOrEqual(1);
    } finally {
      await integrator.stop();
    }
  });

  it("a receipt for an entry its own batch integrated comes from memory and equals the one read back from the database", async () => {
    const d = db().handle.db;
    const integrator = startIntegrator(d, key, { pollMs: 600_000 });
    try {
      const id = await appendTestEntry(d, "receipt from memory");
      await integrator.flush(10_000);
      const remembered = await integrator.receipt(id);
      const index = await leafIndexOf(d, id);
      const stored = await proveInclusion(d, index!);
      expect(remembered).toEqual({ leaf_index: stored.leaf_index, tree_size: stored.tree_size, inclusion_proof: stored.proof, checkpoint: stored.checkpoint });
      // An entry this integrator never integrated is not made up.
      expect(await integrator.receipt(id + 1_000_000n)).toBeNull();
    } finally {
      await integrator.stop();
    }
  });
});
