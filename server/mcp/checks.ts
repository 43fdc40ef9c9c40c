/**
 * The MCP endpoint's security checks as small pure functions. Each returns a
 * tagged result and denies on any doubt: a missing or doubled header, a
 * parse failure, a `null` Origin.
 */

export type Check<T = undefined> = T extends undefined ? { ok: true } | Refusal : { ok: true; value: T } | Refusal;

export interface Refusal {
  ok: false;
  /** HTTP status to answer with. */
  status: 400 | 401 | 403 | 413 | 429 | 431;
  code: "UNAUTHENTICATED" | "FORBIDDEN" | "INVALID_ARGUMENT" | "RATE_LIMITED";
  message: string;
}

function refuse(status: Refusal["status"], code: Refusal["code"], message: string): Refusal {
  return { ok: false, status, code, message };
}

/**
 * DNS-rebinding defence. A request without Origin comes from a non-browser
 * client and is allowed (the bearer token still authenticates it). A browser
 * always sends Origin on a cross-origin POST; `null` (sandboxed frames,
 * file: pages, redirects) and anything that is not exactly an allowed
 * origin are refused.
 */
export function checkOrigin(origin: string | null, allowed: readonly string[]): Check {
  if (origin === null) return { ok: true };
  if (origin === "null") return refuse(403, "FORBIDDEN", "Origin null is not allowed");
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return refuse(403, "FORBIDDEN", "Origin header is malformed");
  }
  // A valid Origin is exactly scheme://host[:port] — no path, no credentials, no trailing slash.
  if (parsed.origin !== origin) return refuse(403, "FORBIDDEN", "Origin header is malformed");
  if (!allowed.includes(origin)) return refuse(403, "FORBIDDEN", `Origin ${origin} is not on this hub's allow-list`);
  return { ok: true };
}

/** The origins a browser may call from: the public URL's own origin, then the configured extras. */
export function allowedOrigins(publicUrl: string, extra: readonly string[]): string[] {
  return [new URL(publicUrl).origin, ...extra];
}

/** Extracts the bearer credential. Anything but exactly `Bearer <token>` is a refusal. */
export function parseBearer(authorization: string | null): Check<string> {
  if (authorization === null || authorization.length === 0) return refuse(401, "UNAUTHENTICATED", "missing bearer token");
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization);
  if (!match || match[1] === undefined) return refuse(401, "UNAUTHENTICATED", "Authorization must be `Bearer <token>`");
  return { ok: true, value: match[1] };
}

/** Total size of the request's header names and values (Node's own limit is a coarser backstop). */
export function checkHeaderBytes(headers: Iterable<[string, string]>, max: number): Check {
  let total = 0;
  for (const [name, value] of headers) total += name.length + value.length + 4;
  if (total > max) return refuse(431, "INVALID_ARGUMENT", `request headers are ${total} bytes, over the ${max}-byte limit`);
  return { ok: true };
}

/**
 * Refuses JSON nested deeper than `max` without parsing it, so a hostile
 * body cannot exhaust the parser's or a validator's stack. Scans brackets
 * outside strings; a malformed document is left for the parser to reject.
 */
export function checkJsonDepth(text: string, max: number): Check {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) return refuse(400, "INVALID_ARGUMENT", `JSON is nested deeper than ${max} levels`);
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return { ok: true };
}

/** `Content-Length`, when given, must be a plain decimal within the limit. */
export function checkDeclaredLength(contentLength: string | null, max: number): Check {
  if (contentLength === null) return { ok: true };
  if (!/^\d{1,15}$/.test(contentLength)) return refuse(400, "INVALID_ARGUMENT", "Content-Length is malformed");
  if (Number(contentLength) > max) return refuse(413, "INVALID_ARGUMENT", `request body is over the ${max}-byte limit`);
  return { ok: true };
}

/** Session ids this hub issues: 43 base64url characters (32 random bytes). */
export function checkSessionIdShape(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}
