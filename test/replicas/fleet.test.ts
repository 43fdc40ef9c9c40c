/**
 * test-group: serial — three hubs, HAProxy and four real guests, each in a network namespace of the test's own.
 * A fleet behind the balancer: four guests, each in a network namespace
 * the test creates (test/support/netns.ts: a veth pair on addresses only
 * inside it), enrolled through HAProxy — listening on the root end of the
 * first namespace's veth, the hub's public URL, which the other namespaces
 * reach through their own veth — and served by three hub processes on one
 * PostgreSQL.
 *
 * - 40 `run_command` calls at once, ten per host, through the balancer:
 *   exactly 40 actions, 40 jobs and 40 evidence rows, each call's own
 *   output back to it.
 * - `leasehold host list` shows each guest's own address (from HAProxy's
 *   X-Forwarded-For, trusted through LEASEHOLD_TRUSTED_PROXIES), never the
 *   balancer's 127.0.0.1.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres, type DatabaseHandle } from "../../server/db";
import { actions, evidence, hosts, jobs } from "../../server/db/schema";
import { enrolCode, startGuest, unmountLeftovers, waitForHost, writeCeiling, type RunningGuest } from "../guest/support";
import { startCluster, type Cluster } from "../support/cluster";
import { runCli, tempDir } from "../support/hub-process";
import { mcpSession, mcpTool, outcome, structured } from "../support/mcp-http";
import { createTestNetns, type TestNetns } from "../support/netns";

const GUESTS = 4;

function ip(args: string[]): void {
  const r = spawnSync("ip", args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`ip ${args.join(" ")}: ${r.stderr}`);
}
const CALLS_PER_HOST = 10;

let cluster: Cluster;
let handle: DatabaseHandle;
const namespaces: TestNetns[] = [];
const guests: RunningGuest[] = [];
const guestDirs: string[] = [];
const names = Array.from({ length: GUESTS }, (_, i) => `fleet-${i}`);
let token: string;

function cliEnv(): Record<string, string | undefined> {
  const hub = cluster.hubs[0]!;
  return cluster.hubEnv({ LEASEHOLD_DATA_DIR: hub.dataDir, LEASEHOLD_PORT: String(hub.port) });
}

beforeAll(async () => {
  for (let i = 0; i < GUESTS; i++) namespaces.push(createTestNetns());
  // One public address for the whole fleet, as a real balancer has: the first namespace's root end. The
  // others reach it through their own veth (a host route inside each namespace); the root namespace
  // delivers it locally whichever veth it came in on.
  const publicAddress = namespaces[0]!.rootAddress;
  for (const ns of namespaces.slice(1)) ip(["-n", ns.name, "route", "add", `${publicAddress}/32`, "dev", ns.nsDev]);
  cluster = await startCluster({ replicas: 3, trustProxy: true, publicAddress, env: { LEASEHOLD_MCP_RATE_PER_MINUTE: "100000", LEASEHOLD_MCP_MAX_CONCURRENT_REQUESTS: "64" } });
  handle = await openPostgres(cluster.databaseUrl, { max: 4 });
  for (const [i, ns] of namespaces.entries()) {
    const dir = tempDir("lh-fleet-guest-");
    guestDirs.push(dir);
    guests.push(
      startGuest({
        // Through the balancer, at its public URL.
        hub: cluster.url,
        stateDir: path.join(dir, "state"),
        ceiling: writeCeiling(dir, path.join(dir, "ws")),
        code: await enrolCode(cliEnv(), names[i]!),
        insecureHttp: true,
        wrap: (argv) => ns.wrap(argv),
      }),
    );
  }
  try {
    await Promise.all(names.map((name) => waitForHost(handle.db, name)));
  } catch (error) {
    throw new Error(`${String(error)}\n${guests.map((g, i) => `guest ${i}:\n${g.output()}`).join("\n")}`, { cause: error });
  }
  const made = await runCli(["token", "create", "--name", "fleet", "--expires", "1h"], cliEnv());
  const secret = made.stdout.split("\n").find((line) => line.startsWith("lh_"));
  if (made.code !== 0 || secret === undefined) throw new Error(`token create failed: ${made.stderr}${made.stdout}`);
  token = secret;
}, 300_000);

afterAll(async () => {
  await Promise.all(guests.map((g) => g.kill()));
  await handle?.close();
  await cluster?.stop();
  unmountLeftovers(guestDirs);
  for (const ns of namespaces) ns.remove();
}, 90_000);

describe(`${GUESTS} guests in network namespaces of their own, enrolled through HAProxy in front of 3 hub processes`, () => {
  it(`${GUESTS * CALLS_PER_HOST} calls at once over ${GUESTS} hosts through the balancer: exactly ${GUESTS * CALLS_PER_HOST} actions, jobs and evidence rows, each call's own output`, async () => {
    const sessions = await Promise.all(names.map(() => mcpSession(cluster.url, token)));
    const before = await cluster.serverCounts();
    const calls = names.flatMap((host, h) =>
      Array.from({ length: CALLS_PER_HOST }, async (_, n) => {
        const marker = `${host}-call-${n}`;
        const answer = await mcpTool(cluster.url, token, sessions[h]!, "run_command", { host, command: `echo ${marker}` }, 120_000);
        return { marker, answer };
      }),
    );
    const answers = await Promise.all(calls);
    const failed = answers.filter((a) => outcome(a.answer) !== "ok").map((a) => `${a.marker}: ${outcome(a.answer)} ${JSON.stringify(a.answer.message).slice(0, 300)}`);
    expect(failed).toEqual([]);
    for (const { marker, answer } of answers) {
      const body = structured<{ status: string; result: { output: { stdout: string } } }>(answer);
      expect(body.status).toBe("completed");
      expect(body.result.output.stdout).toBe(`${marker}\n`);
    }
    const after = await cluster.serverCounts();
    const served = Object.fromEntries(Object.keys(after).map((name) => [name, (after[name] ?? 0) - (before[name] ?? 0)]));
    console.info(`fleet: ${answers.length} calls served by ${JSON.stringify(served)} (HAProxy's counts, guests' long-polls included)`);
    for (const name of Object.keys(after)) expect(served[name], `${name} served none of the calls`).toBeGreaterThan(0);

    const hostRows = await handle.db.select({ id: hosts.id }).from(hosts).where(inArray(hosts.name, names));
    expect(hostRows).toHaveLength(GUESTS);
    const ids = hostRows.map((r) => r.id);
    const actionRows = await handle.db.select({ id: actions.id }).from(actions).where(inArray(actions.hostId, ids));
    expect(actionRows).toHaveLength(GUESTS * CALLS_PER_HOST);
    const actionIds = actionRows.map((r) => r.id);
    expect(await handle.db.select({ id: jobs.id }).from(jobs).where(inArray(jobs.actionId, actionIds))).toHaveLength(GUESTS * CALLS_PER_HOST);
    expect(await handle.db.select({ id: evidence.id }).from(evidence).where(inArray(evidence.actionId, actionIds))).toHaveLength(GUESTS * CALLS_PER_HOST);
  }, 300_000);

  it("`leasehold host list` shows each guest's own address behind the balancer, never 127.0.0.1", async () => {
    const listed = await runCli(["host", "list"], cliEnv());
    expect(listed.code, listed.stderr).toBe(0);
    for (const [i, name] of names.entries()) {
      const line = listed.stdout.split("\n").find((l) => l.startsWith(`${name} `));
      expect(line, listed.stdout).toBeDefined();
      expect(line).toContain(` from ${namespaces[i]!.nsAddress}`);
    }
    expect(listed.stdout).not.toMatch(/fleet-\d .* from 127\.0\.0\.1/);
  }, 60_000);
});
