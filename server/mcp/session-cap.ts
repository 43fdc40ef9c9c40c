/**
 * What `initialize` does at the per-token session cap
 * (docs/design.md#mcp-sessions): a client that never ends its sessions must
 * not lock its token out, so the least recently used IDLE session is closed
 * to make room; a session with a call in flight is never chosen. When every
 * session is busy the answer is a wait, and the wait is the true one: the
 * soonest moment a session can become idle, not a fixed guess.
 *
 * Pure: the endpoint gathers the facts (the database's rows, this process's
 * in-flight calls) and acts on the decision.
 */

export interface CapSession {
  digest: string;
  /** When it was last used: the stored last-seen time, or this process's own later record of a request. */
  lastUsedMs: number;
  /** Until when it is known busy (a call in flight here or marked busy by another process); null when idle. */
  busyUntilMs: number | null;
}

export type CapDecision = { kind: "room" } | { kind: "evict"; digest: string } | { kind: "wait"; retryAfterS: number; busy: number };

export function decideSessionCap(sessions: readonly CapSession[], cap: number, nowMs: number): CapDecision {
  if (sessions.length < cap) return { kind: "room" };
  let chosen: CapSession | undefined;
  for (const s of sessions) {
    if (s.busyUntilMs !== null) continue;
    if (chosen === undefined || s.lastUsedMs < chosen.lastUsedMs || (s.lastUsedMs === chosen.lastUsedMs && s.digest < chosen.digest)) chosen = s;
  }
  if (chosen !== undefined) return { kind: "evict", digest: chosen.digest };
  const soonest = Math.min(...sessions.map((s) => s.busyUntilMs ?? nowMs));
  return { kind: "wait", retryAfterS: Math.max(1, Math.ceil((soonest - nowMs) / 1000)), busy: sessions.length };
}
