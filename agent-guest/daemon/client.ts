/**
 * The guest's only connection: outbound HTTPS to the hub (plain HTTP only on
 * this machine or with --insecure-http: transport.ts).
 * Every request is signed with the host key (server/trust/protocol.ts): the
 * method, path+query, time, a fresh nonce and the body's SHA-256. The guest
 * listens on nothing.
 */
import { randomBytes, sign, type KeyObject } from "node:crypto";
import { HEADER_HOST, HEADER_NONCE, HEADER_SIGNATURE, HEADER_TIMESTAMP, JOB_ACK_RETRY_MS, JobAckAnswer, requestSigningString, sha256Hex } from "../../server/trust";

export class HubError extends Error {
  constructor(
    readonly status: number,
    readonly payload: { code?: string; message?: string } | null,
  ) {
    super(`hub answered ${status}${payload?.code ? ` ${payload.code}` : ""}${payload?.message ? `: ${payload.message}` : ""}`);
  }
  /** Worth retrying: the hub or the network is having trouble, not the request. */
  get transient(): boolean {
    return this.status >= 500 || this.status === 429 || this.status === 408;
  }
}

export interface HubResponse {
  status: number;
  body: unknown;
}

export class HubClient {
  constructor(
    readonly hub: string,
    readonly hostId: string,
    private readonly key: KeyObject,
  ) {}

  /** A signed fetch: the method, path+query, time, a fresh nonce and the body's SHA-256, signed with the host key. */
  private signedFetch(method: "GET" | "POST", pathAndQuery: string, bytes: Buffer<ArrayBuffer> | undefined, options: { signal?: AbortSignal; timeoutMs?: number }): Promise<Response> {
    const timestamp = String(Date.now());
    const nonce = randomBytes(16).toString("hex");
    const message = requestSigningString({ method, pathAndQuery, timestamp, nonce, bodySha256: sha256Hex(bytes ?? Buffer.alloc(0)) });
    const signature = sign(null, Buffer.from(message), this.key).toString("base64");
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    return fetch(`${this.hub}${pathAndQuery}`, {
      method,
      headers: {
        [HEADER_HOST]: this.hostId,
        [HEADER_TIMESTAMP]: timestamp,
        [HEADER_NONCE]: nonce,
        [HEADER_SIGNATURE]: signature,
        ...(bytes === undefined ? {} : { "content-type": "application/json" }),
      },
      body: bytes,
      signal,
    });
  }

  async request(method: "GET" | "POST", pathAndQuery: string, body?: unknown, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<HubResponse> {
    const response = await this.signedFetch(method, pathAndQuery, body === undefined ? undefined : Buffer.from(JSON.stringify(body)), options);
    const text = await response.text();
    if (response.status >= 400) throw new HubError(response.status, parseJson(text) as { code?: string; message?: string } | null);
    return { status: response.status, body: parseJson(text) };
  }

  /**
   * Takes an offered job (server/trust/protocol.ts `JobAckAnswer`): "acked"
   * when the hub confirmed it is this guest's to run, "withdrawn" when the hub
   * refused (the offer was re-queued, cancelled or never made: run nothing).
   * An answer lost on the network is asked again — the hub answers a repeated
   * ack alike — for up to `retryMs`; then the offer is dropped unrun.
   */
  async ackJob(jobId: string, options: { signal?: AbortSignal; retryMs?: number } = {}): Promise<{ taken: "acked" } | { taken: "withdrawn"; reason: string }> {
    const until = Date.now() + (options.retryMs ?? JOB_ACK_RETRY_MS);
    for (let attempt = 0; ; attempt += 1) {
      try {
        const res = await this.request("POST", `/api/agent/jobs/${encodeURIComponent(jobId)}/ack`, undefined, { signal: options.signal, timeoutMs: 5_000 });
        if (JobAckAnswer.safeParse(res.body).success) return { taken: "acked" };
        return { taken: "withdrawn", reason: `the hub answered ${res.status} without an acknowledgement` };
      } catch (error) {
        if (error instanceof HubError && !error.transient) return { taken: "withdrawn", reason: error.message };
        if (options.signal?.aborted || Date.now() >= until) return { taken: "withdrawn", reason: `no answer to the acknowledgement (${error instanceof Error ? error.message : String(error)})` };
      }
      await sleep(Math.min(backoffMs(attempt, 1_000), Math.max(0, until - Date.now())), options.signal);
    }
  }

  /**
   * A signed GET whose answer is raw bytes (the artifact route), signed
   * exactly like `request`. The body is read up to `maxBytes` and no
   * further: a longer answer is refused (HubError 502) rather than
   * buffered. A 4xx/5xx answer is a HubError with the hub's JSON error.
   */
  async requestBytes(pathAndQuery: string, options: { signal?: AbortSignal; timeoutMs?: number; maxBytes: number }): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
    const response = await this.signedFetch("GET", pathAndQuery, undefined, options);
    if (response.status >= 400) throw new HubError(response.status, parseJson(await response.text()) as { code?: string; message?: string } | null);
    const parts: Buffer[] = [];
    let length = 0;
    const reader = response.body?.getReader();
    for (;;) {
      const part = reader === undefined ? { done: true as const } : await reader.read();
      if (part.done) break;
      length += part.value.length;
      if (length > options.maxBytes) {
        await reader?.cancel().catch(() => undefined);
        throw new HubError(502, { code: "INVALID_ARGUMENT", message: `the hub answered more than the ${options.maxBytes} bytes asked for` });
      }
      parts.push(Buffer.from(part.value));
    }
    return { status: response.status, headers: response.headers, bytes: Buffer.concat(parts, length) };
  }
}

function parseJson(text: string): unknown {
  try {
    return text.length > 0 ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/** Exponential backoff with jitter: 250 ms doubling to `maxMs`. */
export function backoffMs(attempt: number, maxMs = 5_000): number {
  const base = Math.min(maxMs, 250 * 2 ** Math.min(attempt, 10));
  return Math.round(base / 2 + Math.random() * (base / 2));
}

/** Sleeps `ms`, or less if `signal` aborts; the abort listener is removed either way (loops sleep forever). */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
