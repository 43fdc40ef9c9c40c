/**
 * Security headers on every page and route (set by bin/next-web.ts on
 * every response, and by next.config.ts when the app runs under bare Next).
 * No imports: next.config.ts and proxy.ts load this file.
 *
 * Two policies:
 * - `CONTENT_SECURITY_POLICY`, on every answer: no script but same-origin
 *   files, everything else same-origin only, no plugins, no <base>, no
 *   framing at all. API answers and static files need nothing more.
 * - `pageContentSecurityPolicy(nonce)`, on every HTML page (proxy.ts makes a
 *   fresh nonce per request and Next.js puts it on its own inline bootstrap
 *   scripts): scripts only with that nonce ('strict-dynamic' lets those load
 *   the page's chunks). Styles keep 'unsafe-inline': React `style`
 *   attributes and the charts set inline styles, and a style cannot run code.
 */
const COMMON_DIRECTIVES = [
  "default-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
];

export const CONTENT_SECURITY_POLICY = ["script-src 'self'", ...COMMON_DIRECTIVES].join("; ");

/** The policy for one HTML page render: inline scripts only with this request's nonce. */
export function pageContentSecurityPolicy(nonce: string): string {
  return [`script-src 'self' 'nonce-${nonce}' 'strict-dynamic'`, ...COMMON_DIRECTIVES].join("; ");
}

/** HSTS, sent only when the hub is served over HTTPS (it would be ignored, and misleading, over HTTP). */
export const STRICT_TRANSPORT_SECURITY: readonly [string, string] = ["Strict-Transport-Security", "max-age=31536000"];

export const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ["Content-Security-Policy", CONTENT_SECURITY_POLICY],
  ["X-Content-Type-Options", "nosniff"],
  ["Referrer-Policy", "no-referrer"],
  // For browsers without CSP frame-ancestors.
  ["X-Frame-Options", "DENY"],
  ["Cross-Origin-Opener-Policy", "same-origin"],
];
