/**
 * The `postgres` driver with the closed-socket write guard
 * (tools/lib/postgres-driver-guard.mjs), on the test PostgreSQL server: a
 * backend killed in the middle of a transaction — what a server restart
 * does to every connection at once — fails that transaction with the
 * driver's connection error, throws nothing uncaught, and leaves a pool
 * whose every connection answers again.
 */
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScratchPostgresDatabase, testPostgresUrl } from "../../test/support/databases";
import { checkPostgresDriverGuard } from "./driver-guard";
import { isDatabaseUnavailable } from "./unavailable";

describe("postgres driver: a backend killed mid-transaction [postgres]", () => {
  if (!testPostgresUrl()) {
    it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
      throw new Error("TEST_POSTGRES_URL is not set: run `npm test`, which starts a PostgreSQL server");
    });
    return;
  }
  let scratch: { url: string; drop(): Promise<void> };
  let admin: postgres.Sql;
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);

  beforeAll(async () => {
    scratch = await createScratchPostgresDatabase();
    admin = postgres(scratch.url, { max: 1, onnotice: () => undefined });
    process.on("uncaughtException", onUncaught);
  });
  afterAll(async () => {
    process.off("uncaughtException", onUncaught);
    await admin?.end({ timeout: 5 });
    await scratch?.drop();
  });

  it("the installed driver carries the guard (the hub refuses to open PostgreSQL without it)", () => {
    expect(() => checkPostgresDriverGuard()).not.toThrow();
  });

  it("20 rounds: each transaction fails with a connection error, nothing is thrown uncaught, and all 4 pooled connections answer afterwards", async () => {
    const sql = postgres(scratch.url, { max: 4, onnotice: () => undefined, connect_timeout: 5 });
    try {
      for (let round = 0; round < 20; round += 1) {
        const failures = await Promise.all(
          Array.from({ length: 4 }, async () => {
            try {
              await sql.begin(async (tx) => {
                const [me] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
                await admin`select pg_terminate_backend(${me!.pid})`;
                await tx`select 1`;
              });
              return undefined;
            } catch (error) {
              return error;
            }
          }),
        );
        for (const failure of failures) expect(isDatabaseUnavailable(failure), String(failure)).toBe(true);
        // A deferred write left behind would fire on the next turn of the event loop.
        await new Promise((r) => setImmediate(r));
        // Every connection of the pool answers again: four statements held open at once need all four.
        const answered = await Promise.race([
          Promise.all(Array.from({ length: 4 }, () => sql`select pg_sleep(0.05), 1 as one`)),
          new Promise<"hung">((r) => setTimeout(() => r("hung"), 10_000)),
        ]);
        expect(answered, `round ${round}: the pool did not answer within 10 s`).not.toBe("hung");
      }
      expect(uncaught.map(String)).toEqual([]);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }, 120_000);
});
