/**
 * test-group: serial — three hubs and HAProxy with timed readiness checks; a second file beside it on 2 cores stretches the checks it measures.
 * Three hub processes behind a real HAProxy on one PostgreSQL, as
 * docs/deploy.md sets them up (test/support/cluster.ts): one MCP session
 * served by all three, revocation seen by all at once, one rate limit for
 * the whole hub, sign-in throttling by the real client address (HAProxy's
 * X-Forwarded-For from a trusted proxy only), a draining replica taken out
 * by the readiness check within two checks while its call finishes, and a
 * replica with keys of its own refused at start.
 */
import http from "node:http";
import path from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../guest/support";
import { CHECK_FALL, CHECK_INTERVAL_MS, startCluster, type Cluster } from "../support/cluster";
import { within } from "../support/deadline";
import { childEnv, LEASEHOLD_BIN, runCli, runProcess, startHub, tempDir } from "../support/hub-process";
import { INITIALIZE, RPC_HEADERS } from "../mcp/support";

const RATE_PER_MINUTE = 60;
/** The bucket's size at 60/min: a quarter of a minute's allowance, at least 10 (server/limits/buckets.ts). */
const BURST = 15;

let cluster: Cluster;
let sql: postgres.Sql;

/** A request from a chosen loopback source address (127.0.0.0/8 is all ours), as a distinct client. */
function request(url: string, options: { method?: string; headers?: Record<string, string>; body?: string; from?: string }): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? "GET", headers: options.headers, localAddress: options.from, agent: false }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

function cliEnv(hubIndex = 0): Record<string, string | undefined> {
  const hub = cluster.hubs[hubIndex]!;
  return cluster.hubEnv({ LEASEHOLD_DATA_DIR: hub.dataDir, LEASEHOLD_PORT: String(hub.port) });
}

async function createToken(name: string): Promise<{ id: string; secret: string }> {
  const made = await runCli(["token", "create", "--name", name, "--expires", "1h"], cliEnv());
  const secret = made.stdout.split("\n").find((line) => line.startsWith("lh_"));
  const id = /token ([0-9a-f-]{36}) /.exec(made.stdout)?.[1];
  if (made.code !== 0 || secret === undefined || id === undefined) throw new Error(`token create failed (${made.code}): ${made.stderr}${made.stdout}`);
  return { id, secret };
}

function mcpHeaders(token: string, sessionId?: string): Record<string, string> {
  return { ...RPC_HEADERS, authorization: `Bearer ${token}`, ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId }) };
}

async function initialize(url: string, token: string): Promise<string> {
  const res = await request(`${url}/api/mcp`, { method: "POST", headers: mcpHeaders(token), body: JSON.stringify(INITIALIZE) });
  const sessionId = res.headers["mcp-session-id"];
  if (res.status !== 200 || typeof sessionId !== "string") throw new Error(`initialize answered ${res.status}: ${res.body}`);
  const initialized = await request(`${url}/api/mcp`, { method: "POST", headers: mcpHeaders(token, sessionId), body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) });
  if (initialized.status !== 202) throw new Error(`notifications/initialized answered ${initialized.status}: ${initialized.body}`);
  return sessionId;
}

function ping(url: string, token: string, sessionId: string, id: number) {
  return request(`${url}/api/mcp`, { method: "POST", headers: mcpHeaders(token, sessionId), body: JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }) });
}

/** Requests each server took, as HAProxy counts them (column `stot` of `show stat`). */
async function servedBy(): Promise<Record<string, number>> {
  return cluster.serverCounts();
}

beforeAll(async () => {
  cluster = await startCluster({ replicas: 3, trustProxy: true, env: { LEASEHOLD_MCP_RATE_PER_MINUTE: String(RATE_PER_MINUTE), LEASEHOLD_DRAIN_S: "20" } });
  sql = postgres(cluster.databaseUrl, { max: 2, onnotice: () => undefined });
}, 240_000);

afterAll(async () => {
  await sql?.end({ timeout: 5 });
  await cluster?.stop();
});

describe("three hub processes behind HAProxy on one PostgreSQL", () => {
  it("every replica prints the same key ids (one hub identity from the shared key directory)", async () => {
    // /api/health answers as soon as the listener is bound; the start-up lines follow it.
    await waitFor("every replica's start-up lines", async () => (cluster.hubs.every((hub) => hub.output().includes("stop with Ctrl-C")) ? true : undefined), 30_000, 50);
    const keyLines = cluster.hubs.map((hub) => /^ {2}keys: +(.*)$/m.exec(hub.output())?.[1]);
    expect(keyLines[0], cluster.hubs[0]!.output()).toMatch(/^job-signing [0-9a-f]{16}, ledger log [0-9a-f]{8} \(in /);
    expect(new Set(keyLines).size).toBe(1);
  });

  it("a replica whose keys are not the pinned ones refuses to start with one line naming both key ids", async () => {
    const { freePort } = await import("../../tools/lib/postgres.mjs");
    const env = childEnv(cluster.hubEnv({ LEASEHOLD_KEY_DIR: path.join(tempDir(), "own-keys"), LEASEHOLD_DATA_DIR: path.join(tempDir(), "data"), LEASEHOLD_PORT: String(await freePort()) }));
    const started = await runProcess(process.execPath, [LEASEHOLD_BIN, "start"], { env, timeoutMs: 45_000, label: "a replica with keys of its own" });
    expect(started.code, started.stdout).not.toBe(0);
    const lines = started.stderr.trim().split("\n");
    expect(lines, started.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/job-signing key [0-9a-f]{16} .* is not the hub's pinned job key [0-9a-f]{16}; every hub process on one DATABASE_URL must hold the same keys/);
    expect(lines[0]).toContain("LEASEHOLD_KEY_DIR");
  });

  it("one MCP session is served by all three processes, request after request", async () => {
    const token = await createToken("hop");
    const sessionId = await initialize(cluster.url, token.secret);
    const before = await servedBy();
    for (let i = 0; i < 9; i++) expect((await ping(cluster.url, token.secret, sessionId, 10 + i)).status).toBe(200);
    const after = await servedBy();
    const live = cluster.hubs.map((_, i) => `hub${i}`);
    for (const name of live) expect((after[name] ?? 0) - (before[name] ?? 0), `${name} served none of the 9`).toBeGreaterThanOrEqual(2);
  });

  it("a token revoked through one process is refused by every process on its next request", async () => {
    const token = await createToken("revoked");
    const sessionId = await initialize(cluster.url, token.secret);
    for (const hub of cluster.hubs) expect((await ping(hub.url, token.secret, sessionId, 1)).status).toBe(200);
    const revoked = await runCli(["token", "revoke", token.id], cliEnv(1));
    expect(revoked.code, revoked.stderr).toBe(0);
    for (const hub of cluster.hubs) {
      const res = await ping(hub.url, token.secret, sessionId, 2);
      expect(res.status, `${hub.url}: ${res.body}`).toBe(401);
      expect(res.body).toContain("revoked");
    }
  });

  it(`the MCP rate limit is one bucket for the whole hub: ${RATE_PER_MINUTE}/min lets through what one process lets through`, async () => {
    const token = await createToken("rate");
    const began = Date.now();
    const sessionId = await initialize(cluster.url, token.secret);
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await ping(cluster.url, token.secret, sessionId, 100 + i)).status);
    const seconds = (Date.now() - began) / 1000;
    // initialize + notifications/initialized took two; the bucket refills one a second.
    const through = statuses.filter((s) => s === 200).length + 2;
    const allowance = BURST + Math.ceil(seconds * (RATE_PER_MINUTE / 60));
    console.info(`replicas: MCP rate limit ${RATE_PER_MINUTE}/min over 3 processes: ${through} of 62 through in ${seconds.toFixed(1)} s (one process allows ${allowance})`);
    expect(statuses.filter((s) => s !== 200 && s !== 429), JSON.stringify(statuses)).toEqual([]);
    expect(through, `${through} of 62 through in ${seconds.toFixed(1)} s; one process allows ${allowance}`).toBeLessThanOrEqual(allowance + 2);
    expect(through).toBeGreaterThanOrEqual(BURST);
  });

  it("sign-in throttling counts the real client address behind HAProxy; a spoofed X-Forwarded-For changes nothing", async () => {
    const name = `owner-${process.pid}`;
    const made = await runCli(["admin", "create", "--name", name, "--role", "owner"], cliEnv());
    const password = /^password: (\S+)$/m.exec(made.stdout)?.[1];
    expect(password, made.stdout + made.stderr).toBeDefined();
    const signIn = (pass: string, from: string, url = cluster.url, headers: Record<string, string> = {}) =>
      request(`${url}/api/trpc/auth.signIn`, { method: "POST", from, headers: { origin: cluster.url, "content-type": "application/json", ...headers }, body: JSON.stringify({ username: name, password: pass }) });
    // A guesser at 127.0.0.7 claims to be the owner's address in X-Forwarded-For; HAProxy appends the real one.
    for (let i = 0; i < 5; i++) expect((await signIn(`guess-${i}`, "127.0.0.7", cluster.url, { "x-forwarded-for": "127.0.0.8" })).status).toBe(401);
    const guesser = await signIn(password!, "127.0.0.7");
    expect(guesser.status, guesser.body).toBe(429);
    expect(guesser.body).toContain("for this name from this address");
    // Straight to a hub from an address that is not a trusted proxy: its X-Forwarded-For is not read.
    for (let i = 0; i < 5; i++) expect((await signIn(`direct-${i}`, "127.0.0.9", cluster.hubs[2]!.url, { "x-forwarded-for": "127.0.0.8" })).status).toBe(401);
    // The owner, at 127.0.0.8 through the balancer, is not locked out by either.
    const owner = await signIn(password!, "127.0.0.8");
    expect(owner.status, owner.body).toBe(200);
    // The guesser's failures were counted under its own address, not the balancer's or the spoofed one.
    const rows = await sql<{ n: number }[]>`select count(*)::int as n from limit_windows where key like ${`signin\n%\n127.0.0.7\n${name}`}`;
    expect(rows[0]?.n).toBe(1);
  });

  it(`SIGTERM: the replica answers 503 on /api/ready, HAProxy takes it out within ${CHECK_FALL} checks, its in-flight call finishes, calls through the balancer keep succeeding, then it exits 0`, async () => {
    const victim = 2;
    const hub = cluster.hubs[victim]!;
    const token = await createToken("drain");
    const sessionId = await initialize(cluster.url, token.secret);
    // An MCP call held open on the victim: its body arrives in two halves.
    const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" });
    let heldRequest: http.ClientRequest | undefined;
    const held = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${hub.url}/api/mcp`, { method: "POST", headers: { ...mcpHeaders(token.secret, sessionId), "content-length": String(body.length) }, agent: false }, (res) => {
        let text = "";
        res.on("data", (d: Buffer) => (text += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on("error", reject);
      req.write(body.slice(0, 10));
      heldRequest = req;
    });
    await waitFor("the held call counted in flight", async () => {
      const [row] = await sql<{ n: number }[]>`select coalesce(sum(total), 0)::int as n from limit_in_flight where key = ${`mcp-requests:${token.id}`}`;
      return (row?.n ?? 0) >= 1 ? true : undefined;
    }, 10_000, 50);
    const exited = new Promise<number | null>((resolve) => hub.process.once("exit", (code) => resolve(code)));
    const signalled = Date.now();
    hub.process.kill("SIGTERM");
    await waitFor("readiness 503", async () => {
      const res = await request(`${hub.url}/api/ready`, {});
      return res.status === 503 ? res : undefined;
    }, 5_000, 20).then((res) => expect(JSON.parse(res.body)).toEqual({ ready: false, reason: "draining" }));
    // A new call straight to the draining process is refused before anything is done.
    const refused = await ping(hub.url, token.secret, sessionId, 8);
    expect(refused.status).toBe(503);
    expect(refused.body).toContain("HUB_STOPPING");
    await waitFor("HAProxy marks the draining hub DOWN", async () => ((await cluster.serverStates())[`hub${victim}`]?.startsWith("DOWN") === true ? true : undefined), 10_000, 20);
    const outAfterMs = Date.now() - signalled;
    console.info(`replicas: HAProxy took the draining hub out ${outAfterMs} ms after SIGTERM (checks every ${CHECK_INTERVAL_MS} ms, fall ${CHECK_FALL})`);
    // fall 2: two failed checks, the first at most one interval after the signal.
    expect(outAfterMs, `taken out after ${outAfterMs} ms`).toBeLessThanOrEqual((CHECK_FALL + 1) * CHECK_INTERVAL_MS + 1_000);
    for (let i = 0; i < 6; i++) expect((await ping(cluster.url, token.secret, sessionId, 20 + i)).status).toBe(200);
    expect(hub.process.exitCode).toBeNull();
    heldRequest!.end(body.slice(10));
    const answer = await within("the draining hub's answer to its held call", 30_000, held);
    expect(answer.status, answer.body).toBe(200);
    expect(await within("the draining hub to exit", 45_000, exited), hub.output().slice(-3000)).toBe(0);
    expect(hub.output()).toContain("draining: /api/ready answers 503");
    // Put the replica back for the other cases (same port and data directory): HAProxy takes it in again.
    cluster.hubs[victim] = await startHub(cluster.hubEnv({ LEASEHOLD_PORT: String(hub.port), LEASEHOLD_DATA_DIR: hub.dataDir }));
    await waitFor("HAProxy takes the replica back", async () => ((await cluster.serverStates())[`hub${victim}`] === "UP" ? true : undefined), 15_000, 50);
  });
});
