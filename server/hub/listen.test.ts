/**
 * The hub's own HTTP server on a real loopback socket: a body that trickles
 * in is cut off at the request timeout, and one address cannot hold more
 * than its share of connections. Every wait is on an event.
 */
import { once } from "node:events";
import http from "node:http";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { CLOSE_GRACE_MS, DEFAULT_HTTP_LIMITS, HEADERS_TIMEOUT_MS, MAX_CONNECTIONS_PER_ADDRESS, REQUEST_TIMEOUT_MS, bindHttpServer, type HttpLimits } from "./listen";

type Listener = Awaited<ReturnType<typeof bindHttpServer>>;
let listener: Listener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

/** A hub server on 127.0.0.1 whose handler reads the whole body and says how long it was. */
async function hub(limits: Partial<HttpLimits>): Promise<{ listener: Listener; port: number }> {
  listener = await bindHttpServer("127.0.0.1", 0, { ...DEFAULT_HTTP_LIMITS, ...limits });
  listener.setHandler(async (req, res) => {
    let length = 0;
    for await (const chunk of req) length += (chunk as Buffer).length;
    res.writeHead(200, { "content-type": "text/plain" }).end(`read ${length}`);
  });
  return { listener, port: (listener.server.address() as net.AddressInfo).port };
}

/** A raw connection that records everything the server sends until it closes. */
async function rawConnection(port: number, localAddress = "127.0.0.1"): Promise<{ socket: net.Socket; received: () => string; closed: Promise<unknown> }> {
  const socket = net.connect({ host: "127.0.0.1", port, localAddress });
  let text = "";
  socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
  socket.on("error", () => undefined); // a refused connection may read a reset
  const closed = once(socket, "close");
  await once(socket, "connect");
  return { socket, received: () => text, closed };
}

/** GET / over a fresh connection from `localAddress`: the status. */
async function get(port: number, localAddress: string): Promise<number> {
  const request = http.get({ host: "127.0.0.1", port, path: "/", localAddress, agent: false });
  const [response] = (await once(request, "response")) as [http.IncomingMessage];
  response.resume();
  await once(response, "end");
  return response.statusCode ?? 0;
}

describe("the hub's HTTP server limits", () => {
  it("defaults: 30 s for a whole request, 20 s for its headers, 64 connections per address", () => {
    expect(REQUEST_TIMEOUT_MS).toBe(30_000);
    expect(HEADERS_TIMEOUT_MS).toBeLessThanOrEqual(REQUEST_TIMEOUT_MS);
    expect(MAX_CONNECTIONS_PER_ADDRESS).toBe(64);
  });

  it("answers 408 and closes a connection whose body trickles in past the request timeout; a body on time is read", async () => {
    const { port } = await hub({ requestTimeoutMs: 300, headersTimeoutMs: 300, checkIntervalMs: 50 });
    const onTime = await rawConnection(port);
    onTime.socket.end("POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nConnection: close\r\n\r\nABCD");
    await onTime.closed;
    expect(onTime.received()).toMatch(/^HTTP\/1\.1 200 [\s\S]*read 4/);

    const slow = await rawConnection(port);
    slow.socket.write("POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nA");
    // Another byte later: the client is alive, only slow.
    slow.socket.write("B");
    await slow.closed;
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("closes a connection whose headers never end at the headers timeout", async () => {
    const { port } = await hub({ requestTimeoutMs: 300, headersTimeoutMs: 200, checkIntervalMs: 50 });
    const slow = await rawConnection(port);
    slow.socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a");
    await slow.closed;
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("closes at once a connection past the cap from one address, counts it, and still serves other addresses and freed places", async () => {
    const { listener, port } = await hub({ connectionsPerAddress: 3 });
    const serverSide: net.Socket[] = [];
    listener.server.on("connection", (socket: net.Socket) => serverSide.push(socket));
    const held = [];
    for (let i = 0; i < 3; i++) {
      const accepted = once(listener.server, "connection");
      held.push(await rawConnection(port));
      await accepted;
    }

    const fourth = await rawConnection(port);
    await fourth.closed;
    expect(fourth.received()).toBe("");
    expect(listener.connectionStats()).toEqual({ open: 3, refused: 1 });

    // Another client address is not affected (all of 127.0.0.0/8 is loopback).
    expect(await get(port, "127.0.0.2")).toBe(200);

    // A connection that ends frees its place.
    const first = serverSide[0]!;
    const freed = once(first, "close");
    held[0]!.socket.destroy();
    await freed;
    expect(await get(port, "127.0.0.1")).toBe(200);
    expect(listener.connectionStats().refused).toBe(1);
  });
});

describe("closing the hub's HTTP server (after a drain)", () => {
  const BODY_BYTES = 8 * 1024 * 1024;

  it("an answer already produced but not yet sent reaches its client whole (no reset), while a long-poll that never answers is cut within the grace", async () => {
    listener = await bindHttpServer("127.0.0.1", 0, DEFAULT_HTTP_LIMITS);
    let answeredNow: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (answeredNow = resolve));
    listener.setHandler((req, res) => {
      // A long-poll: no answer until the connection is closed under it.
      if (req.url === "/poll") return;
      // A large answer handed to the socket at once: most of it waits in the write queue while the client does not read.
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(BODY_BYTES) }).end(Buffer.alloc(BODY_BYTES, 7));
      answeredNow();
    });
    const port = (listener.server.address() as net.AddressInfo).port;
    const poll = new Promise<string>((resolve) => {
      const req = http.get({ host: "127.0.0.1", port, path: "/poll", agent: false }, () => resolve("answered"));
      req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    let received = 0;
    let closingNow: () => void = () => undefined;
    const closing = new Promise<void>((resolve) => (closingNow = resolve));
    const download = new Promise<{ bytes: number; error?: string }>((resolve) => {
      const req = http.get({ host: "127.0.0.1", port, path: "/big", agent: false }, (res) => {
        res.pause();
        // The client starts reading only once the server is closing.
        void closing.then(() => res.resume());
        res.on("data", (chunk: Buffer) => (received += chunk.length));
        res.on("end", () => resolve({ bytes: received }));
        res.on("error", (error: NodeJS.ErrnoException) => resolve({ bytes: received, error: error.code ?? error.message }));
        res.on("aborted", () => resolve({ bytes: received, error: "aborted" }));
      });
      req.on("error", (error: NodeJS.ErrnoException) => resolve({ bytes: received, error: error.code ?? error.message }));
    });
    await answered;
    const began = Date.now();
    const closed = listener.close();
    closingNow();
    const result = await download;
    expect(result).toEqual({ bytes: BODY_BYTES });
    expect(await poll).toBe("ECONNRESET");
    await closed;
    expect(Date.now() - began).toBeLessThan(CLOSE_GRACE_MS + 1_000);
    listener = undefined;
  });
});
