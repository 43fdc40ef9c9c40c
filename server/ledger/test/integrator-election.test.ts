/**
 * One integrator among hub processes: a session-level advisory lock elects
 * it, the others stand by and hand their flushes to it, and one of them
 * takes over when its database session dies. Each "process" here is its own
 * connection pool on one real PostgreSQL database.
 */
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { executeRows, openPostgres, applyMigrations, type DatabaseHandle } from "../../db";
import { createScratchPostgresDatabase, testPostgresUrl } from "../../../test/support/databases";
import { INTEGRATOR_ELECTION_KEY, startIntegrator, type RunningIntegrator } from "../integrate";
import { leafIndexOf } from "../prove";
import { appendTestEntry, memoryLogKey } from "./fixtures";

interface Replicas {
  handles: DatabaseHandle[];
  integrators: RunningIntegrator[];
  close(): Promise<void>;
}

async function replicas(url: string, n: number, key: ReturnType<typeof memoryLogKey>): Promise<Replicas> {
  const handles: DatabaseHandle[] = [];
  for (let i = 0; i < n; i += 1) handles.push(await openPostgres(url, { max: 4 }));
  // As the hub starts it (server/hub/runtime.ts): the default poll, elected on its own handle.
  const integrators = handles.map((h) => startIntegrator(h.db, key, { electOn: h }));
  return {
    handles,
    integrators,
    async close() {
      await Promise.all(integrators.map((i) => i.stop()));
      await Promise.all(handles.map((h) => h.close()));
    },
  };
}

async function checkpoints(h: DatabaseHandle): Promise<number> {
  const [row] = await executeRows<{ n: number }>(h.db, sql`select count(*)::int as n from ledger_checkpoints`);
  return Number(row?.n ?? 0);
}

/** `calls` calls, `concurrency` at a time, spread over the processes: each appends one entry and waits for its checkpoint. */
async function load(r: Replicas, calls: number, concurrency: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        const i = next++;
        const p = i % r.handles.length;
        await appendTestEntry(r.handles[p]!.db, `call ${i}`);
        await r.integrators[p]!.flush(15_000);
      }
    }),
  );
}

async function until(what: string, fn: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await fn())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - started;
}

describe("one integrator across hub processes [postgres]", () => {
  if (!testPostgresUrl()) {
    it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
      throw new Error("TEST_POSTGRES_URL is not set: run `npm test`, which starts a PostgreSQL server");
    });
    return;
  }
  const drops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  async function scratch(): Promise<string> {
    const db = await createScratchPostgresDatabase();
    drops.push(db.drop);
    const h = await openPostgres(db.url, { max: 2 });
    await applyMigrations(h);
    await h.close();
    return db.url;
  }

  it("three processes write no more checkpoints per call than one (within 1.1×, plus one batch of slack)", async () => {
    const CALLS = 90;
    const measured: Record<number, number> = {};
    for (const n of [1, 3]) {
      const r = await replicas(await scratch(), n, memoryLogKey());
      try {
        await r.integrators[0]!.flush(15_000);
        const before = await checkpoints(r.handles[0]!);
        await load(r, CALLS, 6);
        measured[n] = (await checkpoints(r.handles[0]!)) - before;
      } finally {
        await r.close();
      }
    }
    console.log(`checkpoints for ${CALLS} calls: 1 process ${measured[1]}, 3 processes ${measured[3]} (${(measured[3]! / measured[1]!).toFixed(2)}×)`);
    expect(measured[3]!).toBeLessThanOrEqual(Math.ceil(measured[1]! * 1.1) + 1);
  }, 120_000);

  it("exactly one process integrates; when its session dies another takes over within 2 s, and the tree has every entry once", async () => {
    const r = await replicas(await scratch(), 3, memoryLogKey());
    try {
      await r.integrators[0]!.flush(15_000);
      await until("an integrator elected", async () => r.integrators.filter((i) => i.status().state === "running").length === 1, 5_000);
      const leader = r.integrators.findIndex((i) => i.status().state === "running");
      expect(r.integrators.filter((i) => i.status().state === "standby")).toHaveLength(2);
      // A standby's flush is answered by the leader's batch.
      const standby = (leader + 1) % 3;
      const id = await appendTestEntry(r.handles[standby]!.db, "through a standby");
      await r.integrators[standby]!.flush(5_000);
      expect(await leafIndexOf(r.handles[standby]!.db, id)).not.toBeNull();

      // The leader's database session dies (its process was killed): PostgreSQL ends the session and its lock.
      const [holder] = await executeRows<{ pid: number }>(
        r.handles[standby]!.db,
        sql`select pid from pg_locks where locktype = 'advisory' and granted and ((classid::bigint << 32) | objid::bigint) = ${INTEGRATOR_ELECTION_KEY}`,
      );
      expect(holder).toBeDefined();
      await executeRows(r.handles[standby]!.db, sql`select pg_terminate_backend(${holder!.pid})`);
      await r.integrators[leader]!.stop();
      const orphan = await appendTestEntry(r.handles[standby]!.db, "after the leader died");
      const tookMs = await until("another process integrates", async () => (await leafIndexOf(r.handles[standby]!.db, orphan)) !== null, 2_000);
      console.log(`integrator failover: an entry appended after the leader's session died was integrated ${tookMs} ms later`);
      const others = r.integrators.filter((_, i) => i !== leader);
      expect(others.filter((i) => i.status().state === "running")).toHaveLength(1);

      const [tree] = await executeRows<{ n: number; distinct_leaves: number; max_leaf: number; size: number }>(
        r.handles[standby]!.db,
        sql`select count(*)::int as n, count(distinct leaf_index)::int as distinct_leaves, max(leaf_index)::int as max_leaf,
                   (select max(tree_size)::int from ledger_checkpoints) as size from ledger_entries`,
      );
      expect(tree).toEqual({ n: tree!.size, distinct_leaves: tree!.size, max_leaf: tree!.size - 1, size: tree!.size });
    } finally {
      await r.close();
    }
  }, 60_000);
});
