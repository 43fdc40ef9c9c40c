import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { InitializeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { and, eq, inArray } from "drizzle-orm";
import { cancelAction } from "../actions/cancel";
import type { McpConfig } from "../config";
import { actions } from "../db/schema";
import { isLeaseholdError } from "../errors";
import { recordClientCancels } from "./client-cancels";
import type { HubRuntime } from "../hub/runtime";
import { releaseSessionLeases } from "../leases";
import { authenticateToken, type AgentToken, type TokenCheck } from "../tokens";
import { allowedOrigins, checkDeclaredLength, checkHeaderBytes, checkJsonDepth, checkOrigin, checkSessionIdShape, parseBearer } from "./checks";
import { acquireInFlight, takeToken } from "../limits";
import { insufficientScope, rateLimited, refusalResponse, rpcError, sessionNotFound, unauthorized, type RpcId } from "./responses";
import { authInfoFor, createMcpServer } from "./server";
import { decideSessionCap, type CapSession } from "./session-cap";
import {
  authenticateWithSession,
  deleteSession,
  findSession,
  insertSession,
  liveSessionDigests,
  markSessionBusy,
  markSessionIdle,
  newSessionId,
  reclaimExpiredSessions,
  reclaimIdleSession,
  sessionDigest,
  tokenSessions,
  touchSession,
  type SessionLookup,
  type StoredSession,
} from "./session-store";
import { decideTool } from "./tools/catalogue";
import { deleteExpiredTasks } from "./tasks/store";
import { readBoundedBody } from "../http/body";
import { mcpResourceUrl } from "../oauth/metadata";
import { logLine } from "../text";
import { isDatabaseUnavailable } from "../db/unavailable";

/**
 * `/api/mcp`: every request passes, in this order, the header-size check,
 * the Origin allow-list, bearer authentication (a database lookup on every
 * request, so revocation is effective at once), the per-token rate limit,
 * the per-token concurrency limit, body size and JSON depth, the tool-scope
 * check, and session resolution — only then does the SDK see it.
 *
 * A request naming a session reads the token's row and the session's row in
 * one query (`authenticateWithSession`), taken when the request arrives; the
 * checks above still run, and answer, in the order listed. This halves the
 * database round trips of every call on an open session (measured in
 * docs/benchmarks.md: the MCP `health` bench).
 *
 * Sessions live in PostgreSQL. This process keeps an SDK transport + server
 * per session it has served, as a cache: a process that has never seen a
 * session rebuilds both from the stored `initialize` parameters.
 */

const MAX_INITIALIZE_PARAMS_BYTES = 16 * 1024;
/** In-memory copies unused this long are dropped (they are rebuilt on demand). */
const CACHE_IDLE_MS = 10 * 60_000;
const SWEEP_EVERY_MS = 30_000;
/**
 * A call still in flight after BUSY_MARK_AFTER_MS marks its session busy in
 * the database for BUSY_MARK_FOR_MS, renewed every BUSY_RENEW_MS, so that
 * another hub process at the session cap does not close it; quicker calls
 * write nothing (this process knows its own in-flight calls).
 */
const BUSY_MARK_AFTER_MS = 2_000;
const BUSY_RENEW_MS = 5_000;
const BUSY_MARK_FOR_MS = 15_000;
/** Attempts to close an idle session at the cap when a racing process takes the same one first. */
const CAP_ATTEMPTS = 4;

interface LiveSession {
  digest: string;
  tokenId: string;
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  lastUsed: number;
  /** Requests of this session in flight on this process, and since when it has had one. */
  inFlight: number;
  busySince: number;
  stored: Pick<StoredSession, "digest" | "createdAt">;
  busyTimer: ReturnType<typeof setTimeout> | undefined;
  markedBusy: boolean;
}

interface EndpointState {
  live: Map<string, LiveSession>;
  /** MCP POSTs this process is answering now (what a drain waits for). */
  calls: number;
  idleWaiters: Set<() => void>;
  building: Map<string, Promise<LiveSession>>;
  sweeper: ReturnType<typeof setInterval> | undefined;
  runtime: HubRuntime;
}

const STATE_KEY = Symbol.for("leasehold.mcp.endpoint");

function endpointState(runtime: HubRuntime): EndpointState {
  const g = globalThis as unknown as Record<symbol, EndpointState | undefined>;
  let state = g[STATE_KEY];
  if (state === undefined || state.runtime !== runtime) {
    if (state?.sweeper !== undefined) clearInterval(state.sweeper);
    state = {
      live: new Map(),
      calls: 0,
      idleWaiters: new Set(),
      building: new Map(),
      sweeper: undefined,
      runtime,
    };
    const s = state;
    s.sweeper = setInterval(() => void sweep(s), SWEEP_EVERY_MS);
    s.sweeper.unref();
    g[STATE_KEY] = s;
  }
  return state;
}

async function closeLive(state: EndpointState, session: LiveSession): Promise<void> {
  state.live.delete(session.digest);
  await session.transport.close().catch(() => undefined);
  await session.server.close().catch(() => undefined);
}

/** Reclaims expired sessions in the database, deletes tasks past their ttl, and drops in-memory copies of ended or idle sessions. */
async function sweep(state: EndpointState): Promise<void> {
  const db = state.runtime.database.handle.db;
  const now = new Date();
  try {
    for (const digest of await reclaimExpiredSessions(db, now)) await endSessionLeases(state, digest);
    await deleteExpiredTasks(db, now);
    const live = await liveSessionDigests(db, [...state.live.keys()], now);
    for (const session of [...state.live.values()]) {
      if (!live.has(session.digest) || now.getTime() - session.lastUsed > CACHE_IDLE_MS) await closeLive(state, session);
    }
  } catch (error) {
    console.error(`leasehold: mcp session sweep failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
  }
}

/**
 * A session ended (DELETE, idle or maximum-age expiry): its leases go with it
 * (docs/design.md#leases). Leases and actions record the session by its digest.
 */
async function endSessionLeases(state: EndpointState, digest: string): Promise<void> {
  try {
    await releaseSessionLeases(state.runtime.database.handle.db, digest);
  } catch (error) {
    // The lease still lapses when idle; the session is gone either way.
    console.error(`leasehold: releasing an ended MCP session's leases failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
  }
}

/**
 * The agent ended its session with DELETE: what it left waiting for a person
 * (or approved and not yet queued) is withdrawn through the one cancel path
 * (server/actions/cancel.ts, by `session_closed`), behind
 * LEASEHOLD_MCP_CANCEL_HELD_ON_DELETE (default on). Dispatched actions are
 * left to finish. One that moved on meanwhile has nothing to withdraw.
 */
async function cancelSessionHeld(state: EndpointState, digest: string, tokenId: string): Promise<void> {
  const db = state.runtime.database.handle.db;
  const held = await db
    .select({ id: actions.id })
    .from(actions)
    .where(and(eq(actions.sessionId, digest), eq(actions.tokenId, tokenId), inArray(actions.state, ["held", "allowed", "approved"])));
  for (const { id } of held) {
    try {
      await cancelAction(db, { actionId: id, by: { kind: "session_closed", id: tokenId }, reason: "the agent ended its MCP session", owner: `token:${tokenId}` });
    } catch (error) {
      if (!(isLeaseholdError(error) && error.code === "ACTION_FINISHED")) {
        console.error(`leasehold: cancelling a closed MCP session's held action failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
      }
    }
  }
}

function lifetimes(mcp: McpConfig) {
  return { idleS: mcp.sessionIdleS, maxS: mcp.sessionMaxS };
}

function newTransport(state: EndpointState, sessionId: string, digest: string): WebStandardStreamableHTTPServerTransport {
  return new WebStandardStreamableHTTPServerTransport({
    // Called exactly once, for `initialize`: the id was chosen (and stored) beforehand.
    sessionIdGenerator: () => sessionId,
    onsessionclosed: async () => {
      state.live.delete(digest);
      await deleteSession(state.runtime.database.handle.db, digest);
      await endSessionLeases(state, digest);
    },
  });
}

const SDK_ACCEPT = { accept: "application/json, text/event-stream", "content-type": "application/json" };

/**
 * Rebuilds the SDK objects for a stored session on this process: a fresh
 * transport whose generator yields the stored id, fed the stored
 * `initialize` (and `notifications/initialized`) so the server knows the
 * client's capabilities exactly as the first process did.
 */
async function rebuild(state: EndpointState, sessionId: string, stored: StoredSession, url: string): Promise<LiveSession> {
  const transport = newTransport(state, sessionId, stored.digest);
  const server = createMcpServer(state.runtime);
  await server.connect(transport);
  const init = await transport.handleRequest(
    new Request(url, {
      method: "POST",
      headers: SDK_ACCEPT,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "leasehold-rebuild",
        method: "initialize",
        params: { protocolVersion: stored.protocolVersion, capabilities: stored.clientCapabilities, clientInfo: stored.clientInfo },
      }),
    }),
  );
  await init.text();
  const initialized = await transport.handleRequest(
    new Request(url, {
      method: "POST",
      headers: { ...SDK_ACCEPT, "mcp-session-id": sessionId },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    }),
  );
  await initialized.text();
  if (init.status !== 200 || initialized.status !== 202) throw new Error(`session rebuild failed (${init.status}/${initialized.status})`);
  return liveEntry(stored, transport, server, Date.now());
}

function liveEntry(stored: StoredSession, transport: WebStandardStreamableHTTPServerTransport, server: Server, now: number): LiveSession {
  return { digest: stored.digest, tokenId: stored.tokenId, transport, server, lastUsed: now, inFlight: 0, busySince: 0, stored, busyTimer: undefined, markedBusy: false };
}

/**
 * Counts a request of `session` in flight until the returned function is
 * called (idempotent). Long ones mark the session busy for other processes.
 */
function beginCall(state: EndpointState, session: LiveSession): () => void {
  const db = state.runtime.database.handle.db;
  const times = lifetimes(state.runtime.config.mcp);
  const report = (error: unknown): void => console.error(`leasehold: marking an MCP session busy failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
  session.inFlight += 1;
  if (session.inFlight === 1) {
    session.busySince = Date.now();
    const mark = (): void => {
      session.markedBusy = true;
      markSessionBusy(db, session.stored as StoredSession, new Date(Date.now() + BUSY_MARK_FOR_MS), times).catch(report);
      session.busyTimer = setTimeout(mark, BUSY_RENEW_MS);
      session.busyTimer.unref();
    };
    session.busyTimer = setTimeout(mark, BUSY_MARK_AFTER_MS);
    session.busyTimer.unref();
  }
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    session.inFlight -= 1;
    session.lastUsed = Date.now();
    if (session.inFlight > 0) return;
    clearTimeout(session.busyTimer);
    session.busyTimer = undefined;
    if (session.markedBusy) {
      session.markedBusy = false;
      markSessionIdle(db, session.stored as StoredSession, new Date(), times).catch(report);
    }
  };
}

/** The longest one call of a session can stay in flight: the MCP wait budget (tools/actions.ts) and a margin. */
function callBudgetMs(mcp: McpConfig): number {
  return (mcp.approvalWaitS + Math.max(mcp.approvalWaitS, 5)) * 1000 + 5_000;
}

/**
 * At the per-token cap, closes the least recently used idle session of this
 * token (session-cap.ts); answers the true wait when every one is busy.
 * Undefined: there is room now.
 */
async function makeRoom(state: EndpointState, token: AgentToken, now: Date): Promise<Response | undefined> {
  const mcp = state.runtime.config.mcp;
  const db = state.runtime.database.handle.db;
  for (let attempt = 0; attempt < CAP_ATTEMPTS; attempt += 1) {
    const rows = await tokenSessions(db, token.id, now);
    const stored = new Map(rows.map((r) => [r.digest, r.lastSeenAt]));
    const sessions: CapSession[] = rows.map((r) => {
      const local = state.live.get(r.digest);
      const seen = r.lastSeenAt.getTime();
      let busyUntilMs: number | null = seen > now.getTime() ? seen : null;
      if (local !== undefined && local.inFlight > 0) busyUntilMs = Math.max(busyUntilMs ?? 0, local.busySince + callBudgetMs(mcp), now.getTime() + 1_000);
      return { digest: r.digest, lastUsedMs: Math.max(Math.min(seen, now.getTime()), local?.lastUsed ?? 0), busyUntilMs };
    });
    const decision = decideSessionCap(sessions, mcp.sessionsPerToken, now.getTime());
    if (decision.kind === "room") return undefined;
    if (decision.kind === "wait") {
      return rateLimited(
        `this token has ${mcp.sessionsPerToken} open sessions (the limit) and every one has a call in flight; the soonest can be closed in about ${decision.retryAfterS} s, or end one with DELETE`,
        decision.retryAfterS,
      );
    }
    if (await reclaimIdleSession(db, decision.digest, stored.get(decision.digest) ?? now, now)) {
      const cached = state.live.get(decision.digest);
      if (cached !== undefined) await closeLive(state, cached);
      await endSessionLeases(state, decision.digest);
      return undefined;
    }
  }
  return rateLimited(`this token has ${mcp.sessionsPerToken} open sessions (the limit) and others are opening sessions at the same moment; retry`, 1);
}

async function liveSession(state: EndpointState, sessionId: string, stored: StoredSession, url: string): Promise<LiveSession> {
  const cached = state.live.get(stored.digest);
  if (cached) return cached;
  let pending = state.building.get(stored.digest);
  if (!pending) {
    pending = rebuild(state, sessionId, stored, url)
      .then((session) => {
        state.live.set(session.digest, session);
        return session;
      })
      .finally(() => state.building.delete(stored.digest));
    state.building.set(stored.digest, pending);
  }
  return pending;
}

/**
 * A synchronous, idempotent release for a place held in the database: a
 * failed delete is logged, and the row stops counting when this process
 * stops renewing it (server/limits/in-flight.ts).
 */
function releaser(release: () => Promise<void>): () => void {
  return () => {
    release().catch((error: unknown) => console.error(logLine(`leasehold: releasing an MCP in-flight place failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`)));
  };
}

/** Calls `done` once the response body has been fully sent or abandoned; optionally writes `prefix` first. */
function whenBodyEnds(response: Response, done: () => void, signal: AbortSignal, prefix?: string): Response {
  if (response.body === null) {
    done();
    return response;
  }
  signal.addEventListener("abort", done, { once: true });
  const reader = response.body.getReader();
  let pendingPrefix = prefix === undefined ? undefined : new TextEncoder().encode(prefix);
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (pendingPrefix !== undefined) {
        controller.enqueue(pendingPrefix);
        pendingPrefix = undefined;
        return;
      }
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          controller.close();
          done();
        } else controller.enqueue(chunk.value);
      } catch (error) {
        done();
        controller.error(error);
      }
    },
    async cancel(reason) {
      done();
      await reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

function messagesOf(parsed: unknown): unknown[] {
  return Array.isArray(parsed) ? parsed : [parsed];
}

function methodOf(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const method = (message as { method?: unknown }).method;
  return typeof method === "string" ? method : undefined;
}

/** The first tools/call in the body that the token's scope refuses, as a 403. */
function scopeRefusal(publicUrl: string, token: AgentToken, messages: unknown[]): Response | undefined {
  for (const message of messages) {
    if (methodOf(message) !== "tools/call") continue;
    const params = (message as { params?: unknown }).params;
    const name = typeof params === "object" && params !== null ? (params as { name?: unknown }).name : undefined;
    if (typeof name !== "string") continue;
    const decision = decideTool(token, name);
    if (!decision.ok && decision.code === "FORBIDDEN") return insufficientScope(publicUrl, decision.message, decision.hint);
  }
  return undefined;
}

export async function handleMcpRequest(request: Request, runtime: HubRuntime): Promise<Response> {
  const state = endpointState(runtime);
  // Draining (SIGTERM): refused before anything is read or done, so a balancer may retry it elsewhere.
  if (runtime.lifecycle.draining) return hubStopping();
  if (request.method !== "POST") return answerMcpRequest(state, request, runtime);
  // A POST let in here is a call the drain waits for from this moment, not
  // from the slot it takes later: a SIGTERM landing while it authenticates
  // or takes its slot (each a database round trip) must not close the
  // listener under it. handlePost holds a count of its own from its slot on,
  // into the body it streams, so the two overlap and never leave a gap.
  const admitted = holdCall(state);
  try {
    return await answerMcpRequest(state, request, runtime);
  } finally {
    admitted();
  }
}

/** Counts one call in flight; the returned function ends it once, waking the drain at zero. */
function holdCall(state: EndpointState): () => void {
  state.calls += 1;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    state.calls -= 1;
    if (state.calls === 0) for (const wake of [...state.idleWaiters]) wake();
  };
}

async function answerMcpRequest(state: EndpointState, request: Request, runtime: HubRuntime): Promise<Response> {
  const { config } = runtime;
  const mcp = config.mcp;
  const headerCheck = checkHeaderBytes(request.headers.entries(), mcp.maxHeaderBytes);
  if (!headerCheck.ok) return refusalResponse(headerCheck);
  const origin = checkOrigin(request.headers.get("origin"), allowedOrigins(config.publicUrl, mcp.allowedOrigins));
  if (!origin.ok) return refusalResponse(origin);
  const bearer = parseBearer(request.headers.get("authorization"));
  if (!bearer.ok) return unauthorized(config.publicUrl, bearer.message, request.headers.has("authorization"));
  const db = runtime.database.handle.db;
  const now = new Date();
  const sessionId = request.headers.get("mcp-session-id");
  let auth: TokenCheck;
  let found: SessionLookup | undefined;
  // RFC 8707: an OAuth access token is accepted only for the resource it was issued for.
  const audience = mcpResourceUrl(config.publicUrl);
  if (sessionId !== null && checkSessionIdShape(sessionId)) ({ auth, session: found } = await authenticateWithSession(db, bearer.value, sessionId, now, audience));
  else auth = await authenticateToken(db, bearer.value, now, audience);
  if (!auth.ok) {
    const message =
      auth.reason === "expired"
        ? "the token has expired"
        : auth.reason === "revoked"
          ? "the token has been revoked"
          : auth.reason === "wrong_audience"
            ? "the token was issued for another resource, not this hub's MCP endpoint"
            : "the token is not valid";
    return unauthorized(config.publicUrl, message, true);
  }
  const token = auth.token;
  // Shared by every hub process on this database (server/limits): N replicas allow what one allows.
  const rate = await takeToken(db, `mcp-rate:${token.id}`, { ratePerMinute: mcp.ratePerMinute });
  if (!rate.ok) return rateLimited(`this token is over its rate limit of ${mcp.ratePerMinute} requests per minute`, rate.retryAfterS);

  if (request.method === "POST") return handlePost(state, request, token, now, found);
  if (request.method === "GET" || request.method === "DELETE") {
    const resolved = await resolveSession(state, request, token, now, found);
    if (resolved instanceof Response) return resolved;
    const { session, stored } = resolved;
    if (request.method === "DELETE") {
      const response = await session.transport.handleRequest(request, { authInfo: authInfoFor(token) });
      // The transport's onsessionclosed deleted the row; make sure of it even if the SDK refused.
      if (response.status === 200) {
        await deleteSession(db, stored.digest);
        if (mcp.cancelHeldOnDelete) await cancelSessionHeld(state, stored.digest, token.id);
        await endSessionLeases(state, stored.digest);
      }
      state.live.delete(stored.digest);
      return response;
    }
    const release = await acquireInFlight(db, `mcp-streams:${token.id}`, mcp.maxStreams);
    if (release === null) return rateLimited(`this token already has ${mcp.maxStreams} open streams (the limit)`, 5);
    const response = await session.transport.handleRequest(request, { authInfo: authInfoFor(token) });
    // Under `next start` an SSE response's headers leave only with the first body byte: send a comment at once.
    const isStream = response.headers.get("content-type")?.startsWith("text/event-stream") ?? false;
    return whenBodyEnds(response, releaser(release), request.signal, isStream ? ": leasehold stream open\n\n" : undefined);
  }
  return rpcError(405, -32000, "INVALID_ARGUMENT", "method not allowed", { headers: { allow: "GET, POST, DELETE" } });
}

/** `prefetched`: the session's lookup made together with the token's (`authenticateWithSession`), when there was one. */
async function resolveSession(
  state: EndpointState,
  request: Request,
  token: AgentToken,
  now: Date,
  prefetched: SessionLookup | undefined,
): Promise<{ session: LiveSession; stored: StoredSession } | Response> {
  const sessionId = request.headers.get("mcp-session-id");
  if (sessionId === null) return rpcError(400, -32000, "INVALID_ARGUMENT", "Bad Request: Mcp-Session-Id header is required", { hint: "send initialize first and use the Mcp-Session-Id it returns" });
  if (!checkSessionIdShape(sessionId)) return sessionNotFound();
  const db = state.runtime.database.handle.db;
  const found = prefetched ?? (await findSession(db, sessionId, token.id, now));
  if (!found.ok) {
    const cached = state.live.get(sessionDigest(sessionId));
    if (cached !== undefined && found.reason !== "other_token") await closeLive(state, cached);
    return sessionNotFound();
  }
  await touchSession(db, found.session, lifetimes(state.runtime.config.mcp), now);
  const session = await liveSession(state, sessionId, found.session, request.url);
  session.lastUsed = now.getTime();
  return { session, stored: found.session };
}

async function handlePost(state: EndpointState, request: Request, token: AgentToken, now: Date, found: SessionLookup | undefined): Promise<Response> {
  const mcp = state.runtime.config.mcp;
  const acquired = await acquireInFlight(state.runtime.database.handle.db, `mcp-requests:${token.id}`, mcp.maxConcurrentRequests);
  if (acquired === null) return rateLimited(`this token already has ${mcp.maxConcurrentRequests} requests in flight (the limit)`, 1);
  const releasePlace = releaser(acquired);
  const endHold = holdCall(state);
  let ended = false;
  let endCall: (() => void) | undefined;
  const release = (): void => {
    if (ended) return;
    ended = true;
    releasePlace();
    endCall?.();
    endHold();
  };
  let handedOver = false;
  try {
    const declared = checkDeclaredLength(request.headers.get("content-length"), mcp.maxBodyBytes);
    if (!declared.ok) return refusalResponse(declared);
    // The hub's one bounded reader (server/http/body.ts): stops reading at the limit.
    const body = await readBoundedBody(request, mcp.maxBodyBytes);
    if (!body.ok) return rpcError(body.status, -32000, "INVALID_ARGUMENT", body.error.message);
    const text = new TextDecoder("utf-8", { fatal: false }).decode(body.value);
    const depth = checkJsonDepth(text, mcp.maxJsonDepth);
    if (!depth.ok) return refusalResponse(depth);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return rpcError(400, -32700, "INVALID_ARGUMENT", "Parse error: Invalid JSON");
    }
    const messages = messagesOf(parsed);
    const refusal = scopeRefusal(state.runtime.config.publicUrl, token, messages);
    if (refusal) return refusal;

    let response: Response;
    if (messages.some((m) => methodOf(m) === "initialize")) {
      response = await initializeSession(state, request, token, parsed, messages, now);
    } else if (request.headers.get("mcp-session-id") === null) {
      return sessionlessRefusal(messages);
    } else {
      const resolved = await resolveSession(state, request, token, now, found);
      if (resolved instanceof Response) return resolved;
      endCall = beginCall(state, resolved.session);
      // Before the SDK aborts the cancelled call's signal: its listener asks whether the client cancelled it.
      recordClientCancels(resolved.stored.digest, messages);
      response = await resolved.session.transport.handleRequest(request, { authInfo: authInfoFor(token), parsedBody: parsed });
    }
    handedOver = true;
    return whenBodyEnds(response, release, request.signal);
  } finally {
    if (!handedOver) release();
  }
}

/** The id of a single JSON-RPC request (a batch or a notification has none to answer to). */
function requestIdOf(messages: unknown[]): RpcId | undefined {
  if (messages.length !== 1) return undefined;
  const id = (messages[0] as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/**
 * A POST without Mcp-Session-Id that is not `initialize`. This hub speaks
 * the session-based revisions only. A client of the stateless revision
 * probes with `server/discover` and falls back to `initialize` when the
 * server answers as a legacy one does: a JSON-RPC "Method not found" for
 * that request (HTTP 200, its id). Any other method gets the 400 the
 * 2025-06-18 transport asks for, with a JSON-RPC error carrying its id.
 */
function sessionlessRefusal(messages: unknown[]): Response {
  const id = requestIdOf(messages);
  if (id !== undefined && methodOf(messages[0]) === "server/discover") {
    return rpcError(200, -32601, "INVALID_ARGUMENT", "Method not found: server/discover (this server speaks the session-based revisions; send initialize)", {
      id,
      hint: "send initialize first and use the Mcp-Session-Id it returns",
    });
  }
  return rpcError(400, -32000, "INVALID_ARGUMENT", "Bad Request: Mcp-Session-Id header is required", { id: id ?? null, hint: "send initialize first and use the Mcp-Session-Id it returns" });
}

async function initializeSession(state: EndpointState, request: Request, token: AgentToken, parsed: unknown, messages: unknown[], now: Date): Promise<Response> {
  const mcp = state.runtime.config.mcp;
  const db = state.runtime.database.handle.db;
  if (messages.length !== 1) return rpcError(400, -32600, "INVALID_ARGUMENT", "Invalid Request: Only one initialization request is allowed");
  const init = InitializeRequestSchema.safeParse(messages[0]);
  if (!init.success) return rpcError(400, -32602, "INVALID_ARGUMENT", "Invalid params: initialize needs protocolVersion, capabilities and clientInfo");
  const params = init.data.params;
  const capabilities = params.capabilities as Record<string, unknown>;
  const clientInfo = params.clientInfo as Record<string, unknown>;
  if (JSON.stringify({ capabilities, clientInfo }).length > MAX_INITIALIZE_PARAMS_BYTES) {
    return rpcError(400, -32602, "INVALID_ARGUMENT", `Invalid params: initialize capabilities and clientInfo are over ${MAX_INITIALIZE_PARAMS_BYTES} bytes`);
  }
  const full = await makeRoom(state, token, now);
  if (full !== undefined) return full;
  const sessionId = newSessionId();
  const stored = await insertSession(db, { sessionId, tokenId: token.id, protocolVersion: params.protocolVersion, clientInfo, clientCapabilities: capabilities }, lifetimes(mcp), now);
  const transport = newTransport(state, sessionId, stored.digest);
  const server = createMcpServer(state.runtime);
  let response: Response;
  try {
    await server.connect(transport);
    response = await transport.handleRequest(request, { authInfo: authInfoFor(token), parsedBody: parsed });
  } catch (error) {
    await deleteSession(db, stored.digest);
    throw error;
  }
  if (response.status !== 200) {
    await deleteSession(db, stored.digest);
    await transport.close().catch(() => undefined);
    return response;
  }
  state.live.set(stored.digest, liveEntry(stored, transport, server, now.getTime()));
  return response;
}

function hubStopping(): Response {
  return rpcError(503, -32000, "HUB_STOPPING", "this hub process is stopping and takes no new calls; nothing was done", {
    retryable: true,
    hint: "retry: another hub process behind the same address answers it",
    headers: { "retry-after": "1" },
  });
}

/**
 * Resolves once this process answers no MCP call (a response body still
 * streaming counts), or after `withinMs`; returns how many were still running.
 */
export async function whenMcpCallsDone(runtime: HubRuntime, withinMs: number): Promise<number> {
  const state = endpointState(runtime);
  if (state.calls === 0) return 0;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, withinMs);
    function done() {
      clearTimeout(timer);
      state.idleWaiters.delete(done);
      resolve();
    }
    state.idleWaiters.add(done);
  });
  return state.calls;
}

/** MCP calls this process is answering now. */
export function mcpCallsInFlight(runtime: HubRuntime): number {
  return endpointState(runtime).calls;
}

/** In-memory sessions of this process (for tests and the benchmark's memory figure). */
export function liveSessionCount(runtime: HubRuntime): number {
  return endpointState(runtime).live.size;
}

/**
 * `/api/mcp` as both entry points serve it (the Next.js route file and the
 * hub's direct routes): an unexpected failure is logged and answered as a
 * JSON-RPC internal error, never as an HTML error page; the database out of
 * reach is answered DATABASE_UNAVAILABLE (503, retryable) instead.
 */
export async function serveMcp(request: Request, runtime: HubRuntime): Promise<Response> {
  try {
    return await handleMcpRequest(request, runtime);
  } catch (error) {
    console.error(logLine(`leasehold: /api/mcp failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`));
    // The database out of reach (a restart, a lost connection) is the client's to retry, not a hub fault.
    if (isDatabaseUnavailable(error)) {
      return rpcError(503, -32000, "DATABASE_UNAVAILABLE", "the database is not answering (restarting or unreachable)", { retryable: true, hint: "retry in a few seconds", headers: { "retry-after": "2" } });
    }
    return Response.json({ jsonrpc: "2.0", error: { code: -32603, message: "internal error", data: { code: "INTERNAL", message: "internal error", retryable: false, hint: "" } }, id: null }, { status: 500 });
  }
}
