import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { resumeAction, submitAction } from "../../server/actions";
import { type LeaseholdError } from "../../server/errors";
import { openPostgres } from "../../server/db";
import { openTestDatabase, testPostgresUrl } from "../support/databases";
import { insertAdmin, insertHost, insertToken, testDeps } from "./support";

function runChild(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "fixtures", "approve-in-child.ts"), ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`child exited ${code}: ${out}`))));
  });
}

describe("approval wake-up across hub processes (real PostgreSQL, LISTEN/NOTIFY)", () => {
  it("a waiter in this process is woken by a decision made in another process", async () => {
    if (testPostgresUrl() === undefined) throw new Error("TEST_POSTGRES_URL is not set: run `npm test`, which starts a PostgreSQL server");
    const test = await openTestDatabase("postgres");
    // A second, independent connection pool: "hub process A" waits on it.
    const waiterHandle = await openPostgres(String(test.url), { max: 4 });
    try {
      // Polling is effectively off (60 s): only NOTIFY can wake the waiter in time.
      const deps = testDeps(waiterHandle, { approvalPollMs: 60_000 });
      const host = await insertHost(test.handle.db);
      const admin = await insertAdmin(test.handle.db);
      const caller = await insertToken(test.handle.db);
      let pending: LeaseholdError | undefined;
      try {
        await submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: "touch x" }, channel: "mcp" }, { waitMs: 0 });
      } catch (error) {
        pending = error as LeaseholdError;
      }
      expect(pending?.code).toBe("APPROVAL_PENDING");
      const waiting = resumeAction(deps, caller, String(pending?.details?.["action_id"]), { waitMs: 30_000 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const decidedAt = Date.now();
      const out = await runChild([String(test.url), String(pending?.details?.["approval_id"]), admin.id, admin.username]);
      expect(out).toContain("approved");
      const outcome = await waiting;
      const latency = Date.now() - decidedAt;
      console.log(`cross-process wake-up: decision in a child process → waiter resumed ${latency} ms after the child started (poll interval 60 s)`);
      expect(outcome.decision).toBe("approved");
      expect(latency).toBeLessThan(15_000);
    } finally {
      await waiterHandle.close();
      await test.dispose();
    }
  });
});
