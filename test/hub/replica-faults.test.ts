/**
 * test-group: serial — three hubs, a real guest in a network namespace and SIGKILL timings.
 * Faults a team running several hub processes on one PostgreSQL meets, with
 * real processes: three `leasehold start` replicas sharing one database and
 * one set of keys, a real guest in a network namespace of the test's own
 * (enrolled through replica B), and an MCP client.
 *
 * - The process holding a held call is killed (SIGKILL): the client already
 *   has the action id from the call's first progress notification, the
 *   approval given afterwards is dispatched by another process although
 *   nobody waits, the action runs exactly once, and `approval_wait` on
 *   another process returns its result.
 * - That process was also the elected ledger integrator: another takes over
 *   within 2 s, and the exported log verifies from entry 0.
 * - The guest's link goes down with its long-polls open: a job handed to one
 *   of them never reaches the guest and ends HOST_UNAVAILABLE (retryable,
 *   not run), never unknown; with the link back up, the next job runs.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { eq, sql } from "drizzle-orm";
import { CallToolResultSchema, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approve } from "../../server/approvals";
import { executeRows, openPostgres, type DatabaseHandle } from "../../server/db";
import { actions, evidence, jobs } from "../../server/db/schema";
import { JOB_KEY_FILE, loadOrCreateJobKey } from "../../server/dispatch/job-key";
import { LOG_KEY_FILE } from "../../server/ledger/log-key";
import { createScratchPostgresDatabase, testPostgresUrl } from "../support/databases";
import { fullHealth, runCli, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { createTestNetns, type TestNetns } from "../support/netns";
import { insertAdmin } from "../pipeline/support";
import { enrolCode, startGuest, unmountLeftovers, waitFor, waitForHost, writeCeiling, type RunningGuest } from "../guest/support";
import { connectClient, createTokenViaCli } from "../mcp/support";

const GUEST = "ns-guest";

/** A data directory holding replica A's job and log keys: every replica signs as one hub. */
function sharedKeyDir(from: string): string {
  // The job key is made on first use; made here, it is the one replica A uses too.
  loadOrCreateJobKey(from);
  const dir = path.join(tempDir("lh-replica-"), "data");
  for (const file of [JOB_KEY_FILE, LOG_KEY_FILE]) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true, mode: 0o700 });
    fs.copyFileSync(path.join(from, file), path.join(dir, file));
    fs.chmodSync(path.join(dir, file), 0o600);
  }
  fs.chmodSync(dir, 0o700);
  return dir;
}

function ip(args: string[]): void {
  const r = spawnSync("ip", args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`ip ${args.join(" ")}: ${r.stderr}`);
}

describe("replica faults: a killed waiter and integrator, a guest whose link goes down [postgres]", () => {
  if (!testPostgresUrl()) {
    it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
      throw new Error("TEST_POSTGRES_URL is not set: run `npm test`, which starts a PostgreSQL server");
    });
    return;
  }
  let netns: TestNetns;
  let drop: () => Promise<void>;
  let handle: DatabaseHandle;
  let env: Record<string, string>;
  const hubs: Record<"a" | "b" | "c", RunningHub> = {} as never;
  let guest: RunningGuest;
  let guestDir: string;
  let token: string;

  beforeAll(async () => {
    netns = createTestNetns();
    const scratch = await createScratchPostgresDatabase();
    drop = scratch.drop;
    // Short job windows so the link-down case ends in seconds; no local guests (a killed hub's would linger).
    env = { DATABASE_URL: scratch.url, LEASEHOLD_LOCAL_GUEST: "0", LEASEHOLD_JOB_CLAIM_WAIT_S: "3", LEASEHOLD_JOB_HEARTBEAT_LOST_S: "6", LEASEHOLD_MCP_RATE_PER_MINUTE: "100000", LEASEHOLD_MCP_APPROVAL_WAIT_S: "30" };
    // A starts first and is elected integrator; B (the guest's, on the namespace's veth) and C stand by.
    hubs.a = await startHub(env);
    hubs.c = await startHub({ ...env, LEASEHOLD_DATA_DIR: sharedKeyDir(hubs.a.dataDir) });
    hubs.b = await startHub({ ...env, LEASEHOLD_DATA_DIR: sharedKeyDir(hubs.a.dataDir), LEASEHOLD_HOST: netns.rootAddress });
    handle = await openPostgres(scratch.url, { max: 4 });
    guestDir = tempDir("lh-replica-guest-");
    guest = startGuest({
      hub: hubs.b.url,
      stateDir: path.join(guestDir, "state"),
      ceiling: writeCeiling(guestDir, path.join(guestDir, "ws")),
      code: await enrolCode(env, GUEST),
      insecureHttp: true,
      wrap: (argv) => netns.wrap(argv),
    });
    try {
      await waitForHost(handle.db, GUEST);
    } catch (error) {
      throw new Error(`${String(error)}\nguest:\n${guest.output()}\nhub b:\n${hubs.b.output()}`, { cause: error });
    }
    token = (await createTokenViaCli({ url: hubs.a.url, port: hubs.a.port, dataDir: hubs.a.dataDir, databaseUrl: scratch.url }, ["--name", "replicas", "--expires", "1d"])).secret;
  }, 240_000);

  afterAll(async () => {
    await guest?.kill();
    for (const hub of Object.values(hubs)) await hub.stop("SIGKILL");
    await handle?.close();
    await drop?.();
    unmountLeftovers([guestDir].filter((d) => d !== undefined));
    netns?.remove();
  }, 60_000);

  it("SIGKILL of the process holding a held call (also the integrator): the client has the action id within 5 s, the approval is dispatched with nobody waiting, it runs once, approval_wait elsewhere returns it; another integrator within 2 s; the log verifies", async () => {
    const health = async (hub: RunningHub) => (await fullHealth<{ ledger: { integrator: { state: string } } }>(hub, env)).ledger.integrator.state;
    expect(await health(hubs.a)).toBe("running");
    expect([await health(hubs.b), await health(hubs.c)]).toEqual(["standby", "standby"]);

    const { client } = await connectClient(hubs.a.url, token);
    const started = Date.now();
    const firstProgress = new Promise<Progress>((resolve) => {
      void client
        .callTool({ name: "run_command", arguments: { host: GUEST, command: "echo once >> once.log && wc -l < once.log" } }, CallToolResultSchema, { timeout: 90_000, onprogress: resolve })
        .catch(() => undefined);
    });
    const first = await Promise.race([firstProgress, new Promise<null>((r) => setTimeout(() => r(null), 5_000))]);
    expect(first, "no progress notification within 5 s").not.toBeNull();
    const heardMs = Date.now() - started;
    const meta = (first as Progress & { _meta?: Record<string, unknown> })._meta ?? {};
    const actionId = String(meta["leasehold/action_id"] ?? /action ([0-9a-f-]{36})/.exec(first!.message ?? "")?.[1]);
    expect(actionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(first!.message).toContain(actionId);
    expect(String(meta["leasehold/approval_url"])).toMatch(/\/approvals#[0-9a-f-]{36}$/);
    console.log(`the held call's first progress notification named action ${actionId} after ${heardMs} ms`);

    hubs.a.process.kill("SIGKILL");
    const killedAt = Date.now();
    await hubs.a.stop();

    // Another process takes over integration: an entry sealed after the kill (the approval) gets into a checkpoint.
    const [action] = await handle.db.select().from(actions).where(eq(actions.id, actionId));
    expect(action?.state).toBe("held");
    const approvalId = String((action?.result as { approval_id: string }).approval_id);
    await approve(handle.db, approvalId, await insertAdmin(handle.db));
    const [sealed] = await executeRows<{ id: string }>(handle.db, sql`select max(id)::text as id from ledger_entries`);
    await waitFor(
      "a checkpoint covering the approval",
      async () => (await executeRows<{ leaf: string | null }>(handle.db, sql`select leaf_index::text as leaf from ledger_entries where id = ${sealed!.id}::bigint`))[0]?.leaf != null,
      Math.max(200, 2_000 - (Date.now() - killedAt)),
      20,
    );
    console.log(`integrator failover: the approval sealed after the SIGKILL was in a checkpoint ${Date.now() - killedAt} ms after the kill`);
    expect([await health(hubs.b), await health(hubs.c)].sort()).toEqual(["running", "standby"]);

    // Nobody waits on the action: a remaining process dispatches it, the guest runs it.
    const done = await waitFor("the approved action to complete", async () => {
      const [row] = await handle.db.select().from(actions).where(eq(actions.id, actionId));
      return row?.state === "completed" ? row : undefined;
    }, 30_000, 100);
    expect(done.state).toBe("completed");

    const resumed = await connectClient(hubs.c.url, token);
    const result = await resumed.client.callTool({ name: "approval_wait", arguments: { action_id: actionId } }, CallToolResultSchema, { timeout: 60_000 });
    const body = result.structuredContent as { status: string; result: { output: { stdout: string } }; job: { id: string } };
    expect(body.status, JSON.stringify(body)).toBe("completed");
    expect(body.result.output.stdout).toBe("1\n");
    expect(await handle.db.select().from(jobs).where(eq(jobs.actionId, actionId))).toHaveLength(1);
    expect(await handle.db.select().from(evidence).where(eq(evidence.actionId, actionId))).toHaveLength(1);

    // The log, exported through a surviving replica, verifies from entry 0 with the one shared key.
    const dir = tempDir("lh-replica-export-");
    const exported = await runCli(["export", "--out", path.join(dir, "log.export")], { ...env, LEASEHOLD_DATA_DIR: hubs.c.dataDir });
    expect(exported.code, exported.stderr).toBe(0);
    const key = (await runCli(["ledger", "key"], { ...env, LEASEHOLD_DATA_DIR: hubs.c.dataDir })).stdout.trim();
    const verified = await runCli(["verify", path.join(dir, "log.export"), "--key", key]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  }, 120_000);

  it("a guest whose link goes down with its long-polls open: the job handed to one ends HOST_UNAVAILABLE (retryable, never ran), never unknown; with the link back the next job runs", async () => {
    const { client } = await connectClient(hubs.c.url, token);
    const call = (command: string) => client.callTool({ name: "run_command", arguments: { host: GUEST, command } }, CallToolResultSchema, { timeout: 90_000 });
    // The guest is idle: its long-polls wait on replica B.
    expect((await call("id")).isError).toBeFalsy();
    ip(["link", "set", netns.rootDev, "down"]);
    let lost: Awaited<ReturnType<typeof call>>;
    try {
      lost = await call("echo should-not-run");
    } finally {
      ip(["link", "set", netns.rootDev, "up"]);
    }
    const error = lost.structuredContent as { code: string; retryable: boolean; details?: { action_id?: string; action_state?: string } };
    expect(error.code, JSON.stringify(error)).toBe("HOST_UNAVAILABLE");
    expect(error.retryable).toBe(true);
    expect(error.details?.action_state).toBe("failed");
    const actionId = String(error.details?.action_id);
    const [row] = await handle.db.select().from(actions).where(eq(actions.id, actionId));
    expect(row?.state).toBe("failed");
    expect((await handle.db.select().from(jobs).where(eq(jobs.actionId, actionId)))[0]?.state).toBe("cancelled");
    expect(await handle.db.select().from(evidence).where(eq(evidence.actionId, actionId))).toHaveLength(0);
    const [unknown] = await executeRows<{ n: number }>(handle.db, sql`select count(*)::int as n from actions where state = 'unknown'`);
    expect(unknown?.n).toBe(0);

    // Link back: the guest reconnects and the next job runs.
    const back = await waitFor("a job to run after the link is back", async () => {
      const r = await call("echo back");
      const s = r.structuredContent as { status?: string; result?: { output: { stdout: string } } };
      return s.status === "completed" ? s : undefined;
    }, 90_000, 500);
    expect(back.result?.output.stdout).toBe("back\n");
  }, 240_000);
});
