/**
 * The one way a route reads a request body: streamed, counted as it
 * arrives, and abandoned the moment it passes the route's limit — so a
 * hostile client cannot make the hub hold more than `max` bytes of its body
 * (a chunked upload has no Content-Length to check up front). Refusals are
 * values with the HTTP status to answer with (413 over the limit, 400 for
 * bytes that are not the JSON the route needs), never exceptions that end
 * as 500.
 */
import { LeaseholdError, toErrorPayload } from "../errors";

export type BodyResult<T> = { ok: true; value: T } | BodyRefusal;

export interface BodyRefusal {
  ok: false;
  status: 400 | 413;
  error: LeaseholdError;
}

function refuse(status: 400 | 413, message: string): BodyRefusal {
  return { ok: false, status, error: new LeaseholdError("INVALID_ARGUMENT", message, { tier: "hub" }) };
}

function tooLarge(max: number): BodyRefusal {
  return refuse(413, `request body is over the ${max}-byte limit`);
}

/**
 * Reads at most `max` bytes. A declared Content-Length over the limit is
 * refused before a byte is read; otherwise the stream is cancelled as soon
 * as the running count passes `max` (what was read so far is dropped).
 */
export async function readBoundedBody(request: Request, max: number): Promise<BodyResult<Uint8Array<ArrayBuffer>>> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (!/^\d{1,15}$/.test(declared)) return refuse(400, "Content-Length is malformed");
    if (Number(declared) > max) return tooLarge(max);
  }
  if (request.body === null) return { ok: true, value: new Uint8Array(new ArrayBuffer(0)) };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      return refuse(400, "the request body could not be read");
    }
    if (chunk.done) break;
    total += chunk.value.byteLength;
    if (total > max) {
      // Nothing more of this body is kept; what still arrives is discarded as it comes.
      chunks.length = 0;
      discardRest(reader);
      return tooLarge(max);
    }
    chunks.push(chunk.value);
  }
  const bytes = new Uint8Array(new ArrayBuffer(total));
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return { ok: true, value: bytes };
}

/** How long the rest of an oversized body is read and thrown away before the connection is dropped. */
export const LINGER_MS = 5_000;

/**
 * Reads and drops the rest of a refused body for at most LINGER_MS, then
 * cancels. Cancelling at once would close the socket while the client is
 * still sending: the kernel then answers with a reset, and the client loses
 * the 413 it was about to read (the "lingering close" every HTTP server
 * needs). Nothing read here is kept, so memory stays flat; a client that
 * keeps sending past the window is cut off.
 */
function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>): void {
  const timer = setTimeout(() => void reader.cancel().catch(() => undefined), LINGER_MS);
  timer.unref();
  void (async () => {
    try {
      for (;;) if ((await reader.read()).done) break;
    } catch {
      // the client went away or the timer cancelled the stream
    } finally {
      clearTimeout(timer);
    }
  })();
}

/** Strict UTF-8 JSON text; refused (400) otherwise. An empty body is `undefined`. */
export function parseJsonBytes(bytes: Uint8Array): BodyResult<unknown> {
  if (bytes.length === 0) return { ok: true, value: undefined };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return refuse(400, "the request body is not UTF-8");
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return refuse(400, "the request body is not JSON");
  }
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A JSON object body within `max` bytes. `optional` lets an empty body
 * through as `undefined` (routes whose body may be left out); anything that
 * is not an object — `null`, an array, a number — is a 400.
 */
export async function readJsonObject(request: Request, max: number, options: { optional?: boolean } = {}): Promise<BodyResult<Record<string, unknown> | undefined>> {
  const body = await readBoundedBody(request, max);
  if (!body.ok) return body;
  return jsonObjectOf(body.value, options);
}

export function jsonObjectOf(bytes: Uint8Array, options: { optional?: boolean } = {}): BodyResult<Record<string, unknown> | undefined> {
  const parsed = parseJsonBytes(bytes);
  if (!parsed.ok) return parsed;
  if (parsed.value === undefined) return options.optional === true ? { ok: true, value: undefined } : refuse(400, "the request body must be a JSON object (it is empty)");
  if (!isJsonObject(parsed.value)) return refuse(400, "the request body must be a JSON object");
  return { ok: true, value: parsed.value };
}

/** The answer to a refused body, in the hub's error shape. */
export function bodyRefusalResponse(refusal: BodyRefusal): Response {
  return Response.json(toErrorPayload(refusal.error), { status: refusal.status });
}

/** Thrown by callers that unwind with exceptions; `handle` wrappers turn it into `bodyRefusalResponse`. */
export class BodyRefusedError extends Error {
  constructor(readonly refusal: BodyRefusal) {
    super(refusal.error.message);
  }
}
