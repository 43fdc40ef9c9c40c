/**
 * Crash test: SIGKILL a process appending from 8 writers (with its
 * integrator running) at random moments, several times; after restart,
 * every append that returned an id is present exactly once, everything is
 * integrated into contiguous leaves, and the exported log verifies.
 * Run on PGlite (data directory on disk) and on the real server.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../config";
import { executeRows, openHubDatabase } from "../../db";
import { createScratchPostgresDatabase, testPostgresUrl } from "../../../test/support/databases";
import { exportLedgerToFile } from "../export";
import { loadOrCreateLogKey } from "../log-key";
import { runVerify } from "../verify-cli";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const CHILD = path.join(ROOT, "server/ledger/test/crash-child.ts");
const ROUNDS = 3;

/**
 * The child, compiled once per file: run through tsx, each of the eight
 * children compiled the ledger's whole module graph again as it started
 * (about two CPU-seconds each). Bundled into the checkout's module cache
 * (bare imports still resolve from its node_modules, and the checkout is
 * found above it), removed after the file.
 */
let childScript = "";
beforeAll(async () => {
  const esbuild = await import("esbuild");
  const dir = path.join(ROOT, "node_modules", ".cache", "leasehold-test");
  fs.mkdirSync(dir, { recursive: true });
  childScript = path.join(dir, `crash-child-${process.pid}.mjs`);
  await esbuild.build({ entryPoints: [CHILD], outfile: childScript, bundle: true, packages: "external", platform: "node", format: "esm", target: "node20", logLevel: "warning" });
});
afterAll(() => {
  if (childScript !== "") fs.rmSync(childScript, { force: true });
});

function runChild(env: Record<string, string>, args: string[], killAfterMs?: number): Promise<{ out: string; signal: string | null; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...env } as unknown as NodeJS.ProcessEnv,
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (killAfterMs !== undefined && out.startsWith("ready\n") && !child.killed) {
        setTimeout(() => child.kill("SIGKILL"), killAfterMs).unref();
        killAfterMs = undefined;
      }
    });
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (signal !== "SIGKILL" && code !== 0) reject(new Error(`crash child failed (${code}): ${err}`));
      else resolve({ out, signal, code });
    });
  });
}

async function crashScenario(env: Record<string, string>) {
  const acknowledged = new Map<string, string>(); // id -> tag
  for (let round = 0; round < ROUNDS; round++) {
    const killAfter = 300 + Math.floor(Math.random() * 900);
    const r = await runChild({ ...env, CRASH_ROUND: String(round), CRASH_WRITERS: "8" }, [], killAfter);
    expect(r.signal).toBe("SIGKILL");
    // A line cut by the kill is not an acknowledgement the test relies on.
    for (const line of r.out.split("\n").slice(0, -1)) {
      const m = /^ok (\d+) (\d+) (\d+)$/.exec(line);
      if (m) acknowledged.set(m[3]!, `crash-r${round}-w${m[1]}-s${m[2]}`);
    }
  }
  const drained = await runChild(env, ["--drain"]);
  expect(drained.out).toMatch(/^drained \d+\n$/);
  return acknowledged;
}

async function checkAfterCrashes(env: Record<string, string>, acknowledged: Map<string, string>) {
  const parsed = loadConfig(env);
  if (!parsed.ok) throw new Error(parsed.message);
  const opened = await openHubDatabase(parsed.config, { migrate: true, purpose: "crash check" });
  try {
    const db = opened.handle.db;
    expect(acknowledged.size).toBeGreaterThan(50);
    const rows = await executeRows<{ id: string | number; leaf_index: string | number | null; body: Uint8Array }>(
      db,
      sql`select id, leaf_index, body from ledger_entries order by id`,
    );
    const byId = new Map(rows.map((r) => [String(r.id), r]));
    // Each append carries the digest of a unique tag: a replayed or doubled
    // append would show up as the same digest twice.
    const tags = new Map<string, number>();
    for (const r of rows) {
      const entry = JSON.parse(Buffer.from(r.body).toString("utf8")) as { data: { target_digest: string } };
      tags.set(entry.data.target_digest, (tags.get(entry.data.target_digest) ?? 0) + 1);
    }
    for (const [tag, count] of tags) expect(count, tag).toBe(1);
    for (const id of acknowledged.keys()) {
      const row = byId.get(id);
      expect(row, `acknowledged append ${id} is missing`).toBeDefined();
      expect(row!.leaf_index).not.toBeNull();
    }
    const leaves = rows.map((r) => Number(r.leaf_index)).sort((a, b) => a - b);
    expect(leaves).toEqual(Array.from({ length: rows.length }, (_, i) => i));
    const key = loadOrCreateLogKey(parsed.config.dataDir, parsed.config.publicUrl);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "lh-crash-")), "export");
    await exportLedgerToFile(db, key, file);
    let text = "";
    expect(await runVerify(file, key.verifier, { write: (t: string) => (text += t) })).toBe(0);
    return { entries: rows.length, acknowledged: acknowledged.size };
  } finally {
    await opened.close();
  }
}

describe("ledger crash safety (SIGKILL while 8 writers append)", () => {
  it("[pglite] keeps every acknowledged append exactly once and verifies", async () => {
    const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "lh-crash-")), "data");
    const env = { LEASEHOLD_DATA_DIR: dataDir };
    const acknowledged = await crashScenario(env);
    const result = await checkAfterCrashes(env, acknowledged);
    console.log(`crash test [pglite]: ${ROUNDS} kills, ${result.acknowledged} acknowledged appends, ${result.entries} entries, verified`);
  }, 180_000);

  it("[postgres] keeps every acknowledged append exactly once and verifies", async () => {
    if (!testPostgresUrl()) throw new Error("TEST_POSTGRES_URL is not set: run `npm test`");
    const scratch = await createScratchPostgresDatabase();
    try {
      const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "lh-crash-")), "data");
      const env = { LEASEHOLD_DATA_DIR: dataDir, DATABASE_URL: scratch.url };
      const acknowledged = await crashScenario(env);
      const result = await checkAfterCrashes(env, acknowledged);
      console.log(`crash test [postgres]: ${ROUNDS} kills, ${result.acknowledged} acknowledged appends, ${result.entries} entries, verified`);
    } finally {
      await scratch.drop();
    }
  }, 180_000);
});
