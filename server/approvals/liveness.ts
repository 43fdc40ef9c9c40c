/**
 * Whether a client is still waiting on a held action (docs/design.md#approval-liveness).
 *
 * The source of truth is `approvals.client_waiting_at` in PostgreSQL, so it
 * holds across hub processes: a client may wait on one process and the
 * person look at the queue served by another. It is moved forward while a
 * client waits — an open tools/call or `approval_wait` (the decision waiter's
 * loop), or an `approval_status` poll — and at most once per
 * `WAITING_MARK_EVERY_MS` per approval whatever the number of processes: the
 * update's own `where` skips a row marked less than that long ago.
 *
 * Nothing here cancels or decides anything: liveness is shown to a person,
 * who decides what to do with an action nobody is waiting for.
 */
import { and, eq, isNull, lt, or } from "drizzle-orm";
import { environmentSchema } from "../config/schema";
import type { Database } from "../db";
import { approvals } from "../db/schema";

/** At most one write per approval per this interval, across all hub processes. */
export const WAITING_MARK_EVERY_MS = 5_000;

/**
 * A mark older than this means nobody is waiting (the default of
 * `LEASEHOLD_APPROVAL_ORPHANED_S`). A waiting call refreshes it every
 * WAITING_MARK_EVERY_MS; a client whose call ended with APPROVAL_PENDING has
 * this long to ask again (`approval_wait`) before its action reads as
 * orphaned.
 */
export const ORPHANED_AFTER_MS = 30_000;

let orphanWindow: { raw: string | undefined; ms: number } | undefined;

/**
 * The orphan window in force: `LEASEHOLD_APPROVAL_ORPHANED_S` parsed with
 * the hub's own schema (10 s to a day, default ORPHANED_AFTER_MS). Read here
 * rather than passed down from the hub's config because every process that
 * lists approvals judges liveness itself (the hub, and the CLI on
 * PostgreSQL); `leasehold start` has already refused a bad value by name,
 * and a process that reads one anyway throws instead of guessing a window.
 */
export function orphanedAfterMs(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const raw = env["LEASEHOLD_APPROVAL_ORPHANED_S"];
  if (orphanWindow === undefined || orphanWindow.raw !== raw) {
    const parsed = environmentSchema.shape.LEASEHOLD_APPROVAL_ORPHANED_S.safeParse(raw);
    if (!parsed.success) throw new Error(`LEASEHOLD_APPROVAL_ORPHANED_S ${parsed.error.issues[0]?.message ?? "is not valid"}`);
    orphanWindow = { raw, ms: parsed.data * 1000 };
  }
  return orphanWindow.ms;
}

/**
 * Records that a client is waiting on this approval now. Writes only when the
 * stored mark is absent or at least `everyMs` old, and only while the
 * approval is pending. Returns whether it wrote.
 */
export async function markClientWaiting(db: Database, approvalId: string, now: Date, everyMs = WAITING_MARK_EVERY_MS): Promise<boolean> {
  const rows = await db
    .update(approvals)
    .set({ clientWaitingAt: now })
    .where(
      and(
        eq(approvals.id, approvalId),
        eq(approvals.state, "pending"),
        or(isNull(approvals.clientWaitingAt), lt(approvals.clientWaitingAt, new Date(now.getTime() - everyMs))),
      ),
    )
    .returning({ id: approvals.id });
  return rows.length > 0;
}

/** Whether the in-memory copy of the mark is stale enough that a write is due (saves the round trip when it is not). */
export function waitingMarkDue(clientWaitingAt: Date | null, now: Date, everyMs = WAITING_MARK_EVERY_MS): boolean {
  return clientWaitingAt === null || now.getTime() - clientWaitingAt.getTime() >= everyMs;
}

/** The MCP session an action came from, as the queue reports it: open (unexpired) or gone; `none` for a caller without one. */
export type SessionState = "open" | "closed" | "none";

export interface Liveness {
  /** `waiting`: a client waited on it within the orphan window (`orphanedAfterMs`); `orphaned`: nobody has since `since`. */
  state: "waiting" | "orphaned";
  /** The last time a client was waiting (or, when none ever did, when the action was held). */
  since: string;
  /** Whole seconds from `since` to the hub's now. */
  seen_s_ago: number;
  session: SessionState;
}

/**
 * Liveness of one held action from its stored mark. Pure once the window is
 * given: the caller reads the row and the session's expiry and passes the
 * hub's clock.
 */
export function livenessOf(
  input: { clientWaitingAt: Date | null; heldAt: Date; sessionId: string | null; sessionExpiresAt: Date | null },
  now: Date,
  windowMs: number = orphanedAfterMs(),
): Liveness {
  const since = input.clientWaitingAt ?? input.heldAt;
  const ago = Math.max(0, now.getTime() - since.getTime());
  const session: SessionState = input.sessionId === null ? "none" : input.sessionExpiresAt !== null && input.sessionExpiresAt.getTime() > now.getTime() ? "open" : "closed";
  const waiting = input.clientWaitingAt !== null && ago < windowMs;
  return { state: waiting ? "waiting" : "orphaned", since: since.toISOString(), seen_s_ago: Math.floor(ago / 1000), session };
}

/**
 * The words a person reads: "agent waiting (session open, last seen 3 s ago)"
 * or "orphaned: no client waiting since 12:01:07". `clock` formats the time
 * (the browser shows local time, the terminal UTC).
 */
export function livenessText(liveness: Liveness, clock: (iso: string) => string): string {
  const session = liveness.session === "none" ? "no MCP session" : `session ${liveness.session}`;
  if (liveness.state === "waiting") return `agent waiting (${session}, last seen ${liveness.seen_s_ago} s ago)`;
  return `orphaned: no client waiting since ${clock(liveness.since)} (${session})`;
}
