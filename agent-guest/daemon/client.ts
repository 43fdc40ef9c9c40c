/**
 * The guest's only connection: outbound HTTPS to the hub (plain HTTP only on
 * this machine or with --insecure-http: transport.ts).
 * Every request is signed with the host key (server/trust/protocol.ts): the
 * method, path+query, time, a fresh nonce and the body's SHA-256. The guest
 * listens on nothing.
 */
import { randomBytes, sign, type KeyObject } from "node:crypto";
import { HEADER_HOST, HEADER_NONCE, HEADER_SIGNATURE, HEADER_TIMESTAMP, requestSigningString, sha256Hex } from "../../server/trust";

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

  async request(method: "GET" | "POST", pathAndQuery: string, body?: unknown, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<HubResponse> {
    const bytes = body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body));
    const timestamp = String(Date.now());
    const nonce = randomBytes(16).toString("hex");
    const message = requestSigningString({ method, pathAndQuery, timestamp, nonce, bodySha256: sha256Hex(bytes) });
    const signature = sign(null, Buffer.from(message), this.key).toString("base64");
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const response = await fetch(`${this.hub}${pathAndQuery}`, {
      method,
      headers: {
        [HEADER_HOST]: this.hostId,
        [HEADER_TIMESTAMP]: timestamp,
        [HEADER_NONCE]: nonce,
        [HEADER_SIGNATURE]: signature,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : bytes,
      signal,
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (response.status >= 400) throw new HubError(response.status, parsed as { code?: string; message?: string } | null);
    return { status: response.status, body: parsed };
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
