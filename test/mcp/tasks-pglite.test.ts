/**
 * MCP Tasks (docs/design.md#mcp-tasks) through the SDK's own experimental
 * task client, against a real hub on embedded PGlite with its local guest:
 * a held run_command as a task (input_required with the approval link,
 * approved with the CLI, completed with the synchronous call's result), a
 * denied one, an auto-allowed one, tasks/list per token, a hub restart
 * between the call and its result, and hostile requests (malformed params,
 * another token's task id, a tool that does not run as a task).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, ErrorCode, McpError, RELATED_TASK_META_KEY, type CallToolResult, type Task } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, runInRunningHub, startHub, type RunningHub } from "../support/hub-process";
import { waitFor } from "../guest/support";
import { connectClient, createTokenViaCli } from "./support";

type Structured = Record<string, unknown> & { code?: string; status?: string; action_id?: string; approval_id?: string; result?: { exit: { code: number } | null; output: { stdout: string } } };

const structured = (r: unknown): Structured => ((r as CallToolResult).structuredContent ?? {}) as Structured;
const APPROVAL_LINK = /\/approvals#([0-9a-f-]{36})/;

describe("MCP Tasks on a real hub [pglite]", () => {
  let hub: RunningHub;
  let client: Client;
  let other: Client;
  let secret: string;
  let otherSecret: string;
  const env = () => ({ LEASEHOLD_DATA_DIR: hub.dataDir });
  const hubEnv = { LEASEHOLD_MCP_APPROVAL_WAIT_S: "0" };

  const call = async (c: Client, name: string, args: Record<string, unknown>) => structured(await c.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: 60_000 }));
  const decide = async (verdict: "approve" | "deny", approvalId: string, reason?: string) => {
    const result = await runInRunningHub(hub.dataDir, ["approvals", verdict, approvalId, "--as", "ops", ...(reason === undefined ? [] : ["--reason", reason])]);
    expect(result.code, result.stderr + result.stdout).toBe(0);
  };
  /** Starts a task and returns its id; the first status is `working`, as the spec requires. */
  const startTask = async (c: Client, name: string, args: Record<string, unknown>): Promise<string> => {
    for await (const message of c.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: { ttl: 600_000 } })) {
      if (message.type === "taskCreated") {
        expect(message.task.status).toBe("working");
        return message.task.taskId;
      }
      if (message.type === "error") throw message.error;
    }
    throw new Error("no taskCreated message");
  };
  const waitForStatus = (c: Client, taskId: string, statuses: Task["status"][]) =>
    waitFor(`task ${taskId} ${statuses.join("/")}`, async () => {
      const task = await c.experimental.tasks.getTask(taskId);
      return statuses.includes(task.status) ? task : undefined;
    }, 30_000, 200);
  const rpcError = async (promise: Promise<unknown>): Promise<McpError> => {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpError);
    return error as McpError;
  };

  beforeAll(async () => {
    hub = await startHub(hubEnv);
    ({ secret } = await createTokenViaCli(hub, ["--name", "tasks", "--expires", "1h"]));
    const second = await createTokenViaCli(hub, ["--name", "tasks-other", "--expires", "1h"]);
    otherSecret = second.secret;
    ({ client } = await connectClient(hub.url, secret));
    ({ client: other } = await connectClient(hub.url, second.secret));
    const admin = await runInRunningHub(hub.dataDir, ["admin", "create", "--name", "ops"]);
    expect(admin.code, admin.stderr).toBe(0);
    await waitFor("host local online", async () => {
      const listing = (await call(client, "hosts_list", {})) as { hosts?: Array<{ name: string; online: boolean }> };
      return listing.hosts?.find((h) => h.name === "local" && h.online);
    }, 30_000, 300);
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await other?.close();
    await hub?.stop();
  }, 30_000);

  it("the server declares tasks (tools/call, list, cancel); pipeline tools are listed with taskSupport optional, hub tools without", async () => {
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const tools = (await client.listTools()).tools;
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport ?? "forbidden"]));
    for (const name of ["run_command", "fs_write", "rollback", "run_code", "fs_read"]) expect(support[name], name).toBe("optional");
    for (const name of ["hosts_list", "approval_wait", "lease_acquire", "health"]) expect(support[name], name).toBe("forbidden");
  }, 30_000);

  it("a held run_command as a task: input_required with the approval link, approved with the CLI, completed with the synchronous call's result", async () => {
    const messages: string[] = [];
    let result: CallToolResult | undefined;
    let taskId = "";
    for await (const message of client.experimental.tasks.callToolStream({ name: "run_command", arguments: { host: "local", command: "touch task-approved" } }, CallToolResultSchema, { task: { ttl: 600_000 }, timeout: 60_000 })) {
      messages.push(message.type === "taskStatus" ? `status:${message.task.status}` : message.type);
      if (message.type === "taskCreated") taskId = message.task.taskId;
      if (message.type === "taskStatus" && message.task.status === "input_required") {
        // The same link the progress text gives: <public URL>/approvals#<approval id>.
        const link = APPROVAL_LINK.exec(message.task.statusMessage ?? "");
        expect(link, message.task.statusMessage).not.toBeNull();
        await decide("approve", link![1]!);
      }
      if (message.type === "result") result = message.result as CallToolResult;
      if (message.type === "error") throw message.error;
    }
    expect(messages).toEqual(["taskCreated", "status:input_required", "result"]);
    const s = structured(result);
    expect(s.status, JSON.stringify(s)).toBe("completed");
    expect(s.decision).toBe("approved");
    expect(s.result?.exit?.code).toBe(0);
    expect(result!._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe("completed");
    // What the synchronous path answers for the same action (approval_wait replays it) is the same result.
    const sync = await client.callTool({ name: "approval_wait", arguments: { action_id: s.action_id } }, CallToolResultSchema, { timeout: 60_000 });
    expect({ ...structured(sync), replayed: false }).toEqual({ ...s, replayed: false });
    // tasks/result again: the same result, not a new run.
    const again = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(structured(again)).toEqual(s);
  }, 90_000);

  it("a denied task ends failed, and tasks/result returns the APPROVAL_DENIED result approval_wait gives", async () => {
    const taskId = await startTask(client, "run_command", { host: "local", command: "touch task-denied" });
    const held = await waitForStatus(client, taskId, ["input_required"]);
    await decide("deny", APPROVAL_LINK.exec(held.statusMessage ?? "")![1]!, "not today");
    const failed = await waitForStatus(client, taskId, ["failed"]);
    expect(failed.statusMessage).toMatch(/^APPROVAL_DENIED/);
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    const s = structured(result);
    expect(s.code).toBe("APPROVAL_DENIED");
    expect(s.message).toContain("not today");
    const sync = await client.callTool({ name: "approval_wait", arguments: { action_id: s.action_id } }, CallToolResultSchema, { timeout: 60_000 });
    expect(structured(sync)).toEqual(s);
    expect(sync.content).toEqual(result.content);
  }, 60_000);

  it("an auto-allowed read-only command as a task completes with the same result shape and output as the synchronous call", async () => {
    const taskId = await startTask(client, "run_command", { host: "local", command: "echo task-read-only" });
    await waitForStatus(client, taskId, ["completed"]);
    const s = structured(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema));
    const sync = await call(client, "run_command", { host: "local", command: "echo task-read-only" });
    expect(s.status, JSON.stringify(s)).toBe("completed");
    expect(Object.keys(s).sort()).toEqual(Object.keys(sync).sort());
    expect(s.result?.output.stdout).toBe(sync.result?.output.stdout);
    expect([s.decision, s.operation, s.host, s.risk]).toEqual([sync.decision, sync.operation, sync.host, sync.risk]);
  }, 60_000);

  it("a refused call as a task fails with the synchronous refusal (INVALID_ARGUMENT from the pipeline)", async () => {
    const args = { host: "local", command: 42 };
    const taskId = await startTask(client, "run_command", args);
    const task = await waitForStatus(client, taskId, ["failed"]);
    expect(task.statusMessage).toMatch(/^INVALID_ARGUMENT/);
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    const sync = await client.callTool({ name: "run_command", arguments: args }, CallToolResultSchema);
    expect(structured(result)).toEqual(structured(sync));
  }, 60_000);

  it("tasks/list shows this token's tasks only; another token's task id is not found by get, result or cancel", async () => {
    const mine = await startTask(client, "run_command", { host: "local", command: "echo listed" });
    const theirs = await startTask(other, "run_command", { host: "local", command: "echo theirs" });
    const listed = (await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
    expect(listed).toContain(mine);
    expect(listed).not.toContain(theirs);
    const otherListed = (await other.experimental.tasks.listTasks()).tasks.map((t) => t.taskId);
    expect(otherListed).toEqual([theirs]);
    for (const attempt of [client.experimental.tasks.getTask(theirs), client.experimental.tasks.getTaskResult(theirs, CallToolResultSchema), client.experimental.tasks.cancelTask(theirs)]) {
      const error = await rpcError(attempt);
      expect(error.code).toBe(ErrorCode.InvalidParams);
      expect(error.message).toContain("Task not found");
    }
  }, 60_000);

  it("hostile: a bad or malformed task id, malformed task params, a bad cursor, and task augmentation on a tool that does not support it are JSON-RPC errors", async () => {
    const raw = (method: string, params: unknown) => client.request({ method, params } as never, z.unknown());
    // A task of this case's own, so the last check does not lean on another case having run first.
    const own = await startTask(client, "run_command", { host: "local", command: "echo hostile-own" });
    for (const taskId of ["00000000-0000-4000-8000-000000000000", "not-a-uuid", "'; drop table mcp_tasks; --", "x".repeat(5000)]) {
      const error = await rpcError(client.experimental.tasks.getTask(taskId));
      expect(error.code, taskId.slice(0, 20)).toBe(ErrorCode.InvalidParams);
    }
    for (const params of [{ taskId: 42 }, {}, { taskId: null }]) expect((await rpcError(raw("tasks/get", params))).code).toBe(ErrorCode.InvalidParams);
    expect((await rpcError(raw("tasks/result", { taskId: ["x"] }))).code).toBe(ErrorCode.InvalidParams);
    expect((await rpcError(raw("tasks/list", { cursor: "Z2FyYmFnZQ" }))).code).toBe(ErrorCode.InvalidParams);
    const before = (await client.experimental.tasks.listTasks()).tasks.length;
    // A malformed tools/call is refused by the SDK's own request check (-32603, as for any malformed tools/call) and creates no task.
    expect((await rpcError(raw("tools/call", { name: "run_command", arguments: { host: "local", command: "echo x" }, task: { ttl: "soon" } }))).code).toBe(ErrorCode.InternalError);
    expect((await client.experimental.tasks.listTasks()).tasks.length).toBe(before);
    expect((await rpcError(raw("tools/call", { name: "hosts_list", arguments: {}, task: {} }))).code).toBe(ErrorCode.MethodNotFound);
    // The table is still there and answers.
    expect((await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(own);
  }, 60_000);

  it("tasks/cancel of a held task cancels its action through cancelAction: the approval leaves the queue, the task is cancelled, a second cancel is refused", async () => {
    const taskId = await startTask(client, "run_command", { host: "local", command: "touch task-cancel" });
    const held = await waitForStatus(client, taskId, ["input_required"]);
    const approvalId = APPROVAL_LINK.exec(held.statusMessage ?? "")![1]!;
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe("cancelled");
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe("cancelled");
    // The same path every channel takes: the approval is withdrawn, so a person has nothing left to decide.
    const shown = await runCli(["approvals", "show", approvalId], env());
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/cancelled/);
    const decided = await runCli(["approvals", "approve", approvalId, "--as", "ops"], env());
    expect(decided.code).not.toBe(0);
    // Terminal now: cancelling again is refused as the specification says.
    expect((await rpcError(client.experimental.tasks.cancelTask(taskId))).code).toBe(ErrorCode.InvalidParams);
  }, 60_000);

  it("a task survives a hub restart between the call and its result", async () => {
    const taskId = await startTask(client, "run_command", { host: "local", command: "touch task-restart" });
    await waitForStatus(client, taskId, ["input_required"]);
    await client.close();
    await other.close();
    await hub.stop();
    // The same port: the local guest enrolled against this address.
    hub = await startHub({ ...hubEnv, LEASEHOLD_DATA_DIR: hub.dataDir, LEASEHOLD_PORT: String(hub.port) });
    // Both clients again: the tests run in shuffled order, and later ones use the other token's client too.
    ({ client } = await connectClient(hub.url, secret));
    ({ client: other } = await connectClient(hub.url, otherSecret));
    const held = await waitForStatus(client, taskId, ["input_required"]);
    // The approved job needs the host's guest back (a restarted hub restarts its local guest), or it ends
    // HOST_UNAVAILABLE, which the task would then report: wait until a command runs again.
    await waitFor("the local guest runs jobs again", async () => (await call(client, "run_command", { host: "local", command: "echo ready" })).status === "completed", 90_000, 500);
    await decide("approve", APPROVAL_LINK.exec(held.statusMessage ?? "")![1]!);
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: 60_000 });
    const s = structured(result);
    expect(s.status, JSON.stringify(s)).toBe("completed");
    expect(s.result?.exit?.code).toBe(0);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe("completed");
  }, 150_000);
});
