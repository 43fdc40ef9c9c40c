/**
 * Fetching a Client ID Metadata Document: the one place the hub makes an
 * outbound request to a URL an unauthenticated party chose. In order:
 *
 *  1. The id must be a canonical https CIMD URL (isClientIdUrl).
 *  2. The host is resolved once; every address must be public unicast
 *     (address.ts) unless the operator allow-listed the host name.
 *  3. The connection goes to a vetted address itself, so a second DNS
 *     answer (DNS rebinding) can never redirect it; TLS still sends the host
 *     name as SNI and verifies the certificate against that name.
 *  4. No redirect is followed (a 3xx is a failure naming its target); only a
 *     200 with an application/json body, uncompressed, of at most maxBytes.
 *  5. One deadline covers all of it — DNS, connect, TLS, headers and every
 *     body byte — so a server that trickles its answer cannot hold a
 *     request open.
 *  6. The document must name this exact URL as its client_id and pass the
 *     metadata rules shared with registration (metadata.ts).
 *
 * Every failure is `{ok: false, reason}` with a reason fit for the audit log
 * and the consent page's error; only invalid options (a programming error)
 * throw.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { request, type RequestOptions } from "node:https";
import { isIP } from "node:net";
import { checkServerIdentity, type PeerCertificate } from "node:tls";
import { z } from "zod";
import { LeaseholdError } from "../../errors";
import { classifyAddress } from "./address";
import { isClientIdUrl } from "./client-id";
import { checkClientMetadata, hostForName, type MetadataResult } from "./metadata";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export interface FetchOptions {
  /** Host names allowed even though they resolve to loopback/private/link-local addresses (operator setting). */
  allowHosts: readonly string[];
  /** Default 5000 (whole fetch). */
  timeoutMs?: number;
  /** Default 5120. */
  maxBytes?: number;
  /** DNS resolution, injectable for tests; default node:dns lookup with all: true. */
  lookup?: (host: string) => Promise<ResolvedAddress[]>;
  /**
   * Trusted CA certificates (PEM) replacing Node's default roots, for tests
   * with a throwaway CA. The hub itself leaves this unset: Node's roots plus
   * NODE_EXTRA_CA_CERTS apply.
   */
  ca?: string | Buffer;
}

export const DEFAULT_TIMEOUT_MS = 5000;
export const DEFAULT_MAX_BYTES = 5120;

// The options come from the hub's own code and configuration, not from the
// client; a bad one is a programming error and is thrown, not returned.
const OptionsSchema = z.object({
  allowHosts: z.array(z.string()),
  timeoutMs: z.number().int().min(1).max(60_000).optional(),
  maxBytes: z.number().int().min(1).max(1024 * 1024).optional(),
  lookup: z.function().optional(),
  ca: z.union([z.string(), z.instanceof(Buffer)]).optional(),
});

/** Cache lifetime bounds for a fetched document, in seconds. */
export const MIN_MAX_AGE_S = 60;
export const MAX_MAX_AGE_S = 24 * 60 * 60;
export const DEFAULT_MAX_AGE_S = 300;

/**
 * The document's Cache-Control max-age clamped to [60 s, 24 h]; 300 s when
 * it gives none. no-store / no-cache still cache for the minimum: the bound
 * keeps a client from making the hub refetch on every authorization.
 */
export function maxAgeFromCacheControl(header: string | undefined): number {
  if (header === undefined) return DEFAULT_MAX_AGE_S;
  let maxAge: number | null = null;
  for (const part of header.split(",")) {
    const directive = part.trim().toLowerCase();
    if (directive === "no-store" || directive === "no-cache") return MIN_MAX_AGE_S;
    const m = /^max-age\s*=\s*"?([0-9]+)"?$/.exec(directive);
    if (m && m[1] !== undefined && maxAge === null) maxAge = Number(m[1]);
  }
  if (maxAge === null) return DEFAULT_MAX_AGE_S;
  return Math.min(MAX_MAX_AGE_S, Math.max(MIN_MAX_AGE_S, maxAge));
}

type Failure = { ok: false; reason: string };

function fail(reason: string): Failure {
  return { ok: false, reason };
}

/** A value a remote server chose, made safe and short for a log line. */
function quote(value: string): string {
  return JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value);
}

async function defaultLookup(host: string): Promise<ResolvedAddress[]> {
  const answers = await dnsLookup(host, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

/** Rejects when the signal aborts, so an await cannot outlive the deadline. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(new Error("aborted"));
    signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
  });
}

/** The addresses to connect to, each vetted; a host that has even one refused address is refused. */
async function resolveAndVet(
  hostname: string,
  options: FetchOptions,
  signal: AbortSignal,
): Promise<{ ok: true; addresses: ResolvedAddress[] } | Failure> {
  const bare = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
  const allowed = options.allowHosts.some((h) => {
    const entry = h.trim().toLowerCase();
    return entry === bare || entry === hostname;
  });
  let addresses: ResolvedAddress[];
  const literal = isIP(bare);
  if (literal !== 0) {
    addresses = [{ address: bare, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await Promise.race([(options.lookup ?? defaultLookup)(bare), untilAborted(signal)]);
    } catch (err) {
      if (signal.aborted) throw err;
      return fail(`cannot resolve ${bare}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  if (addresses.length === 0) return fail(`${bare} resolved to no address`);
  for (const a of addresses) {
    const family = isIP(a.address);
    if (family === 0 || family !== a.family) return fail(`${bare} resolved to ${quote(String(a.address))}, which is not an IPv${a.family} address`);
    if (allowed) continue;
    const verdict = classifyAddress(a.address);
    if (!verdict.ok) {
      return fail(`${bare} resolves to ${verdict.reason}; refused (an operator may allow the host in LEASEHOLD_OAUTH_CLIENT_URL_ALLOW)`);
    }
  }
  return { ok: true, addresses };
}

interface Received {
  body: Buffer;
  cacheControl: string | undefined;
}

/** Errors that mean this address did not answer, so the next one may be tried. */
const CONNECT_ERRORS = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "EAFNOSUPPORT"]);

type Attempt = { ok: true; received: Received } | Failure | { ok: false; reason: string; unreachable: true };

function getOnce(url: URL, target: ResolvedAddress, options: FetchOptions, maxBytes: number, signal: AbortSignal): Promise<Attempt> {
  const bare = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const requestOptions: RequestOptions = {
    // The vetted address, never the name: no second resolution happens.
    host: target.address,
    family: target.family,
    port: url.port === "" ? 443 : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: "GET",
    headers: { host: url.host, accept: "application/json", "accept-encoding": "identity" },
    // SNI carries a host name only (RFC 6066 forbids IP literals there).
    servername: isIP(bare) === 0 ? bare : "",
    // The certificate must be valid for the host name in the URL, not for
    // the address we happened to connect to.
    checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(bare, cert),
    // Explicit, so NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment cannot turn verification off.
    rejectUnauthorized: true,
    // A fresh connection each time: a pooled socket is keyed by the address
    // we pass, not the name, and there is nothing worth reusing.
    agent: false,
    signal,
  };
  if (options.ca !== undefined) requestOptions.ca = options.ca;

  return new Promise<Attempt>((resolve) => {
    let settled = false;
    let connected = false;
    const settle = (result: Attempt) => {
      if (settled) return;
      settled = true;
      req.destroy();
      resolve(result);
    };
    const onError = (err: NodeJS.ErrnoException) => {
      if (signal.aborted) return settle(fail("timed out"));
      const code = err.code ?? "error";
      const reason = `fetching ${url.href} failed: ${code}${err.message && err.message !== code ? ` (${err.message})` : ""}`;
      if (!connected && CONNECT_ERRORS.has(code)) return settle({ ok: false, reason, unreachable: true });
      settle(fail(reason));
    };
    const req = request(requestOptions, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        const location = res.headers.location;
        return settle(fail(`${url.href} answered ${status} redirecting to ${location === undefined ? "nowhere" : quote(location)}; redirects are not followed`));
      }
      if (status !== 200) return settle(fail(`${url.href} answered HTTP ${status}, not 200`));
      const contentType = res.headers["content-type"];
      const mediaType = contentType?.split(";")[0]?.trim().toLowerCase();
      if (mediaType !== "application/json") {
        return settle(fail(`${url.href} has content-type ${contentType === undefined ? "(none)" : quote(contentType)}, not application/json`));
      }
      const encoding = res.headers["content-encoding"];
      if (encoding !== undefined && encoding.trim().toLowerCase() !== "identity") {
        return settle(fail(`${url.href} is sent with content-encoding ${quote(encoding)}; only identity is accepted`));
      }
      const declared = res.headers["content-length"];
      if (declared !== undefined && Number(declared) > maxBytes) {
        return settle(fail(`${url.href} is ${declared} bytes, over the ${maxBytes}-byte limit`));
      }
      const chunks: Buffer[] = [];
      let total = 0;
      res.on("data", (chunk: Buffer) => {
        total += chunk.length;
        if (total > maxBytes) return settle(fail(`${url.href} is over the ${maxBytes}-byte limit`));
        chunks.push(chunk);
      });
      res.on("end", () => settle({ ok: true, received: { body: Buffer.concat(chunks), cacheControl: res.headers["cache-control"] } }));
      res.on("error", onError);
      res.on("aborted", () => settle(fail(signal.aborted ? "timed out" : `${url.href} closed the connection mid-body`)));
    });
    req.on("socket", (socket) => socket.once("connect", () => (connected = true)));
    req.on("error", onError);
    req.end();
  });
}

/**
 * Fetches and checks the Client ID Metadata Document at `clientId`.
 * `maxAgeS` is the document's Cache-Control max-age clamped to [60 s, 24 h].
 * Nothing the client or the remote server does makes it throw; it throws
 * (LeaseholdError INVALID_ARGUMENT) only for invalid `options`.
 */
export async function fetchClientMetadataDocument(clientId: string, options: FetchOptions): Promise<MetadataResult> {
  const checkedOptions = OptionsSchema.safeParse(options);
  if (!checkedOptions.success) {
    throw new LeaseholdError("INVALID_ARGUMENT", `invalid client metadata fetch options: ${checkedOptions.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`, { tier: "hub" });
  }
  if (!isClientIdUrl(clientId)) {
    return fail("client id is not a metadata document URL (https, a path other than /, no fragment, userinfo or dot segments, canonical form)");
  }
  const url = new URL(clientId);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const timedOut = () => fail(`fetching ${clientId} timed out after ${timeoutMs} ms`);
  try {
    let vetted: Awaited<ReturnType<typeof resolveAndVet>>;
    try {
      vetted = await resolveAndVet(url.hostname, options, controller.signal);
    } catch {
      return timedOut();
    }
    if (!vetted.ok) return vetted;

    let received: Received | null = null;
    let lastFailure = fail(`fetching ${clientId} failed`);
    for (const target of vetted.addresses) {
      const attempt = await getOnce(url, target, options, maxBytes, controller.signal);
      if (attempt.ok) {
        received = attempt.received;
        break;
      }
      if (controller.signal.aborted) return timedOut();
      lastFailure = fail(attempt.reason);
      if (!("unreachable" in attempt)) break;
    }
    if (received === null) return lastFailure;
    return checkDocument(clientId, url, received);
  } finally {
    clearTimeout(timer);
  }
}

function checkDocument(clientId: string, url: URL, received: Received): MetadataResult {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(received.body);
  } catch {
    return fail(`${clientId} is not valid UTF-8`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return fail(`${clientId} is not valid JSON`);
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    return fail(`${clientId} is not a JSON object`);
  }
  const documentId = (document as Record<string, unknown>).client_id;
  // Simple string comparison, as the CIMD draft requires: no normalisation
  // that could make two URLs one client.
  if (documentId !== clientId) {
    return fail(`the document's client_id ${typeof documentId === "string" ? quote(documentId) : "is missing or not a string and"} does not equal the URL it was fetched from`);
  }
  const checked = checkClientMetadata(document, hostForName(url.href), null);
  if (!checked.ok) return fail(`${clientId}: ${checked.error}: ${checked.description}`);
  return {
    ok: true,
    metadata: { clientId, ...checked.metadata },
    maxAgeS: maxAgeFromCacheControl(received.cacheControl),
  };
}
