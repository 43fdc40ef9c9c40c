/**
 * Which in-flight requests their client cancelled with
 * `notifications/cancelled` (docs/design.md#cancel). The SDK aborts the
 * request handler's AbortSignal both for that notification and when the
 * transport closes (a session DELETE, a hub process draining on SIGTERM);
 * only the first is the agent asking to cancel the action it started. The
 * endpoint records the notification here before the SDK sees it, so by the
 * time the signal's abort listener runs, the record is there.
 *
 * Per process, like the SDK's own request handlers: a notification that
 * reaches another hub process than the call's finds no call to abort there
 * either. Entries live a minute; at most MAX_ENTRIES are kept.
 */
const KEEP_MS = 60_000;
const MAX_ENTRIES = 4096;

const GLOBAL_KEY = Symbol.for("leasehold.mcp.clientCancels");
type Registry = Map<string, number>;
const registry: Registry = ((globalThis as Record<symbol, unknown>)[GLOBAL_KEY] ??= new Map()) as Registry;

function keyOf(sessionDigest: string, requestId: string | number): string {
  return `${sessionDigest}|${typeof requestId}:${String(requestId)}`;
}

function prune(now: number): void {
  for (const [key, at] of registry) {
    if (now - at <= KEEP_MS && registry.size <= MAX_ENTRIES) break;
    registry.delete(key);
  }
}

/** The JSON-RPC messages of one POST: records each `notifications/cancelled` of this session. */
export function recordClientCancels(sessionDigest: string, messages: readonly unknown[], now = Date.now()): void {
  for (const message of messages) {
    const m = message as { method?: unknown; params?: { requestId?: unknown } } | null;
    if (m?.method !== "notifications/cancelled") continue;
    const id = m.params?.requestId;
    if (typeof id !== "string" && typeof id !== "number") continue;
    registry.delete(keyOf(sessionDigest, id));
    registry.set(keyOf(sessionDigest, id), now);
  }
  prune(now);
}

/** Whether this session's client cancelled this request (within the last minute). */
export function cancelledByClient(sessionDigest: string | null, requestId: string | number): boolean {
  if (sessionDigest === null) return false;
  const at = registry.get(keyOf(sessionDigest, requestId));
  return at !== undefined && Date.now() - at <= KEEP_MS;
}
