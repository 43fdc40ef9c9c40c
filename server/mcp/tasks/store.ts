import { and, desc, eq, gt, lt, or, sql } from "drizzle-orm";
import type { Database } from "../../db";
import { actions, approvals, mcpTasks } from "../../db/schema";

/**
 * MCP tasks in PostgreSQL (`mcp_tasks`). A task is its token's alone: every
 * read takes the token id, so another token's task id is not found (the same
 * answer as an id that never existed). Expired tasks are not found either,
 * and the endpoint's sweep deletes them.
 */

export type TaskRow = typeof mcpTasks.$inferSelect;

/** How long a task is kept: a requested ttl is clamped to these bounds (the spec lets the receiver override it). */
export const TASK_TTL = { defaultMs: 60 * 60_000, minMs: 60_000, maxMs: 24 * 60 * 60_000 } as const;

export function clampTtl(requested: number | null | undefined): number {
  if (typeof requested !== "number" || !Number.isFinite(requested)) return TASK_TTL.defaultMs;
  return Math.min(TASK_TTL.maxMs, Math.max(TASK_TTL.minMs, Math.floor(requested)));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A task with the rows its status is read from. */
export interface TaskView {
  task: TaskRow;
  action: { state: string; result: unknown; updatedAt: Date; operation: string } | null;
  approval: { id: string; state: string; deadline: Date; decidedAt: Date | null } | null;
}

export interface NewTask {
  tokenId: string;
  tool: string;
  ttlMs: number;
  now: Date;
  actionId?: string;
  replayed?: boolean;
  /** The final tool result of a call that ended before an action was named. */
  result?: Record<string, unknown>;
}

export async function insertTask(db: Database, task: NewTask): Promise<TaskRow> {
  const [row] = await db
    .insert(mcpTasks)
    .values({
      tokenId: task.tokenId,
      tool: task.tool,
      ttlMs: task.ttlMs,
      actionId: task.actionId ?? null,
      replayed: task.replayed ?? false,
      result: task.result ?? null,
      createdAt: task.now,
      expiresAt: new Date(task.now.getTime() + task.ttlMs),
    })
    .returning();
  if (row === undefined) throw new Error("mcp_tasks insert returned no row");
  return row;
}

function viewQuery(db: Database) {
  return db
    .select({
      task: mcpTasks,
      action: { state: actions.state, result: actions.result, updatedAt: actions.updatedAt, operation: actions.operation },
      approval: { id: approvals.id, state: approvals.state, deadline: approvals.deadline, decidedAt: approvals.decidedAt },
    })
    .from(mcpTasks)
    .leftJoin(actions, eq(actions.id, mcpTasks.actionId))
    .leftJoin(approvals, eq(approvals.actionId, mcpTasks.actionId));
}

function asView(row: { task: TaskRow; action: TaskView["action"]; approval: TaskView["approval"] }): TaskView {
  return { task: row.task, action: row.action?.state == null ? null : row.action, approval: row.approval?.id == null ? null : row.approval };
}

/** One of this token's live tasks; undefined for a malformed id, another token's task, or an expired one. */
export async function readTask(db: Database, taskId: string, tokenId: string, now: Date): Promise<TaskView | undefined> {
  if (!UUID.test(taskId)) return undefined;
  const [row] = await viewQuery(db).where(and(eq(mcpTasks.id, taskId), eq(mcpTasks.tokenId, tokenId), gt(mcpTasks.expiresAt, now)));
  return row === undefined ? undefined : asView(row);
}

/** The position after a task in the newest-first listing, opaque to clients. */
function cursorOf(task: TaskRow): string {
  return Buffer.from(`${task.createdAt.toISOString()}|${task.id}`, "utf8").toString("base64url");
}

/** A cursor this hub issued, or null for anything else (the caller answers -32602). */
export function parseCursor(cursor: string): { createdAt: Date; id: string } | null {
  if (cursor.length > 200) return null;
  const [at, id, extra] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  if (at === undefined || id === undefined || extra !== undefined || !UUID.test(id)) return null;
  const createdAt = new Date(at);
  return Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== at ? null : { createdAt, id };
}

export const TASK_PAGE = 50;

/** This token's live tasks, newest first, `TASK_PAGE` at a time. */
export async function listTasks(db: Database, tokenId: string, now: Date, after: { createdAt: Date; id: string } | null): Promise<{ views: TaskView[]; nextCursor?: string }> {
  const position =
    after === null ? undefined : or(lt(mcpTasks.createdAt, after.createdAt), and(eq(mcpTasks.createdAt, after.createdAt), lt(mcpTasks.id, after.id)));
  const rows = await viewQuery(db)
    .where(and(eq(mcpTasks.tokenId, tokenId), gt(mcpTasks.expiresAt, now), position))
    .orderBy(desc(mcpTasks.createdAt), desc(mcpTasks.id))
    .limit(TASK_PAGE + 1);
  const views = rows.slice(0, TASK_PAGE).map(asView);
  const last = views.at(-1);
  return rows.length > TASK_PAGE && last !== undefined ? { views, nextCursor: cursorOf(last.task) } : { views };
}

/** Records that a cancellation took effect: from then on the task is `cancelled` whatever its action does. */
export async function markCancelled(db: Database, taskId: string, tokenId: string, now: Date): Promise<void> {
  await db
    .update(mcpTasks)
    .set({ cancelledAt: now })
    .where(and(eq(mcpTasks.id, taskId), eq(mcpTasks.tokenId, tokenId), sql`${mcpTasks.cancelledAt} is null`));
}

/** Deletes tasks past their ttl; returns how many. */
export async function deleteExpiredTasks(db: Database, now: Date): Promise<number> {
  const gone = await db.delete(mcpTasks).where(lt(mcpTasks.expiresAt, now)).returning({ id: mcpTasks.id });
  return gone.length;
}
