/**
 * MCP over plain HTTP, one request per call with a deadline: for tests and
 * soak runs that count every answer a client got — a status, a stable error
 * code or a timeout — where the SDK's client would throw on a non-2xx answer
 * and hide which one it was.
 */
import { RPC_HEADERS } from "../mcp/support";

export interface McpAnswer {
  /** HTTP status; 0 when the request failed or timed out. */
  status: number;
  /** The JSON-RPC message answering the request (a `data:` line of an event stream, or the JSON body). */
  message?: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: { code?: string } } };
  /** For a request that got no HTTP answer: its error's code or name. */
  failure?: string;
  ms: number;
}

function headers(token: string, sessionId?: string): Record<string, string> {
  return { ...RPC_HEADERS, authorization: `Bearer ${token}`, ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId }) };
}

function parseAnswer(text: string, contentType: string | null): McpAnswer["message"] {
  if ((contentType ?? "").includes("text/event-stream")) {
    for (const line of text.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const message = JSON.parse(line.slice(5)) as NonNullable<McpAnswer["message"]> & { method?: string };
      if (message.method === undefined) return message;
    }
    return undefined;
  }
  try {
    return JSON.parse(text) as McpAnswer["message"];
  } catch {
    return undefined;
  }
}

export async function mcpPost(url: string, token: string, body: unknown, options: { sessionId?: string; timeoutMs?: number } = {}): Promise<McpAnswer & { sessionId?: string }> {
  const began = performance.now();
  try {
    const res = await fetch(`${url}/api/mcp`, { method: "POST", headers: headers(token, options.sessionId), body: JSON.stringify(body), signal: AbortSignal.timeout(options.timeoutMs ?? 30_000) });
    const text = await res.text();
    return { status: res.status, message: parseAnswer(text, res.headers.get("content-type")), sessionId: res.headers.get("mcp-session-id") ?? undefined, ms: performance.now() - began };
  } catch (error) {
    const e = error as { name?: string; code?: string; cause?: { code?: string } };
    return { status: 0, failure: e.cause?.code ?? e.code ?? e.name ?? String(error), ms: performance.now() - began };
  }
}

/** initialize + notifications/initialized; returns the session id. */
export async function mcpSession(url: string, token: string): Promise<string> {
  const init = await mcpPost(url, token, { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "leasehold-test", version: "1" } } });
  if (init.status !== 200 || init.sessionId === undefined) throw new Error(`initialize answered ${init.status} ${init.failure ?? JSON.stringify(init.message)}`);
  const done = await mcpPost(url, token, { jsonrpc: "2.0", method: "notifications/initialized" }, { sessionId: init.sessionId });
  if (done.status !== 202) throw new Error(`notifications/initialized answered ${done.status} ${done.failure ?? JSON.stringify(done.message)}`);
  return init.sessionId;
}

let nextId = 1;

/** One tools/call. */
export function mcpTool(url: string, token: string, sessionId: string, name: string, args: Record<string, unknown>, timeoutMs = 60_000): Promise<McpAnswer> {
  return mcpPost(url, token, { jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name, arguments: args } }, { sessionId, timeoutMs });
}

/**
 * What an answer amounts to: "ok" (a tool result without isError), the
 * stable error code of a tool error or a JSON-RPC error, `http <status>`, or
 * the failure of a request that got no answer.
 */
export function outcome(answer: McpAnswer): string {
  if (answer.status === 0) return `no answer: ${answer.failure ?? "?"}`;
  const m = answer.message;
  if (m?.error !== undefined) return m.error.data?.code ?? `jsonrpc ${m.error.code}`;
  if (m?.result !== undefined) {
    if (m.result.isError !== true) return "ok";
    const structured = m.result.structuredContent as { code?: string } | undefined;
    return structured?.code ?? "tool error";
  }
  return `http ${answer.status}`;
}

/** The structured result of a successful tool call. */
export function structured<T = Record<string, unknown>>(answer: McpAnswer): T {
  return answer.message?.result?.structuredContent as T;
}
