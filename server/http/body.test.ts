import { describe, expect, it } from "vitest";
import { jsonObjectOf, readBoundedBody, readJsonObject } from "./body";

function streamed(chunks: number, size: number, onPull: () => void = () => undefined): Request {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      onPull();
      if (sent >= chunks) return controller.close();
      sent++;
      controller.enqueue(new Uint8Array(size).fill(0x61));
    },
  });
  return new Request("http://hub.test/x", { method: "POST", body, duplex: "half" } as RequestInit);
}

describe("readBoundedBody", () => {
  it("returns the exact bytes of a body within the limit", async () => {
    const r = await readBoundedBody(new Request("http://hub.test/x", { method: "POST", body: "hello" }), 5);
    expect(r.ok && Buffer.from(r.value).toString()).toBe("hello");
  });

  it("refuses a declared Content-Length over the limit (413) without reading, and a malformed one (400)", async () => {
    let pulls = 0;
    const req = streamed(10, 1024, () => pulls++);
    const headers = new Headers(req.headers);
    headers.set("content-length", "999999");
    const declared = await readBoundedBody(new Request(req, { headers }), 1024);
    expect(declared).toMatchObject({ ok: false, status: 413 });
    expect(pulls).toBeLessThanOrEqual(1);
    const malformed = await readBoundedBody(new Request("http://hub.test/x", { method: "POST", body: "x", headers: { "content-length": "1e9" } }), 1024);
    expect(malformed).toMatchObject({ ok: false, status: 400 });
  });

  it("refuses a chunked body (413) as soon as it passes the limit, before the body ends", async () => {
    let pulls = 0;
    const r = await readBoundedBody(streamed(1000, 1024, () => pulls++), 4 * 1024);
    const pullsAtRefusal = pulls;
    expect(r).toMatchObject({ ok: false, status: 413 });
    expect(r.ok ? "" : r.error.message).toBe("request body is over the 4096-byte limit");
    // The refusal came after about 5 of the 1000 chunks (the rest is read and dropped as it arrives, for the lingering close).
    expect(pullsAtRefusal).toBeLessThan(10);
  });
});

describe("JSON object bodies", () => {
  it.each([["null"], ["[]"], ["1"], ['"x"'], ["{"], [""]])("%j is a 400, never a thrown error", async (text) => {
    const r = await readJsonObject(new Request("http://hub.test/x", { method: "POST", body: text }), 1024);
    expect(r).toMatchObject({ ok: false, status: 400 });
  });

  it("an empty body is allowed only when optional; an object passes", () => {
    expect(jsonObjectOf(new Uint8Array(0), { optional: true })).toEqual({ ok: true, value: undefined });
    expect(jsonObjectOf(Buffer.from('{"a":1}'))).toEqual({ ok: true, value: { a: 1 } });
    expect(jsonObjectOf(Buffer.from([0xff, 0xfe]))).toMatchObject({ ok: false, status: 400 });
  });
});
