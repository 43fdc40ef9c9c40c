/**
 * Cancellation end to end (docs/design.md#cancel): `leasehold start` on
 * embedded PGlite with its local guest and the real sandbox, tokens made
 * with the CLI, the official MCP SDK client over Streamable HTTP.
 *
 * A running `sleep 300` and a fork bomb held by pids_max are stopped by
 * `action_cancel`: the lease's cgroup is gone within seconds (measured from
 * the call), the result says `cancelled` with SIGKILL and the output so far,
 * and its evidence verifies with the key host_key serves. A held action is
 * withdrawn from the queue. The SDK client's AbortController
 * (notifications/cancelled), token revocation and session DELETE cancel
 * through the same path. Hostile: another token's action, twice, finished.
 */
import { createPublicKey } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyEvidence, type SignedEvidence } from "../../server/trust/evidence";
import { currentLayout } from "../../native/test/layout";
import { runCli, startHub, type RunningHub } from "../support/hub-process";
import { connectClient } from "../mcp/support";
import { waitFor } from "./support";

type Structured = Record<string, unknown> & {
  code?: string;
  status?: string;
  state?: string;
  stage?: string;
  action_id?: string;
  details?: Record<string, unknown>;
  result?: { state: string; exit: { code: number | null; signal: string | null; timed_out: boolean; cancelled?: boolean } | null; output: { stdout: string } };
  evidence?: { key_id: string; signed?: { envelope: unknown; signature: { alg: "Ed25519"; key_id: string; sig: string } } };
  approval?: { state: string } | null;
};

const structured = (r: unknown): Structured => ((r as CallToolResult).structuredContent ?? {}) as Structured;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const layout = currentLayout();

/** Parent pid of each process, from /proc. */
function parents(): Map<number, number> {
  const map = new Map<number, number>();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      map.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return map;
}

/** The lease cgroup directories of launches by a process below `root` (the hub, whose child is the local guest). */
function leaseDirsBelow(root: number): string[] {
  const ppid = parents();
  const below = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; p = ppid.get(p) ?? 0, hops += 1) if (p === root) return true;
    return false;
  };
  const found: string[] = [];
  for (const parent of layout.leaseParents) {
    if (!fs.existsSync(parent)) continue;
    for (const e of fs.readdirSync(parent, { withFileTypes: true })) {
      // lh.<pidns>.<pid>.<starttime>.<lease id>
      const owner = Number(e.name.split(".")[2]);
      if (e.isDirectory() && e.name.startsWith("lh.") && below(owner)) found.push(path.join(parent, e.name));
    }
  }
  return found;
}

describe("cancellation through a real MCP client → hub → local guest → sandbox [pglite]", () => {
  let hub: RunningHub;
  let runner: Client;
  let runnerToken: { id: string; secret: string };
  let judged: { client: Client; transport: StreamableHTTPClientTransport };
  let judgedToken: { id: string; secret: string };
  let other: Client;
  let hostKeyPem = "";
  const env = () => ({ LEASEHOLD_DATA_DIR: hub.dataDir });
  const createToken = async (args: string[]): Promise<{ id: string; secret: string }> => {
    const created = await runCli(["token", "create", "--expires", "1h", ...args], env());
    expect(created.code, created.stderr).toBe(0);
    const secret = created.stdout.split("\n").find((line) => line.startsWith("lh_"));
    const id = UUID.exec(created.stdout)?.[0];
    expect(secret && id).toBeTruthy();
    return { id: id!, secret: secret! };
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>, options: { signal?: AbortSignal; onprogress?: (p: { message?: string }) => void } = {}): Promise<Structured> =>
    structured((await client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: 90_000, ...options })) as CallToolResult);

  /** Starts a long run_command in the background; resolves with its action id once its workload has written output (running). */
  async function startRunning(client: Client, command: string, signal?: AbortSignal): Promise<{ actionId: string; call: Promise<Structured | Error> }> {
    let actionId: string | undefined;
    let running = false;
    const pending = call(client, "run_command", { host: "local", command }, {
      ...(signal === undefined ? {} : { signal }),
      onprogress: (p) => {
        actionId ??= UUID.exec(p.message ?? "")?.[0];
        if ((p.message ?? "").startsWith("running on") || /bytes of output so far \(stdout [1-9]/.test(p.message ?? "")) running = true;
      },
    }).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    await waitFor("the workload running (progress with output)", async () => running && actionId !== undefined, 60_000, 50);
    return { actionId: actionId!, call: pending };
  }

  beforeAll(async () => {
    hub = await startHub({ LEASEHOLD_MCP_APPROVAL_WAIT_S: "0" });
    runnerToken = await createToken(["--name", "runner", "--observe", "any"]);
    judgedToken = await createToken(["--name", "judged"]);
    ({ client: runner } = await connectClient(hub.url, runnerToken.secret));
    judged = await connectClient(hub.url, judgedToken.secret);
    ({ client: other } = await connectClient(hub.url, (await createToken(["--name", "other"])).secret));
    await waitFor("host local online", async () => ((await call(runner, "hosts_list", {})).hosts as Array<{ name: string; online: boolean }> | undefined)?.find((h) => h.name === "local" && h.online), 60_000, 300);
    hostKeyPem = String((await call(runner, "host_key", { host: "local" })).public_key_pem);
  }, 180_000);

  afterAll(async () => {
    await runner?.close();
    await judged?.client.close();
    await other?.close();
    await hub?.stop();
  }, 30_000);

  it("a running sandboxed sleep 300 is stopped by action_cancel: cgroup gone within seconds, result cancelled, evidence signed by the host", async () => {
    const { actionId, call: running } = await startRunning(runner, "echo started; sleep 300");
    expect(leaseDirsBelow(hub.process.pid!).length).toBeGreaterThan(0);
    const t0 = Date.now();
    const cancelled = await call(runner, "action_cancel", { action_id: actionId, reason: "no longer needed" });
    const answeredMs = Date.now() - t0;
    await waitFor("the lease cgroup removed", async () => leaseDirsBelow(hub.process.pid!).length === 0, 15_000, 20);
    const goneMs = Date.now() - t0;
    console.log(`cancel of a running sleep 300: action_cancel answered in ${answeredMs} ms, lease cgroup gone ${goneMs} ms after the call`);
    expect(goneMs).toBeLessThan(8_000);
    expect(cancelled).toMatchObject({ action_id: actionId, state: "cancelled", stage: "running", result: { state: "cancelled", exit: { code: null, signal: "SIGKILL", timed_out: false, cancelled: true } } });
    expect(cancelled.result?.output.stdout).toBe("started\n");
    const signed = cancelled.evidence?.signed as SignedEvidence | undefined;
    expect(signed).toBeDefined();
    const verified = verifyEvidence(signed, createPublicKey(hostKeyPem));
    expect(verified.ok).toBe(true);
    expect(signed!.envelope.exit).toMatchObject({ cancelled: true, signal: "SIGKILL" });
    // The waiting call (if still waiting) and approval_wait answer the same result.
    const original = await running;
    if (!(original instanceof Error) && original.status !== "dispatched") expect(original).toMatchObject({ status: "cancelled" });
    expect(await call(runner, "approval_wait", { action_id: actionId })).toMatchObject({ status: "cancelled", result: { state: "cancelled" } });
    expect(await call(runner, "approval_status", { action_id: actionId })).toMatchObject({ state: "cancelled" });
  }, 120_000);

  it("a fork bomb held by pids_max is stopped the same way: no process of the lease is left", async () => {
    const { actionId } = await startRunning(runner, "echo go; b() { b | b & }; b; sleep 300");
    const dirs = leaseDirsBelow(hub.process.pid!);
    const pidsDir = dirs.find((d) => fs.existsSync(path.join(d, "cgroup.procs")) && fs.readFileSync(path.join(d, "cgroup.procs"), "utf8").trim() !== "");
    expect(pidsDir).toBeDefined();
    const t0 = Date.now();
    const cancelled = await call(runner, "action_cancel", { action_id: actionId });
    await waitFor("the lease cgroup removed", async () => leaseDirsBelow(hub.process.pid!).length === 0, 15_000, 20);
    console.log(`cancel of a fork bomb: lease cgroup gone ${Date.now() - t0} ms after the call`);
    expect(cancelled).toMatchObject({ state: "cancelled", stage: "running", result: { exit: { cancelled: true } } });
    expect(fs.existsSync(pidsDir!)).toBe(false);
  }, 120_000);

  it("a held action is withdrawn: the approval queue no longer has it, approval_wait answers CANCELLED", async () => {
    const held = await call(judged.client, "run_command", { host: "local", command: "rm -rf ./cancel-me" });
    expect(held.code).toBe("APPROVAL_PENDING");
    const actionId = String(held.action_id ?? held.details?.["action_id"]);
    const approvalId = String(held.approval_id ?? held.details?.["approval_id"]);
    const before = await runCli(["approvals", "list"], env());
    expect(before.stdout).toContain(approvalId);
    expect(await call(judged.client, "action_cancel", { action_id: actionId, reason: "changed my mind" })).toMatchObject({ state: "cancelled", stage: "held" });
    const after = await runCli(["approvals", "list"], env());
    expect(after.stdout).not.toContain(approvalId);
    expect(await call(judged.client, "approval_wait", { action_id: actionId })).toMatchObject({ code: "CANCELLED" });
    expect(await call(judged.client, "approval_status", { action_id: actionId })).toMatchObject({ state: "cancelled", approval: { state: "cancelled" } });
  }, 60_000);

  it("hostile: another token's action is NOT_FOUND, a second cancel and a finished action are ACTION_FINISHED", async () => {
    const held = await call(judged.client, "run_command", { host: "local", command: "rm -rf ./mine" });
    const actionId = String(held.action_id ?? held.details?.["action_id"]);
    expect(await call(other, "action_cancel", { action_id: actionId })).toMatchObject({ code: "NOT_FOUND" });
    expect(await call(judged.client, "approval_status", { action_id: actionId })).toMatchObject({ state: "held" });
    expect(await call(judged.client, "action_cancel", { action_id: actionId })).toMatchObject({ state: "cancelled" });
    expect(await call(judged.client, "action_cancel", { action_id: actionId })).toMatchObject({ code: "ACTION_FINISHED", details: { state: "cancelled" } });
    let done = await call(runner, "run_command", { host: "local", command: "echo done" });
    for (let i = 0; i < 10 && done.status === "dispatched"; i += 1) done = await call(runner, "approval_wait", { action_id: String(done.action_id) });
    expect(done.status).toBe("completed");
    expect(await call(runner, "action_cancel", { action_id: String(done.action_id) })).toMatchObject({ code: "ACTION_FINISHED", details: { state: "completed" } });
    expect(await call(runner, "action_cancel", { action_id: "00000000-0000-4000-8000-000000000000" })).toMatchObject({ code: "NOT_FOUND" });
  }, 90_000);

  it("notifications/cancelled from the SDK client (AbortController on callTool) cancels the running action", async () => {
    const abort = new AbortController();
    const { actionId, call: pending } = await startRunning(runner, "echo started; sleep 300", abort.signal);
    const t0 = Date.now();
    abort.abort("the user pressed stop");
    expect(await pending).toBeInstanceOf(Error);
    const ended = await waitFor("the action cancelled", async () => {
      const s = await call(runner, "approval_status", { action_id: actionId });
      return s.state === "cancelled" ? s : undefined;
    }, 20_000, 100);
    await waitFor("the lease cgroup removed", async () => leaseDirsBelow(hub.process.pid!).length === 0, 15_000, 20);
    console.log(`notifications/cancelled: lease cgroup gone ${Date.now() - t0} ms after the abort`);
    expect(ended.state).toBe("cancelled");
    expect(await call(runner, "approval_wait", { action_id: actionId })).toMatchObject({ status: "cancelled", result: { exit: { cancelled: true } } });
  }, 120_000);

  it("session DELETE cancels the session's held actions", async () => {
    const session = await connectClient(hub.url, judgedToken.secret);
    const held = await call(session.client, "run_command", { host: "local", command: "rm -rf ./session-held" });
    const actionId = String(held.action_id ?? held.details?.["action_id"]);
    expect(held.code).toBe("APPROVAL_PENDING");
    await session.transport.terminateSession();
    await session.client.close();
    expect(await call(judged.client, "approval_status", { action_id: actionId })).toMatchObject({ state: "cancelled", approval: { state: "cancelled" } });
  }, 60_000);

  it("token revocation stops the token's running job", async () => {
    const doomed = await createToken(["--name", "doomed", "--observe", "any"]);
    const { client } = await connectClient(hub.url, doomed.secret);
    const { actionId } = await startRunning(client, "echo started; sleep 300");
    const t0 = Date.now();
    const revoked = await runCli(["token", "revoke", doomed.id], env());
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain("1 running job(s) told to stop");
    await waitFor("the lease cgroup removed", async () => leaseDirsBelow(hub.process.pid!).length === 0, 15_000, 20);
    console.log(`token revocation: lease cgroup gone ${Date.now() - t0} ms after the revoke command started`);
    expect(actionId).toMatch(UUID);
    await client.close().catch(() => undefined);
  }, 120_000);
});
