/**
 * A held action as an MCP Task (docs/design.md#mcp-tasks), decided in the
 * browser: the official SDK's experimental task client starts a
 * task-augmented `run_command`, sees `working` then `input_required` with
 * the approval link, an approver approves the row in the queue, and the task
 * ends `completed` with the command's output — the statuses the client saw
 * are recorded in order.
 */
import { CallToolResultSchema, type CallToolResult, type Task } from "@modelcontextprotocol/sdk/types.js";
import { expect, test } from "@playwright/test";
import { signedInAs } from "./support/admins";
import { closeOpenAgents, connectAgent } from "./support/mcp-agent";
import { approveButton, openItem, queueItem } from "./support/queue";

test.afterAll(async () => {
  await closeOpenAgents();
});

test("a task-augmented held call goes working → input_required → completed after an approval given in the browser", async ({ page }) => {
  test.setTimeout(180_000);
  const agent = await connectAgent("tasks");
  // "-cmd-": never a substring of the agent's token name, which the row shows too.
  const marker = `task-cmd-${process.pid}`;
  const command = `chmod -f 600 lh-${marker}; echo ${marker}`;
  const tasks = agent.client.experimental.tasks;

  let taskId: string | undefined;
  const seen: Task["status"][] = [];
  for await (const message of tasks.callToolStream({ name: "run_command", arguments: { host: "local", command } }, CallToolResultSchema, { task: { ttl: 600_000 } })) {
    if (message.type === "taskCreated") {
      taskId = message.task.taskId;
      seen.push(message.task.status);
      break;
    }
    if (message.type === "error") throw message.error;
  }
  expect(taskId).toBeDefined();
  expect(seen).toEqual(["working"]);
  const status = async (): Promise<Task> => {
    const task = await tasks.getTask(taskId!);
    if (seen.at(-1) !== task.status) seen.push(task.status);
    return task;
  };
  await expect.poll(async () => (await status()).status, { timeout: 60_000 }).toBe("input_required");
  const held = await status();
  expect(held.statusMessage).toMatch(/\/approvals#[0-9a-f-]{36}/);

  await signedInAs(page, "approver");
  await page.goto("/approvals");
  const item = await openItem(queueItem(page, marker));
  await approveButton(item).click();

  await expect.poll(async () => (await status()).status, { timeout: 90_000 }).toBe("completed");
  const result = (await tasks.getTaskResult(taskId!, CallToolResultSchema, { timeout: 60_000 })) as CallToolResult;
  const structured = result.structuredContent as { status?: string; decision?: string; result?: { output?: { stdout?: string } } };
  expect(structured.status, JSON.stringify(structured)).toBe("completed");
  expect(structured.decision).toBe("approved");
  expect(structured.result?.output?.stdout).toBe(`${marker}\n`);
  // Created `working` (the specification's rule), then the hold, then the end (`working` again while it ran, if tasks/get caught it).
  expect(seen[0]).toBe("working");
  expect(seen.filter((s) => s !== "working")).toEqual(["input_required", "completed"]);
  console.log(`task ${taskId}: statuses seen by tasks/get: ${seen.join(" → ")}`);
});
