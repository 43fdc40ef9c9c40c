/**
 * test-group: serial — a PostgreSQL server of its own stopped and started under load, a hub and its local guest running jobs.
 * The database server restarts while agents are calling: a hub on a
 * PostgreSQL server this test starts for itself (tools/lib/postgres.mjs;
 * never the suite's shared one, which other files use), its local guest
 * running `run_command` for four clients at once, and the server stopped —
 * once shut down cleanly, once killed (`-m immediate`) — and started again
 * under that load.
 *
 * The hub must never crash or wedge: every call gets an answer within its
 * deadline, during the outage a stable DATABASE_UNAVAILABLE (retryable;
 * LEDGER_UNAVAILABLE for a call whose ledger append met it) instead of
 * INTERNAL, calls succeed again once the server is back, and no
 * acknowledged action is missing from the ledger. The SAME hub process
 * resumes integrating the ledger within seconds of each restart
 * (docs/design.md#integrator-election): every stored entry gets a leaf
 * index under a signed checkpoint, and the log exported then verifies from
 * entry 0; the hub then still stops cleanly on SIGTERM.
 *
 * Every wait has a deadline that names what it waited for, so a fault fails
 * the test in seconds with a message instead of running into the file's
 * timeout.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTemporaryPostgres } from "../../tools/lib/postgres.mjs";
import { waitFor } from "../guest/support";
import { within } from "../support/deadline";
import { localGuestTierRecorded, runCli, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { mcpSession, mcpTool, outcome, structured } from "../support/mcp-http";

const CLIENTS = 4;
/** How long the server stays down in each round, with the clients calling throughout. */
const OUTAGE_MS = 3_000;
/** Each call's deadline: a call still unanswered then is a wedged hub. */
const CALL_TIMEOUT_MS = 30_000;
/** The whole test's request budget. */
const MAX_CALLS = 600;
/**
 * After the server is back, the hub's integrator must have checkpointed
 * every entry stored before it within this long (docs/design.md#integrator-election
 * promises a few seconds; the rest is slack for a loaded 2-core machine).
 */
const RESUME_MS = 15_000;
/** A statement of the test's own against the server. */
const QUERY_MS = 10_000;

type Server = Awaited<ReturnType<typeof startTemporaryPostgres>>;

let server: Server;
let hub: RunningHub;
let token: string;

/**
 * One statement on a connection of its own, bounded: a client kept across
 * the restarts would hold a dead session, and one statement must not hang
 * the test.
 */
async function query<T extends Record<string, unknown>>(what: string, run: (sql: postgres.Sql) => Promise<T[]>): Promise<T[]> {
  const sql = postgres(server.url, { max: 1, connect_timeout: 5, onnotice: () => undefined });
  try {
    return await within(what, QUERY_MS, run(sql));
  } finally {
    await sql.end({ timeout: 1 }).catch(() => undefined);
  }
}

interface LedgerState {
  /** Entries stored. */
  entries: number;
  /** The newest stored entry's id (0 with none). */
  lastId: number;
  /** Entries that have no leaf index yet. */
  waiting: number;
  /** The size of the newest signed checkpoint. */
  checkpointed: number;
}

async function ledgerState(): Promise<LedgerState> {
  const [row] = await query("the ledger's counts", (sql) =>
    sql<{ entries: number; last_id: number; waiting: number; checkpointed: number }[]>`
      select count(*)::int as entries, coalesce(max(id), 0)::int as last_id,
             count(*) filter (where leaf_index is null)::int as waiting,
             (select coalesce(max(tree_size), 0)::int from ledger_checkpoints) as checkpointed
      from ledger_entries`,
  );
  return { entries: row!.entries, lastId: row!.last_id, waiting: row!.waiting, checkpointed: row!.checkpointed };
}

function pgCtl(args: string[]): void {
  execFileSync("runuser", ["-u", "postgres", "--", path.join(server.binDir, "pg_ctl"), "-D", path.join(server.dir, "data"), ...args], { stdio: "ignore", timeout: 60_000 });
}

function stopServer(mode: "fast" | "immediate"): void {
  pgCtl(["-m", mode, "-w", "stop"]);
}

function startServer(): void {
  pgCtl(["-o", `-p ${server.port} -k ${server.dir}`, "-l", path.join(server.dir, "server.log"), "-w", "-t", "60", "start"]);
}

beforeAll(async () => {
  server = await startTemporaryPostgres();
  const dataDir = path.join(tempDir("lh-pg-restart-"), "data");
  hub = await startHub({ DATABASE_URL: server.url, LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_MCP_RATE_PER_MINUTE: "100000" });
  await waitFor("the hub's start-up lines", async () => hub.output().includes("stop with Ctrl-C") || undefined, 60_000, 50);
  // Calls on "local" before its guest's first health report are refused CAPABILITY_UNAVAILABLE, which is no outage's answer.
  await localGuestTierRecorded(hub);
  const made = await runCli(["token", "create", "--name", "restart", "--expires", "1h"], { DATABASE_URL: server.url, LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_PORT: String(hub.port) });
  const secret = made.stdout.split("\n").find((line) => line.startsWith("lh_"));
  if (made.code !== 0 || secret === undefined) throw new Error(`token create failed: ${made.stderr}${made.stdout}`);
  token = secret;
}, 180_000);

afterAll(async () => {
  await hub?.stop("SIGKILL");
  server?.stop();
}, 60_000);

describe("PostgreSQL restarted under load [own PostgreSQL server]", () => {
  it("the hub never crashes or hangs: DATABASE_UNAVAILABLE during each outage, calls succeed after it, the same hub process checkpoints every entry within seconds of each restart, and the log verifies from entry 0", async () => {
    const sessions = await within("the clients' MCP sessions", CALL_TIMEOUT_MS, Promise.all(Array.from({ length: CLIENTS }, () => mcpSession(hub.url, token))));
    const outcomes = new Map<string, number>();
    const acknowledged: string[] = [];
    let okSince = 0;
    let calls = 0;
    let stop = false;
    const client = async (sessionId: string, n: number) => {
      let session = sessionId;
      while (!stop && calls < MAX_CALLS) {
        calls += 1;
        const answer = await mcpTool(hub.url, token, session, "run_command", { host: "local", command: `echo call-${n}-${calls}` }, CALL_TIMEOUT_MS);
        const what = outcome(answer);
        outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
        if (what === "ok") {
          okSince += 1;
          const body = structured<{ action_id?: string; action?: { id?: string } }>(answer);
          const id = body.action_id ?? body.action?.id;
          if (id !== undefined) acknowledged.push(id);
        } else {
          // The outage may outlast a session's in-memory state: a refused session is opened again, as a client does.
          if (what === "jsonrpc -32001" || answer.status === 404) session = await mcpSession(hub.url, token).catch(() => session);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    const running = sessions.map((s, i) => client(s, i));
    const pid = hub.process.pid;
    try {
      for (const mode of ["fast", "immediate"] as const) {
        okSince = 0;
        await waitFor(`calls succeeding before the ${mode} stop`, async () => okSince >= CLIENTS || undefined, 60_000, 50);
        const before = new Map(outcomes);
        stopServer(mode);
        await new Promise((r) => setTimeout(r, OUTAGE_MS));
        startServer();
        const back = Date.now();
        // The integrator resumes in this same process: everything stored before the restart gets a leaf index.
        const { lastId } = await ledgerState();
        await waitFor(`the hub's integrator to give every entry stored before the ${mode} restart (id <= ${lastId}) a leaf index`, async () => {
          const [row] = await query("the entries still waiting", (sql) => sql<{ n: number }[]>`select count(*)::int as n from ledger_entries where leaf_index is null and id <= ${lastId}`);
          return row?.n === 0 || undefined;
        }, RESUME_MS, 100);
        console.info(`postgres ${mode} restart: the integrator checkpointed every entry stored before it ${Date.now() - back} ms after the server was back`);
        okSince = 0;
        await waitFor(`calls succeeding after the ${mode} restart`, async () => okSince >= CLIENTS || undefined, 60_000, 50);
        const during = [...outcomes].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const).filter(([, v]) => v > 0);
        console.info(`postgres ${mode} restart under load: answers since the stop ${JSON.stringify(Object.fromEntries(during))}`);
        expect(during.find(([k]) => k === "DATABASE_UNAVAILABLE"), `no DATABASE_UNAVAILABLE while the server was down (${mode})`).toBeDefined();
        expect(hub.process.exitCode, hub.output().slice(-3000)).toBeNull();
      }
    } finally {
      stop = true;
      await within("the clients' last calls", CALL_TIMEOUT_MS + 10_000, Promise.all(running));
    }
    console.info(`postgres restarts: ${calls} calls, ${acknowledged.length} acknowledged, outcomes ${JSON.stringify(Object.fromEntries(outcomes))}`);
    // Only successes and the stable retryable codes of the database tier (a call whose ledger append
    // met the outage says LEDGER_UNAVAILABLE): never INTERNAL, never a call left without an answer.
    const stable = new Set(["ok", "DATABASE_UNAVAILABLE", "LEDGER_UNAVAILABLE"]);
    expect([...outcomes.keys()].filter((k) => !stable.has(k)), JSON.stringify(Object.fromEntries(outcomes))).toEqual([]);
    expect(hub.output()).not.toMatch(/uncaughtException|TypeError/);

    // Every acknowledged action is in the ledger.
    expect(acknowledged.length).toBeGreaterThan(0);
    const rows = await query("the ledger's action ids", (sql) => sql<{ id: string }[]>`select distinct convert_from(body, 'UTF8')::jsonb ->> 'action_id' as id from ledger_entries`);
    const inLedger = new Set(rows.map((r) => r.id));
    expect(acknowledged.filter((id) => !inLedger.has(id))).toEqual([]);

    // The same hub process, never restarted, catches up: every entry under a signed checkpoint.
    expect(hub.process.pid).toBe(pid);
    expect(hub.process.exitCode).toBeNull();
    const caughtUp = await waitFor("the hub's integrator to checkpoint every stored entry after the restarts", async () => {
      const state = await ledgerState();
      return (state.waiting === 0 && state.checkpointed === state.entries && state) || undefined;
    }, RESUME_MS, 100);
    const env = { DATABASE_URL: server.url, LEASEHOLD_DATA_DIR: hub.dataDir, LEASEHOLD_PORT: String(hub.port) };
    const out = path.join(tempDir("lh-pg-restart-export-"), "log.export");
    const exported = await runCli(["export", "--out", out], env);
    expect(exported.code, exported.stderr).toBe(0);
    const key = (await runCli(["ledger", "key"], env)).stdout.trim();
    const verified = await runCli(["verify", out, "--key", key]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    // From entry 0 to the newest checkpoint, which covers every entry stored when the integrator caught up.
    const read = Number(/^entries: +(\d+) read/m.exec(verified.stdout)?.[1]);
    expect(read, verified.stdout).toBeGreaterThanOrEqual(caughtUp.entries);
    expect(verified.stdout).toContain(`(latest: size ${read}, root `);

    // And it still stops cleanly: nothing the restarts left behind holds the shutdown.
    expect(await within("the hub to exit after SIGTERM", 45_000, hub.stop("SIGTERM")), hub.output().slice(-3000)).toBe(0);
  }, 300_000);
});
