/**
 * The ledger on a real database (PGlite and PostgreSQL): appends, the
 * integrator, proofs served from the node store, export + offline verify,
 * tampering directly in the database, and the witness protocol.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { DATABASE_KINDS, openTestDatabase, testPostgresUrl, type TestDatabase } from "../../../test/support/databases";
import { executeRows, type Database, type DatabaseKind } from "../../db";
import { decodeBase64Strict } from "../../trust/ledger/base64";
import { verifyCheckpointNote, parseSignedCheckpoint } from "../../trust/ledger/checkpoint";
import { registerWitness, submitCosignature } from "../cosignatures";
import { hashLeaf } from "../../trust/ledger/hash";
import { exportLedgerToFile } from "../export";
import { integrateOnce } from "../integrate";
import { parseSignerKey, SIGNATURE_TYPE, generateSignerKey } from "../../trust/ledger/note";
import { verifyConsistency, verifyInclusion } from "../../trust/ledger/proof";
import { latestCheckpoint, proveConsistency, proveInclusion } from "../prove";
import { runVerify } from "../verify-cli";
import { initialWitnessState, witnessCosign } from "../../trust/ledger/witness";
import { appendTestEntry, memoryLogKey } from "./fixtures";
import type { LogKey } from "../log-key";

async function integrateAll(db: Database, key: LogKey, batchSize = 1000): Promise<number> {
  for (;;) {
    const r = await integrateOnce(db, key, { batchSize });
    if (r.kind === "idle") return r.size;
    if (r.kind !== "integrated") throw new Error(`integrator: ${r.kind}`);
  }
}

async function verifyFile(file: string, key: string, witnessKeys: string[] = []): Promise<{ code: number; text: string }> {
  let text = "";
  const code = await runVerify(file, key, { write: (t: string) => (text += t) }, { witnessKeys });
  return { code, text };
}

function tempFile(name: string): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), "lh-ledger-")), name);
}

const b64 = (s: string) => decodeBase64Strict(s)!;

/**
 * A log of its own for one case: a fresh migrated database holding `n`
 * entries integrated under a fresh key. Cases share nothing, so they pass in
 * any order (vitest shuffles them).
 */
async function freshLog(kind: DatabaseKind, n: number): Promise<{ t: TestDatabase; key: LogKey }> {
  const t = await openTestDatabase(kind);
  const key = memoryLogKey();
  for (let i = 0; i < n; i++) {
    await appendTestEntry(t.handle.db, `entry-${i}`);
    if (i % 10 === 9) await integrateAll(t.handle.db, key);
  }
  if (n > 0) await integrateAll(t.handle.db, key);
  return { t, key };
}

async function withLog(kind: DatabaseKind, n: number, fn: (db: Database, key: LogKey) => Promise<void>): Promise<void> {
  const log = await freshLog(kind, n);
  try {
    await fn(log.t.handle.db, log.key);
  } finally {
    await log.t.dispose();
  }
}

for (const kind of DATABASE_KINDS) {
  describe(`ledger on the database [${kind}]`, () => {
    if (kind === "postgres" && !testPostgresUrl()) {
      it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
        throw new Error("TEST_POSTGRES_URL is not set: run `npm test`, which starts a PostgreSQL server for the suite");
      });
      return;
    }

    it("integrates concurrent appends into contiguous leaves with a signed checkpoint", () =>
      withLog(kind, 0, async (db, key) => {
        const ids = (await Promise.all(Array.from({ length: 8 }, (_, w) => (async () => {
          const mine: bigint[] = [];
          for (let i = 0; i < 25; i++) mine.push(await appendTestEntry(db, `w${w}-${i}`));
          return mine;
        })()))).flat();
        expect(new Set(ids.map(String)).size).toBe(200);
        const size = await integrateAll(db, key, 64);
        expect(size).toBe(200);
        const rows = await executeRows<{ leaf_index: string | number; body: Uint8Array }>(db, sql`select leaf_index, body from ledger_entries order by leaf_index`);
        expect(rows.map((r) => Number(r.leaf_index))).toEqual(Array.from({ length: 200 }, (_, i) => i));
        const head = (await latestCheckpoint(db))!;
        const verified = verifyCheckpointNote(head.note, key.verifier);
        expect(verified.ok).toBe(true);
        expect(verified.ok && verified.checkpoint.size).toBe(200);
      }));

    // 201 entries first, so the indices below straddle the 64- and 200-leaf boundaries of the tree.
    it("serves inclusion and consistency proofs that verify against signed checkpoints", () =>
      withLog(kind, 201, async (db, key) => {
        const before = (await latestCheckpoint(db))!;
        expect(before.size).toBe(201);
        for (let i = 0; i < 37; i++) await appendTestEntry(db, `more-${i}`);
        await integrateAll(db, key, 10);
        const after = (await latestCheckpoint(db))!;
        expect(after.size).toBe(before.size + 37);
        const rows = await executeRows<{ leaf_index: string | number; body: Uint8Array }>(db, sql`select leaf_index, body from ledger_entries order by leaf_index`);
        for (const index of [0, 1, 63, 64, 199, 200, after.size - 1]) {
          const p = await proveInclusion(db, index);
          const cp = verifyCheckpointNote(p.checkpoint, key.verifier);
          if (!cp.ok) throw new Error(cp.reason);
          const leaf = hashLeaf(new Uint8Array(rows[index]!.body));
          expect(verifyInclusion(leaf, index, p.tree_size, p.proof.map(b64), cp.checkpoint.root)).toEqual({ ok: true });
        }
        const c = await proveConsistency(db, before.size);
        const newRoot = parseSignedCheckpoint(c.checkpoint);
        if (!newRoot.ok) throw new Error(newRoot.reason);
        expect(verifyConsistency(before.size, after.size, c.proof.map(b64), b64(before.root), newRoot.checkpoint.root)).toEqual({ ok: true });
        await expect(proveInclusion(db, after.size)).rejects.toMatchObject({ code: "NOT_FOUND" });
        await expect(proveInclusion(db, 0, 5)).rejects.toMatchObject({ code: "NOT_FOUND" });
      }));

    it("a hub holding another key stands by instead of forking the log", () =>
      withLog(kind, 3, async (db, key) => {
        await appendTestEntry(db, "waiting");
        const other = memoryLogKey();
        expect((await integrateOnce(db, other)).kind).toBe("key_mismatch");
        expect(await integrateAll(db, key)).toBe(4);
      }));

    it("exports a log that `verify` accepts with only the public key, and catches a wrong key", () =>
      withLog(kind, 12, async (db, key) => {
        const file = tempFile("ledger.export");
        const counts = await exportLedgerToFile(db, key, file);
        expect(counts.entries).toBe((await latestCheckpoint(db))!.size);
        expect(counts.entries).toBe(12);
        const ok = await verifyFile(file, key.verifier);
        expect(ok.code, ok.text).toBe(0);
        expect(ok.text).toContain("VERIFIED");
        const wrong = await verifyFile(file, memoryLogKey().verifier);
        expect(wrong.code).not.toBe(0);
      }));

    it("witnesses cosign only consistent growth; the hub stores and exports their cosignatures", () =>
      withLog(kind, 5, async (db, key) => {
        const witness = generateSignerKey("witness.test/guest-1", SIGNATURE_TYPE.cosignatureV1);
        const witnessVerifier = witness.verifier;
        await registerWitness(db, witnessVerifier, memoryActor());
        // Registration is sealed (admin/1); integrate it so the witness cosigns the newest checkpoint.
        await integrateAll(db, key);
        let state = initialWitnessState(key.origin);
        const head = (await latestCheckpoint(db))!;
        const proof = await proveConsistency(db, state.size, head.size);
        const first = witnessCosign(state, head.note, proof.proof.map(b64), key.verifier, witness.signer);
        if (!first.ok) throw new Error(first.reason);
        state = first.state;
        const entriesBefore = await countEntries(db);
        await submitCosignature(db, head.size, first.line);
        // Resubmitting (a guest that lost the answer) is accepted and changes nothing.
        await submitCosignature(db, head.size, first.line);
        // Stored beside the checkpoint, not appended: no entry, so nothing to integrate and no new checkpoint.
        expect(await countEntries(db)).toBe(entriesBefore);
        expect((await integrateOnce(db, key)).kind).toBe("idle");
        expect((await latestCheckpoint(db))!.size).toBe(head.size);
        // Proofs (and so receipts) now carry the cosignature on their checkpoint, the C2SP way.
        const served = await proveInclusion(db, 0, head.size);
        expect(served.checkpoint).toBe(`${head.note}${first.line}\n`);
        expect(verifyCheckpointNote(served.checkpoint, key.verifier).ok).toBe(true);
        const file = tempFile("witnessed.export");
        await exportLedgerToFile(db, key, file);
        const res = await verifyFile(file, key.verifier, [witnessVerifier]);
        expect(res.code, res.text).toBe(0);
        expect(res.text).toMatch(/cosignatures:\s+1 verified/);
        expect(res.text).toMatch(/final:\s+the final checkpoint \(size \d+\) is cosigned by every witness given: witness\.test\/guest-1/);

        // A forged cosignature (wrong key) is refused by the hub.
        const stranger = generateSignerKey("witness.test/stranger", SIGNATURE_TYPE.cosignatureV1);
        const forged = witnessCosign(initialWitnessState(key.origin), head.note, proof.proof.map(b64), key.verifier, stranger.signer);
        if (!forged.ok) throw new Error(forged.reason);
        await expect(submitCosignature(db, head.size, forged.line)).rejects.toMatchObject({ code: "FORBIDDEN" });

        // A rewritten log — same key, different history (the operator's own attack) — gets no cosignature.
        const fork = await openTestDatabase(kind);
        try {
          for (let i = 0; i < head.size + 3; i++) await appendTestEntry(fork.handle.db, `forged-${i}`);
          await integrateAll(fork.handle.db, key);
          const forkHead = (await latestCheckpoint(fork.handle.db))!;
          const forkProof = await proveConsistency(fork.handle.db, state.size, forkHead.size);
          const refused = witnessCosign(state, forkHead.note, forkProof.proof.map(b64), key.verifier, witness.signer);
          expect(refused.ok).toBe(false);
          expect(!refused.ok && refused.refusal).toBe("inconsistent");
        } finally {
          await fork.dispose();
        }
      }));

    it("rejects malformed cosignature submissions", () =>
      withLog(kind, 0, async (db, key) => {
        await expect(submitCosignature(db, 1, "not a line")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
        const stranger = generateSignerKey("witness.test/unregistered", SIGNATURE_TYPE.cosignatureV1);
        // Its own checkpoint to cosign, so the case does not depend on an earlier one having made one.
        await appendTestEntry(db, "cosignature-target");
        await integrateAll(db, key);
        const head = (await latestCheckpoint(db))!;
        const line = witnessCosign(initialWitnessState(key.origin), head.note, (await proveConsistency(db, 0)).proof.map(b64), key.verifier, stranger.signer);
        if (!line.ok) throw new Error(line.reason);
        await expect(submitCosignature(db, 999_999, line.line)).rejects.toMatchObject({ code: "NOT_FOUND" });
        await expect(registerWitness(db, key.verifier, memoryActor())).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      }));
  });
}

async function countEntries(db: Database): Promise<number> {
  const [row] = await executeRows<{ n: string | number }>(db, sql`select count(*) as n from ledger_entries`);
  return Number(row!.n);
}

function memoryActor(): `sha256:${string}` {
  return `sha256:${"ab".repeat(32)}`;
}

describe("tampering directly in the database is caught by `verify`, which names the first bad index", () => {
  // Each case gets its own small log (freshLog above) so edits do not interfere.
  async function verdict(t: Awaited<ReturnType<typeof freshLog>>) {
    const file = tempFile("tampered.export");
    await exportLedgerToFile(t.t.handle.db, t.key, file);
    return verifyFile(file, t.key.verifier);
  }

  const kinds = (["pglite", "postgres"] as const).filter((k) => k === "pglite" || process.env.TEST_POSTGRES_URL);
  for (const kind of kinds) {
    it(`[${kind}] edit, delete (incl. the newest rows), reorder, insert`, async () => {
      const log = await freshLog(kind, 40);
      try {
        const db = log.t.handle.db;
        const first = await verdict(log);
        expect(first.code, first.text).toBe(0);

        // Edit one entry's bytes.
        await db.execute(sql`update ledger_entries set body = convert_to(replace(convert_from(body, 'UTF8'), 'test.append', 'test.appenD'), 'UTF8') where leaf_index = 17`);
        let v = await verdict(log);
        expect(v.code).toBe(1);
        expect(v.text).toContain("entry 17");
        await db.execute(sql`update ledger_entries set body = convert_to(replace(convert_from(body, 'UTF8'), 'test.appenD', 'test.append'), 'UTF8') where leaf_index = 17`);
        expect((await verdict(log)).code).toBe(0);

        // Reorder: swap two entries' bytes.
        await db.execute(sql`update ledger_entries set leaf_index = -1 where leaf_index = 5`);
        await db.execute(sql`update ledger_entries set leaf_index = 5 where leaf_index = 6`);
        await db.execute(sql`update ledger_entries set leaf_index = 6 where leaf_index = -1`);
        v = await verdict(log);
        expect(v.code).toBe(1);
        expect(v.text).toContain("entry 5");
        await db.execute(sql`update ledger_entries set leaf_index = -1 where leaf_index = 5`);
        await db.execute(sql`update ledger_entries set leaf_index = 5 where leaf_index = 6`);
        await db.execute(sql`update ledger_entries set leaf_index = 6 where leaf_index = -1`);

        // Insert: a new entry placed at index 12, everything after shifted by one.
        await db.execute(sql`update ledger_entries set leaf_index = -leaf_index - 1000 where leaf_index >= 12`);
        await db.execute(sql`update ledger_entries set leaf_index = -leaf_index - 1000 + 1 where leaf_index <= -1000`);
        const [extra] = await executeRows<{ id: string }>(db, sql`select id from ledger_entries order by id desc limit 1`);
        await appendTestEntry(db, "inserted");
        await db.execute(sql`update ledger_entries set leaf_index = 12 where id = (select max(id) from ledger_entries)`);
        expect(extra).toBeDefined();
        v = await verdict(log);
        expect(v.code).toBe(1);
        expect(v.text).toContain("entry 12");

        // Delete the newest rows: the signed checkpoint still covers them.
        const truncated = await freshLog(kind, 30);
        try {
          await truncated.t.handle.db.execute(sql`delete from ledger_entries where leaf_index >= 27`);
          const tv = await verdict(truncated);
          expect(tv.code).toBe(1);
          expect(tv.text).toMatch(/entries 27\.\.29 are missing|entry 27/);
          // Deleting the newest checkpoints too (hiding the truncation) still fails the end-of-log check: the
          // earlier checkpoints verify, but a witness holding size 30 refuses anything smaller (see witness test).
        } finally {
          await truncated.t.dispose();
        }
      } finally {
        await log.t.dispose();
      }
    });
  }
});

describe("the log key file", () => {
  it("is created once with mode 0600 and reread identically", async () => {
    const { loadOrCreateLogKey, logKeyPath } = await import("../log-key");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-key-"));
    const a = loadOrCreateLogKey(dir, "http://127.0.0.1:8700");
    const b = loadOrCreateLogKey(dir, "http://127.0.0.1:8700");
    expect(b.verifier).toBe(a.verifier);
    expect(a.origin).toMatch(/^127\.0\.0\.1:8700\/leasehold\/[0-9a-f]{12}$/);
    expect(fs.statSync(logKeyPath(dir)).mode & 0o777).toBe(0o600);
    expect(parseSignerKey(fs.readFileSync(logKeyPath(dir), "utf8").trim()).ok).toBe(true);
    fs.chmodSync(logKeyPath(dir), 0o644);
    expect(() => loadOrCreateLogKey(dir, "http://127.0.0.1:8700")).toThrow(/readable by others/);
  });
});
