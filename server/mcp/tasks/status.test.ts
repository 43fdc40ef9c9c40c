import { describe, expect, it } from "vitest";
import { taskObject, taskStatus } from "./status";
import type { TaskView } from "./store";

const NOW = new Date("2026-12-06T10:00:00Z");
const URL = "https://hub.example/";
const ACTION_ID = "11111111-1111-4111-8111-111111111111";
const APPROVAL_ID = "22222222-2222-4222-8222-222222222222";

function view(action: Partial<NonNullable<TaskView["action"]>> | null, approval: Partial<NonNullable<TaskView["approval"]>> | null = null, task: Partial<TaskView["task"]> = {}): TaskView {
  return {
    task: {
      id: "33333333-3333-4333-8333-333333333333",
      tokenId: "44444444-4444-4444-8444-444444444444",
      actionId: action === null ? null : ACTION_ID,
      tool: "run_command",
      replayed: false,
      result: null,
      ttlMs: 3_600_000,
      cancelledAt: null,
      createdAt: new Date(NOW.getTime() - 60_000),
      expiresAt: new Date(NOW.getTime() + 3_540_000),
      ...task,
    },
    action: action === null ? null : { state: "held", result: null, updatedAt: new Date(NOW.getTime() - 30_000), operation: "run_command", ...action },
    approval: approval === null ? null : { id: APPROVAL_ID, state: "pending", deadline: new Date(NOW.getTime() + 240_000), decidedAt: null, ...approval },
  };
}

describe("task status from the action's rows", () => {
  it("held with a pending approval before its deadline: input_required with the approval link", () => {
    const s = taskStatus(view({ state: "held" }, {}), NOW, URL);
    expect(s.status).toBe("input_required");
    expect(s.statusMessage).toContain(`https://hub.example/approvals#${APPROVAL_ID}`);
    expect(s.statusMessage).toContain("2026-12-06T10:04:00.000Z");
  });

  it("held past its approval deadline: failed, expired", () => {
    expect(taskStatus(view({ state: "held" }, { deadline: new Date(NOW.getTime() - 1) }), NOW, URL)).toMatchObject({ status: "failed", statusMessage: expect.stringMatching(/^APPROVAL_EXPIRED/) });
  });

  it.each([
    ["allowed", "working"],
    ["approved", "working"],
    ["dispatched", "working"],
    ["completed", "completed"],
    ["denied", "failed"],
    ["expired", "failed"],
    ["failed", "failed"],
    ["unknown", "failed"],
  ])("action %s → %s", (state, status) => {
    expect(taskStatus(view({ state }, { state: "approved" }), NOW, URL).status).toBe(status);
  });

  it("a sealed failure without an error object is a result (completed), one with an error is failed", () => {
    expect(taskStatus(view({ state: "failed", result: { completion: { state: "failed", error: null } } }), NOW, URL).status).toBe("completed");
    expect(taskStatus(view({ state: "failed", result: { completion: { state: "failed", error: { code: "TIMEOUT" } } } }), NOW, URL).status).toBe("failed");
  });

  it("a stored error wins over the state (denied, and the stored APPROVAL_DENIED)", () => {
    expect(taskStatus(view({ state: "approved", result: { error: { code: "FORBIDDEN", message: "token revoked" } } }), NOW, URL)).toEqual({ status: "failed", statusMessage: "FORBIDDEN: token revoked" });
  });

  it("without an action: the stored result says completed or failed", () => {
    expect(taskStatus(view(null, null, { result: { isError: true, structuredContent: { code: "INVALID_ARGUMENT", message: "bad" } } }), NOW, URL)).toEqual({ status: "failed", statusMessage: "INVALID_ARGUMENT: bad" });
    expect(taskStatus(view(null, null, { result: { content: [] } }), NOW, URL).status).toBe("completed");
  });

  it("cancelled wins over everything", () => {
    expect(taskStatus(view({ state: "completed" }, null, { cancelledAt: NOW }), NOW, URL).status).toBe("cancelled");
  });

  it("the Task object: ttl, ISO times, lastUpdatedAt the newest row change, pollInterval only while not terminal", () => {
    const held = taskObject(view({ state: "held" }, {}), NOW, URL);
    expect(held).toMatchObject({ ttl: 3_600_000, createdAt: "2026-12-06T09:59:00.000Z", lastUpdatedAt: "2026-12-06T09:59:30.000Z", pollInterval: 2000 });
    const done = taskObject(view({ state: "completed" }, { state: "approved", decidedAt: new Date(NOW.getTime() - 10_000) }), NOW, URL);
    expect(done.lastUpdatedAt).toBe("2026-12-06T09:59:50.000Z");
    expect(done.pollInterval).toBeUndefined();
  });
});
