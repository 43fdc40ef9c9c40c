/**
 * HTTP hardening: a real hub (`leasehold start`, PGlite, no local guest)
 * driven over HTTP as a hostile client and as the shell client would.
 *
 * - every route that takes a body reads it through one bounded reader: a
 *   64 MiB chunked body is answered 413 and the hub's memory does not grow
 *   by anything like it; bad JSON and non-objects are 400, never 500;
 * - a Host allow-list on every route (DNS rebinding) and security headers
 *   on every answer;
 * - `/api/health` without a credential says only status and version;
 * - the keep-alive timeout outlasts client pools: SDK calls on one session
 *   straddling Node's default 5 s keep-alive timeout;
 * - `tools/mcp-call.mjs` ends its session: more calls in a row than the
 *   per-token session cap (set to SESSION_CAP here) all succeed;
 * - the stateless revision's `server/discover` probe gets a JSON-RPC error
 *   the SDK delivers as the answer to that request.
 *
 * The long forms (SDK calls 3–8 s apart, 40 shell-client calls against the
 * default cap of 32) are `npm run bench -- --only http-soak`
 * (test/hub/bench/http-soak.bench.ts).
 */
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runInRunningHub, runProcess, startHub, type RunningHub } from "../support/hub-process";

const MiB = 1024 * 1024;

let hub: RunningHub;
let token: string;

/** The hub's per-token MCP session cap here: small, so a client that leaves its sessions open hits it within a few calls. */
const SESSION_CAP = 4;

beforeAll(async () => {
  hub = await startHub({ LEASEHOLD_LOCAL_GUEST: "0", LEASEHOLD_MCP_SESSIONS_PER_TOKEN: String(SESSION_CAP) });
  const made = await runInRunningHub(hub.dataDir, ["token", "create", "--name", "http-test", "--expires", "1d"]);
  const secret = made.stdout.split("\n").find((line) => line.startsWith("lh_"));
  if (made.code !== 0 || secret === undefined) throw new Error(`token create failed: ${made.stderr}`);
  token = secret;
}, 120_000);

afterAll(async () => {
  await hub?.stop();
}, 30_000);

function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  return Number(kb) * 1024;
}

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request over a fresh connection; `headers` may set Host. */
function request(method: string, pathname: string, options: { headers?: Record<string, string>; body?: string } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: hub.port, method, path: pathname, headers: { connection: "close", ...options.headers }, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/**
 * POSTs `total` bytes as a chunked body (no Content-Length), 1 MiB at a
 * time, until the hub answers; samples the hub's RSS meanwhile. Resolves
 * with the status and the largest RSS growth seen. The connection is
 * keep-alive, as clients' pools are: with `Connection: close` Node closes
 * the socket right after the answer while the body is still arriving, and
 * the kernel's reset can overtake the 413 (server/http/README.md).
 */
function chunkedFlood(pathname: string, total: number, headers: Record<string, string> = {}): Promise<{ status: number; sent: number; peakGrowth: number }> {
  const pid = hub.process.pid!;
  const base = rssBytes(pid);
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 20);
  const chunk = Buffer.alloc(MiB, 0x61); // "aaaa…": not JSON, and not valid as anything
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered: number | undefined;
    const finish = () => {
      clearInterval(sampler);
      peak = Math.max(peak, rssBytes(pid));
      if (answered === undefined) reject(new Error(`no answer from ${pathname} after ${sent} bytes`));
      else resolve({ status: answered, sent, peakGrowth: peak - base });
    };
    const req = http.request({ host: "127.0.0.1", port: hub.port, method: "POST", path: pathname, headers: { "content-type": "application/json", "transfer-encoding": "chunked", connection: "keep-alive", ...headers }, agent: false }, (res) => {
      answered = res.statusCode;
      res.resume();
      res.on("end", () => {
        req.destroy();
        finish();
      });
    });
    // The hub closes the connection after answering: a write error then is expected.
    req.on("error", () => (answered === undefined ? setTimeout(finish, 200) : undefined));
    const pump = () => {
      while (sent < total && answered === undefined && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
      if (sent >= total && answered === undefined && !req.destroyed) req.end();
    };
    pump();
  });
}

const BODY_ROUTES = [
  "/api/agent/enrol",
  "/api/agent/health",
  "/api/agent/jobs/00000000-0000-4000-8000-000000000000/heartbeat",
  "/api/agent/jobs/00000000-0000-4000-8000-000000000000/output",
  "/api/agent/jobs/00000000-0000-4000-8000-000000000000/result",
  "/api/ledger/cosignature",
  "/api/trpc/health.get",
];

describe("bodies: one bounded reader", () => {
  it.each(BODY_ROUTES)("POST %s with a 64 MiB chunked body: 413 before the body ends, and the hub's RSS grows by far less than the body", async (route) => {
    // tRPC refuses a POST without the admin page's Origin before reading anything (CSRF); send it so the body reader is what answers.
    const extra: Record<string, string> = route.startsWith("/api/trpc/") ? { origin: `http://127.0.0.1:${hub.port}` } : {};
    // Warm the route through the same path (its bundle loads once) so the figure is the body's alone.
    await request("POST", route, { body: "{}", headers: { "content-type": "application/json", ...extra } });
    const flood = await chunkedFlood(route, 64 * MiB, extra);
    console.log(`${route}: ${flood.status} after ${flood.sent / MiB} MiB sent; peak RSS growth ${(flood.peakGrowth / MiB).toFixed(1)} MiB`);
    expect(flood.status).toBe(413);
    // The hub answered long before the body ended (what it did not read, it did not hold). How much the
    // client pushed meanwhile depends on loopback speed and on any pause of the hub's event loop (a
    // housekeeping query on embedded PGlite): 4–9 MiB usually, 20 MiB seen once, so the bound is the body's 3/4.
    expect(flood.sent).toBeLessThan(48 * MiB);
    // …and its memory did not grow by anything like the body.
    expect(flood.peakGrowth).toBeLessThan(24 * MiB);
  }, 120_000);

  it("POST /api/mcp with a 64 MiB chunked body and a valid token: 413 (JSON-RPC error), RSS grows by far less than the body", async () => {
    const flood = await chunkedFlood("/api/mcp", 64 * MiB, { authorization: `Bearer ${token}`, accept: "application/json, text/event-stream" });
    console.log(`/api/mcp: ${flood.status} after ${flood.sent / MiB} MiB sent; peak RSS growth ${(flood.peakGrowth / MiB).toFixed(1)} MiB`);
    expect(flood.status).toBe(413);
    expect(flood.sent).toBeLessThan(48 * MiB); // as above: before the body ends, whatever loopback and event-loop pauses add
    expect(flood.peakGrowth).toBeLessThan(24 * MiB);
  }, 120_000);

  it("a declared Content-Length over the limit is refused 413 before the body is read", async () => {
    const answer = await request("POST", "/api/agent/enrol", { headers: { "content-type": "application/json", "content-length": String(2 * MiB) }, body: "" }).catch((error: Error) => error);
    // The hub answers without waiting for the 2 MiB that never come.
    expect(answer).not.toBeInstanceOf(Error);
    expect((answer as RawAnswer).status).toBe(413);
  });

  it.each([
    ["null", "null"],
    ["an array", "[]"],
    ["a string", '"lhe_x"'],
    ["a number", "1"],
    ["truncated JSON", '{"code":'],
    ["not UTF-8", "\u00ff"],
    ["an empty body", ""],
  ])("POST /api/agent/enrol with %s: 400 INVALID_ARGUMENT, never 500", async (_name, body) => {
    const bytes = body === "\u00ff" ? Buffer.from([0xff, 0xfe]) : Buffer.from(body);
    const res = await fetch(`${hub.url}/api/agent/enrol`, { method: "POST", headers: { "content-type": "application/json" }, body: bytes });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("INVALID_ARGUMENT");
  });

  it.each([["null"], ["[]"], ["{"]])("POST /api/ledger/cosignature with %s: 400, never 500", async (body) => {
    const res = await fetch(`${hub.url}/api/ledger/cosignature`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(res.status).toBe(400);
  });

  it("a signed agent route with a non-object body is refused (401 unsigned), never 500", async () => {
    for (const body of ["null", "[]", "{"]) {
      const res = await fetch(`${hub.url}/api/agent/health`, { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(res.status, body).toBe(401);
    }
  });
});

describe("Host allow-list and security headers", () => {
  const REBOUND = `rebind.attacker.example:${0}`;
  it.each(["/", "/api/health", "/api/mcp", "/api/agent/enrol", "/api/trpc/health.get", "/api/ledger/checkpoint", "/.well-known/oauth-protected-resource"])(
    "GET %s with a rebinding Host is answered 421 and reaches no route; with a loopback Host it is served",
    async (route) => {
      const rebound = await request("GET", route, { headers: { host: REBOUND.replace(":0", `:${hub.port}`) } });
      expect(rebound.status).toBe(421);
      expect(JSON.parse(rebound.body)).toMatchObject({ code: "FORBIDDEN" });
      expect(rebound.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
      for (const host of [`127.0.0.1:${hub.port}`, `localhost:${hub.port}`]) {
        const served = await request("GET", route, { headers: { host } });
        expect(served.status, `${route} Host ${host}`).not.toBe(421);
      }
    },
  );

  it("refuses malformed Host headers and names the public URL's host as allowed", async () => {
    for (const host of [`127.0.0.1.evil.example:${hub.port}`, `user@127.0.0.1:${hub.port}`, `[::ffff:7f00:1]:${hub.port}`]) {
      expect((await request("GET", "/api/health", { headers: { host } })).status, host).toBe(421);
    }
  });

  it.each(["/", "/api/health", "/api/mcp", "/api/agent/enrol", "/no-such-page"])("%s carries CSP (frame-ancestors 'none'), nosniff and Referrer-Policy", async (route) => {
    const res = await request(route === "/api/agent/enrol" ? "POST" : "GET", route, { body: route === "/api/agent/enrol" ? "{}" : undefined });
    expect(res.headers["content-security-policy"]).toMatch(/default-src 'self'.*frame-ancestors 'none'/);
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["referrer-policy"]).toBe("no-referrer");
    expect(res.headers["x-frame-options"]).toBe("DENY");
  });
});

describe("/api/health", () => {
  it("without a credential says only status and version; a revoked or bogus token gets the same; a valid token sees hosts and the ledger", async () => {
    const anonymous = (await (await fetch(`${hub.url}/api/health`)).json()) as Record<string, unknown>;
    expect(Object.keys(anonymous).sort()).toEqual(["status", "version"]);
    const bogus = (await (await fetch(`${hub.url}/api/health`, { headers: { authorization: "Bearer lh_bogus" } })).json()) as Record<string, unknown>;
    expect(Object.keys(bogus).sort()).toEqual(["status", "version"]);
    const full = (await (await fetch(`${hub.url}/api/health`, { headers: { authorization: `Bearer ${token}` } })).json()) as Record<string, unknown>;
    expect(full).toHaveProperty("hosts");
    expect(full).toHaveProperty("ledger");
  });
});

describe("keep-alive", () => {
  it("the hub keeps idle connections longer than client pools (Keep-Alive timeout ≥ 60 s)", async () => {
    const res = await fetch(`${hub.url}/api/health`);
    await res.text();
    const timeout = Number(/timeout=(\d+)/.exec(res.headers.get("keep-alive") ?? "")?.[1]);
    expect(timeout).toBeGreaterThanOrEqual(60);
  });

  it("the SDK client makes calls 4.5 s and 5.5 s apart (either side of Node's default 5 s keep-alive) on one session with no failure", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${hub.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    const client = new Client({ name: "keepalive-test", version: "1.0.0" });
    await client.connect(transport);
    const failures: string[] = [];
    try {
      for (const gapS of [4.5, 5.5]) {
        await new Promise((r) => setTimeout(r, gapS * 1000));
        try {
          const result = await client.callTool({ name: "health", arguments: {} });
          if (result.isError) failures.push(`after ${gapS} s: error result`);
        } catch (error) {
          failures.push(`after ${gapS} s: ${(error as Error).message}`);
        }
      }
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
    expect(failures).toEqual([]);
  }, 120_000);
});

describe("MCP sessions from the shell client, and the stateless probe", () => {
  it(`tools/mcp-call.mjs ends its session: ${SESSION_CAP + 2} calls in a row all succeed (the per-token session cap is ${SESSION_CAP})`, async () => {
    const outcomes: number[] = [];
    for (let i = 0; i < SESSION_CAP + 2; i++) {
      const r = await runProcess(process.execPath, [path.join(ROOT, "tools", "mcp-call.mjs"), "--url", hub.url, "health"], {
        env: { ...(process.env as Record<string, string>), MCP_TOKEN: token },
        label: `mcp-call #${i + 1}`,
      });
      if (r.code !== 0) throw new Error(`call #${i + 1} exited ${r.code}: ${r.stderr}`);
      outcomes.push(r.code);
    }
    expect(outcomes).toHaveLength(SESSION_CAP + 2);
  }, 120_000);

  it("a server/discover probe without a session gets a JSON-RPC Method-not-found error for that id, delivered by the SDK's transport", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${hub.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    const received: JSONRPCMessage[] = [];
    const errors: Error[] = [];
    transport.onmessage = (message) => received.push(message);
    transport.onerror = (error) => errors.push(error);
    await transport.start();
    await transport.send({ jsonrpc: "2.0", id: 7, method: "server/discover", params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } } });
    await transport.close();
    expect(errors).toEqual([]);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32601 } });
  });

  it("any other request without Mcp-Session-Id gets 400 with a JSON-RPC error carrying its id", async () => {
    const res = await fetch(`${hub.url}/api/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: "abc", method: "tools/list" }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: "abc", error: { code: -32000, message: "Bad Request: Mcp-Session-Id header is required" } });
  });
});
