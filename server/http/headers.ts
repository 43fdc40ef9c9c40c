/**
 * Security headers on every page and route (set by bin/next-web.ts on
 * every response, and by next.config.ts when the app runs under bare Next).
 * No imports: next.config.ts loads this file.
 *
 * CSP: Next's App Router puts its bootstrap data in inline <script> tags
 * and the admin page is prerendered (no per-request nonce can reach it), so
 * scripts are 'self' plus inline; everything else is same-origin only, no
 * plugins, no <base>, and no framing at all.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ["Content-Security-Policy", CONTENT_SECURITY_POLICY],
  ["X-Content-Type-Options", "nosniff"],
  ["Referrer-Policy", "no-referrer"],
  // For browsers without CSP frame-ancestors.
  ["X-Frame-Options", "DENY"],
  ["Cross-Origin-Opener-Policy", "same-origin"],
];
