import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Node's request/response objects to the web `Request`/`Response` the
 * route functions in `server/` take and give, for routes the hub serves
 * without Next.js (`server/hub/direct-routes.ts`).
 *
 * What Next.js does for a route handler and this keeps: the URL built from
 * the Host header and the request target, every header as sent, the body as
 * a stream read only by the route (its own bounded reader decides the
 * limit), and `request.signal` aborted when the client goes away before the
 * answer is finished. What it does not do: compress answers.
 */
export function toWebRequest(req: IncomingMessage, res: ServerResponse): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  const aborted = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) aborted.abort();
  });
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  const init: RequestInit & { duplex?: "half" } = { method, headers, signal: aborted.signal };
  if (hasBody) {
    init.body = lazyBody(req);
    init.duplex = "half";
  }
  // The Host header was checked against the allow-list before any route runs.
  return new Request(new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`), init);
}

/**
 * The request body as a web stream that touches `req` only when the route
 * reads it. A body no route read (a refusal answered before reading) is then
 * left to Node, which discards it after the answer and keeps the connection
 * usable; a stream attached up front would pause the socket instead.
 */
function lazyBody(req: IncomingMessage): ReadableStream<Uint8Array> {
  let chunks: AsyncIterator<Buffer> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        chunks ??= (req as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength));
      },
      // Cancelled part-way (a body over its limit, after the lingering read): the
      // connection goes. Cancelled unread: Node discards it after the answer.
      async cancel() {
        await chunks?.return?.();
      },
    },
    // Nothing is read ahead of the route.
    { highWaterMark: 0 },
  );
}

/**
 * Writes `response` to `res`. An event stream is sent as it is produced,
 * its headers at once; any other answer is a bounded JSON or byte range
 * already in memory, so it is read whole and sent with its length.
 */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  for (const [name, value] of response.headers) {
    if (name === "set-cookie") continue;
    res.setHeader(name, value);
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  const streaming = response.headers.get("content-type")?.startsWith("text/event-stream") ?? false;
  if (response.body === null || !streaming) {
    const body = response.body === null ? undefined : Buffer.from(await response.arrayBuffer());
    if (body !== undefined) res.setHeader("content-length", String(body.length));
    res.writeHead(response.status, response.statusText || undefined);
    res.end(body);
    return;
  }
  res.writeHead(response.status, response.statusText || undefined);
  res.flushHeaders();
  const reader = response.body.getReader();
  const gone = () => void reader.cancel().catch(() => undefined);
  res.once("close", gone);
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      if (!res.write(chunk.value)) await new Promise<void>((resolve) => {
        const go = () => {
          res.off("drain", go);
          res.off("close", go);
          resolve();
        };
        res.once("drain", go);
        res.once("close", go);
      });
      if (res.destroyed) break;
    }
  } catch {
    // The stream failed or was cancelled because the client left: nothing more to send.
  } finally {
    res.off("close", gone);
    if (!res.destroyed) res.end();
  }
}
