/**
 * Redirect URIs: which may be registered (OAuth 2.1 §2.3.1, RFC 8252 §7 for
 * native apps) and how a presented one is compared with the registered ones.
 * The authorization code travels to this URI, so a loose rule here hands
 * codes to whoever owns the host it lets through.
 */

export const MAX_REDIRECT_URI_LENGTH = 2048;
export const MAX_REDIRECT_URIS = 10;

/** Hosts an `http:` redirect may name: the loopback interface, where a native app listens (RFC 8252 §7.3). */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

export function validateRedirectUri(uri: string): { ok: true } | { ok: false; reason: string } {
  if (uri.length === 0) return { ok: false, reason: "redirect URI is empty" };
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return { ok: false, reason: `redirect URI is longer than ${MAX_REDIRECT_URI_LENGTH} characters` };
  // Whitespace, controls and backslashes are silently rewritten by URL
  // parsers (a backslash becomes a slash in http/https); a URI whose parsed
  // form differs from its text is a URI two parties read differently.
  if (!/^[\x21-\x7e]+$/.test(uri)) return { ok: false, reason: "redirect URI contains whitespace, control or non-ASCII characters" };
  if (/[\\"<>^`{|}]/.test(uri)) return { ok: false, reason: "redirect URI contains a character that is not allowed in a URI" };
  if (uri.includes("#")) return { ok: false, reason: "redirect URI has a fragment" };
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return { ok: false, reason: "redirect URI is not an absolute URI" };
  }
  if (url.username !== "" || url.password !== "" || /^[a-z][a-z0-9+.-]*:\/\/[^/?]*@/i.test(uri)) {
    return { ok: false, reason: "redirect URI has userinfo" };
  }
  if (url.protocol === "https:") return { ok: true };
  if (url.protocol === "http:") {
    // Spelled literally: the parser would also read 127.1, 0x7f000001 or
    // LOCALHOST as loopback, and such spellings only serve to confuse the
    // port-only comparison below and the admin reading the consent page.
    if (LOOPBACK_HOSTS.has(url.hostname) && splitLoopback(uri) !== null) return { ok: true };
    return { ok: false, reason: "an http redirect URI must name a loopback host, spelled 127.0.0.1, [::1] or localhost, with a port from 1 to 65535 if any" };
  }
  // A private-use scheme (RFC 8252 §7.1) is a reversed domain name the app
  // owns, so it has a dot; this also keeps out javascript:, data:, file:.
  const scheme = url.protocol.slice(0, -1);
  if (scheme.includes(".")) return { ok: true };
  return { ok: false, reason: `redirect URI scheme ${JSON.stringify(scheme)} is not https, loopback http or a private-use scheme with a dot` };
}

/**
 * `http://<loopback host>[:port]<rest>` split into host and rest; the port
 * is the only part that may differ between registered and presented.
 */
const LOOPBACK_HTTP = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(?::([0-9]{1,5}))?([/?][^#]*)?$/;

function splitLoopback(uri: string): { host: string; port: number | null; rest: string } | null {
  const m = LOOPBACK_HTTP.exec(uri);
  if (!m || m[1] === undefined) return null;
  const port = m[2] === undefined ? null : Number(m[2]);
  if (port !== null && (port < 1 || port > 65535)) return null;
  return { host: m[1], port, rest: m[3] ?? "" };
}

/** Exact string match, except that an http loopback redirect (127.0.0.1, [::1], localhost) may differ in port only (RFC 8252 §7.3). */
export function redirectUriMatches(registered: readonly string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  const p = splitLoopback(presented);
  if (p === null || !validateRedirectUri(presented).ok) return false;
  return registered.some((r) => {
    const s = splitLoopback(r);
    return s !== null && s.host === p.host && s.rest === p.rest;
  });
}

/** A host name as cookies see it: case-insensitive, a trailing dot ignored, IPv6 without brackets. */
function cookieHost(host: string): string {
  return host.toLowerCase().replace(/\.+$/, "").replace(/^\[|\]$/g, "");
}

/** The loopback spellings a native client can use instead, minus the admin's own host. */
function loopbackAlternatives(adminHost: string): string {
  const others = ["http://127.0.0.1:PORT", "http://[::1]:PORT"].filter((origin) => cookieHost(new URL(origin.replace("PORT", "1")).hostname) !== cookieHost(adminHost));
  return others.join(" or ");
}

/**
 * Refuses a redirect URI on the host name the hub's admin pages are served
 * from. Browsers send cookies by host name, never by port (RFC 6265 §8.5),
 * so a client listening on http://localhost:9999 while the admin works on
 * http://localhost:8700 would receive the admin's session cookie with the
 * browser's arrival at its redirect URI. Any scheme counts (an https
 * listener on that host gets the Secure cookie too). Compared on the parsed
 * host, so spellings the URL parser folds (case, percent-encoding, a
 * trailing dot, 127.1) cannot slip past; an unparsable URI is refused.
 */
export function checkRedirectUriHost(uri: string, adminHost: string): { ok: true } | { ok: false; reason: string } {
  let host: string;
  try {
    host = new URL(uri).hostname;
  } catch {
    return { ok: false, reason: "redirect URI is not an absolute URI" };
  }
  // A private-use scheme without an authority (com.example.app:/cb) names no host a cookie could go to.
  if (cookieHost(host) === "" || cookieHost(host) !== cookieHost(adminHost)) return { ok: true };
  return {
    ok: false,
    reason: `redirect URI is on ${cookieHost(adminHost)}, the host name this hub's admin pages are served from: browsers share cookies across every port of a host name, so the admin's session cookie would go to it. A loopback client should listen on ${loopbackAlternatives(adminHost)} instead (RFC 8252 §8.3)`,
  };
}
