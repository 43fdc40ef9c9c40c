/**
 * Hostile request generator for /api/mcp, shared by the suite's fuzz test
 * and `fuzz.ts` (100k requests). Deterministic for a seed. Each request is
 * labelled with whether it carries the valid token, so the runner can count
 * "successes without a valid token" — which must be zero.
 */
import { seededRandom } from "../../../test/support/random";

export interface FuzzTarget {
  url: string;
  validToken: string;
  /** Tokens the hub must refuse (revoked, expired), presented as if valid. */
  refusedTokens: string[];
  /** A live session of the valid token. */
  sessionId: string;
  allowedOrigin: string;
}

export interface FuzzRequest {
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  withValidToken: boolean;
}

/** mulberry32 (test/support/random.ts): small, fast, seedable. */
export const rng = seededRandom;

function pick<T>(r: () => number, items: readonly T[]): T {
  return items[Math.floor(r() * items.length)] as T;
}

function nested(depth: number, open: string, close: string, inner = "1"): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

const TOOL_NAMES = ["health", "list_capabilities", "hosts_list", "audit_checkpoint", "audit_proof", "run_command", "fs_write", "__proto__", "constructor", "", "x".repeat(300)];

function jsonRpc(r: () => number): unknown {
  const id = pick(r, [1, "a", null, -1, 1.5, {}, [], true, "x".repeat(1000), Number.MAX_SAFE_INTEGER + 2]);
  const method = pick(r, ["initialize", "tools/list", "tools/call", "ping", "notifications/initialized", "resources/list", "prompts/get", "__proto__", "", 7, null]);
  const args = pick(r, [
    {},
    { limit: 500 },
    { limit: "50" },
    { offset: -1 },
    { leaf_index: 0 },
    { leaf_index: 1e300 },
    { leaf_index: "0" },
    { __proto__: { polluted: true } },
    JSON.parse('{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}}}'),
    { host: "a".repeat(10_000) },
    null,
    [],
    "str",
  ]);
  const params = pick(r, [
    { name: pick(r, TOOL_NAMES), arguments: args },
    { name: pick(r, TOOL_NAMES) },
    { protocolVersion: pick(r, ["2025-11-25", "2024-11-05", "1999-01-01", 5]), capabilities: pick(r, [{}, null, { sampling: {} }]), clientInfo: pick(r, [{ name: "f", version: "1" }, {}, "x"]) },
    undefined,
    null,
    "params",
    [1, 2, 3],
  ]);
  const message: Record<string, unknown> = { jsonrpc: pick(r, ["2.0", "2.0", "1.0", 2, undefined]), method };
  if (r() < 0.8) message.id = id;
  if (params !== undefined) message.params = params;
  return message;
}

function body(r: () => number): string | undefined {
  switch (Math.floor(r() * 14)) {
    case 0:
      return undefined;
    case 1:
      return "";
    case 2:
      return "{not json";
    case 3:
      return pick(r, ["null", "true", "1", '"s"', "[]", "{}", "[[]]", "\u0000", "\ufeff{}"]);
    case 4:
      return nested(Math.floor(r() * 5000) + 1, "[", "]");
    case 5:
      return nested(Math.floor(r() * 2000) + 1, '{"a":', "}");
    case 6:
      return JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "health", arguments: { s: "x".repeat(Math.floor(r() * 200_000)) } } });
    case 7:
      // Rarely: over the 4 MiB body limit.
      return r() < 0.05 ? "x".repeat(4 * 1024 * 1024 + 10) : JSON.stringify(Array.from({ length: Math.floor(r() * 50) }, () => jsonRpc(r)));
    case 8:
      return '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"health","arguments":{"__proto__":{"x":1}}},"__proto__":{"polluted":1}}';
    case 9:
      return Array.from({ length: 20 }, () => String.fromCharCode(Math.floor(r() * 0xffff))).join("");
    default:
      return JSON.stringify(r() < 0.15 ? [jsonRpc(r), jsonRpc(r)] : jsonRpc(r));
  }
}

/** A well-formed request on the valid session whose tool name and arguments are hostile: reaches the tools themselves. */
function deepRequest(r: () => number, target: FuzzTarget): FuzzRequest {
  const message = jsonRpc(r) as Record<string, unknown>;
  message.jsonrpc = "2.0";
  message.id = Math.floor(r() * 1e6);
  if (r() < 0.7) message.method = pick(r, ["tools/call", "tools/call", "tools/list", "ping"]);
  return {
    method: "POST",
    headers: { authorization: `Bearer ${target.validToken}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": target.sessionId },
    body: JSON.stringify(message),
    withValidToken: true,
  };
}

export function generateRequest(r: () => number, target: FuzzTarget): FuzzRequest {
  if (r() < 0.25) return deepRequest(r, target);
  const headers: Record<string, string> = {};
  let withValidToken = false;
  const auth = Math.floor(r() * 12);
  if (auth <= 3) {
    headers.authorization = `Bearer ${target.validToken}`;
    withValidToken = true;
  } else if (auth === 4) headers.authorization = `Bearer ${pick(r, target.refusedTokens)}`;
  else if (auth === 5) headers.authorization = `bearer ${target.validToken.slice(0, -1)}${target.validToken.endsWith("A") ? "B" : "A"}`;
  else if (auth === 6) headers.authorization = pick(r, ["Basic dXNlcjpwYXNz", "Bearer", "Bearer  lh_x", `Bearer ${target.validToken} extra`, `${target.validToken}`, "Bearer lh_" + "A".repeat(4000)]);
  else if (auth === 7) headers.authorization = `Bearer lh_${"A".repeat(32)}`;
  // else: no Authorization at all

  const origin = Math.floor(r() * 8);
  if (origin === 0) headers.origin = target.allowedOrigin;
  else if (origin === 1) headers.origin = "null";
  else if (origin === 2) headers.origin = pick(r, ["http://evil.example", "http://127.0.0.1.evil.example", "not a url", `${target.allowedOrigin}/path`, "file://"]);
  if (withValidToken && (origin === 1 || origin === 2)) withValidToken = false; // refused by Origin: must not succeed either

  const ct = Math.floor(r() * 6);
  if (ct <= 2) headers["content-type"] = "application/json";
  else if (ct === 3) headers["content-type"] = pick(r, ["text/plain", "application/json; charset=utf-16", "application/jsonx", "multipart/form-data; boundary=x"]);
  const accept = Math.floor(r() * 6);
  if (accept <= 2) headers.accept = "application/json, text/event-stream";
  else if (accept === 3) headers.accept = pick(r, ["application/json", "text/event-stream", "*/*", "text/html"]);
  if (r() < 0.3) headers["mcp-protocol-version"] = pick(r, ["2025-11-25", "2025-06-18", "2024-11-05", "2099-01-01", "", "garbage"]);
  const sid = Math.floor(r() * 6);
  if (sid <= 1) headers["mcp-session-id"] = target.sessionId;
  else if (sid === 2) headers["mcp-session-id"] = pick(r, ["A".repeat(43), "../../etc/passwd", "", "x".repeat(2000), "' or 1=1 --"]);
  if (r() < 0.03) headers["x-padding"] = "p".repeat(Math.floor(r() * 20_000));
  if (r() < 0.05) headers["last-event-id"] = pick(r, ["0", "x", "-1", "99999999999999999999"]);

  const method = pick(r, ["POST", "POST", "POST", "POST", "POST", "GET", "DELETE", "PUT", "PATCH", "OPTIONS"]);
  // A DELETE that would end the shared session would turn every later deep request into a 404: it gets a stranger's id.
  if (method === "DELETE" && headers["mcp-session-id"] === target.sessionId) headers["mcp-session-id"] = "B".repeat(43);
  return { method, headers, body: method === "GET" || method === "DELETE" ? undefined : body(r), withValidToken };
}

export interface FuzzCounts {
  requests: number;
  byStatus: Record<string, number>;
  serverErrors: number;
  transportErrors: number;
  /** 2xx answers to requests that did not carry a valid token (must be 0). */
  unauthenticatedSuccesses: number;
  authenticatedSuccesses: number;
  /** The first few requests behind unauthenticatedSuccesses or serverErrors, for the report. */
  samples: string[];
}

/**
 * Sends `count` generated requests with `concurrency` in flight. Response
 * bodies are read for short answers and cancelled for streams (an SSE GET
 * would otherwise stay open). Transport errors (connection reset) are
 * counted; the caller decides whether the hub survived.
 */
export async function runFuzz(
  target: FuzzTarget,
  options: { count: number; concurrency: number; seed: number; every?: number; onProgress?: (sent: number) => void },
): Promise<FuzzCounts> {
  const r = rng(options.seed);
  const counts: FuzzCounts = { requests: 0, byStatus: {}, serverErrors: 0, transportErrors: 0, unauthenticatedSuccesses: 0, authenticatedSuccesses: 0, samples: [] };
  const sample = (req: FuzzRequest, status: number) => {
    if (counts.samples.length < 5) counts.samples.push(`${status} ${req.method} ${JSON.stringify(req.headers).slice(0, 300)} ${String(req.body).slice(0, 200)}`);
  };
  let next = 0;
  const worker = async () => {
    while (next < options.count) {
      next++;
      if (options.onProgress !== undefined && options.every !== undefined && next % options.every === 0) options.onProgress(next);
      const req = generateRequest(r, target);
      counts.requests++;
      try {
        const res = await fetch(`${target.url}/api/mcp`, { method: req.method, headers: req.headers, ...(req.body === undefined ? {} : { body: req.body }), signal: AbortSignal.timeout(30_000) });
        const key = String(res.status);
        counts.byStatus[key] = (counts.byStatus[key] ?? 0) + 1;
        if (res.status >= 500) {
          counts.serverErrors++;
          sample(req, res.status);
        }
        if (res.status >= 200 && res.status < 300) {
          if (req.withValidToken) counts.authenticatedSuccesses++;
          else {
            counts.unauthenticatedSuccesses++;
            sample(req, res.status);
          }
        }
        if (res.headers.get("content-type")?.startsWith("text/event-stream")) await res.body?.cancel();
        else await res.arrayBuffer();
      } catch {
        counts.transportErrors++;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, () => worker()));
  return counts;
}
