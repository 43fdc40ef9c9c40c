import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { sendWebResponse, toWebRequest } from "./node-bridge";

let server: http.Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => {
    if (!server) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
  server = undefined;
});

async function serve(route: (request: Request) => Promise<Response>): Promise<string> {
  server = http.createServer((req, res) => {
    void (async () => sendWebResponse(res, await route(toWebRequest(req, res))))();
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("node bridge", () => {
  it("hands the route the URL, method, headers and body as sent, and sends its answer with status, headers, cookies and length", async () => {
    let seen: { url: string; method: string; header: string | null; body: string } | undefined;
    const base = await serve(async (request) => {
      seen = { url: request.url, method: request.method, header: request.headers.get("x-probe"), body: await request.text() };
      const headers = new Headers({ "content-type": "application/json", "x-answer": "yes" });
      headers.append("set-cookie", "a=1");
      headers.append("set-cookie", "b=2");
      return new Response(JSON.stringify({ ok: true }), { status: 201, headers });
    });
    const response = await fetch(`${base}/api/agent/jobs/x/result?wait=5`, { method: "POST", headers: { "x-probe": "p" }, body: "payload" });
    expect(seen).toEqual({ url: `${base}/api/agent/jobs/x/result?wait=5`, method: "POST", header: "p", body: "payload" });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-answer")).toBe("yes");
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(response.headers.get("content-length")).toBe(String(JSON.stringify({ ok: true }).length));
    expect(await response.json()).toEqual({ ok: true });
  });

  it("a GET has no body, and an answer without a body is empty", async () => {
    let body: ReadableStream | null = new ReadableStream();
    const base = await serve(async (request) => {
      body = request.body;
      return new Response(null, { status: 204 });
    });
    const response = await fetch(`${base}/api/agent/jobs`);
    expect(body).toBeNull();
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
  });

  it("an event stream's headers and first event arrive while the stream is still open", async () => {
    let close: (() => void) | undefined;
    const base = await serve(async () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("data: first\n\n"));
          close = () => controller.close();
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    const response = await fetch(`${base}/api/mcp`);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: first\n\n");
    close!();
    expect((await reader.read()).done).toBe(true);
  });

  it("the route's request.signal aborts when the client goes away before the answer is finished", async () => {
    let signal: AbortSignal | undefined;
    let abortSeen!: () => void;
    const aborted = new Promise<void>((resolve) => (abortSeen = resolve));
    const base = await serve(async (request) => {
      signal = request.signal;
      request.signal.addEventListener("abort", abortSeen);
      return new Response(new ReadableStream(), { headers: { "content-type": "text/event-stream" } });
    });
    const client = new AbortController();
    const response = await fetch(`${base}/api/mcp`, { signal: client.signal });
    expect(response.status).toBe(200);
    expect(signal?.aborted).toBe(false);
    client.abort();
    await aborted;
    expect(signal?.aborted).toBe(true);
  });
});
