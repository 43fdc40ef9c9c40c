/**
 * Next.js Proxy (runs before every page render): a fresh CSP nonce per HTML
 * request. Next.js reads the policy from the request headers and puts the
 * nonce on the inline scripts it writes; the same policy goes out on the
 * response. Pages are rendered per request (the admin layouts are dynamic),
 * so every page gets its own nonce. API routes and static files keep the
 * stricter script-less policy bin/next-web.ts sets on every answer.
 */
import { NextResponse, type NextRequest } from "next/server";
import { pageContentSecurityPolicy } from "./server/http/headers";

export function proxy(request: NextRequest): NextResponse {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  const nonce = btoa(String.fromCharCode(...bytes));
  const policy = pageContentSecurityPolicy(nonce);
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("x-nonce", nonce);
  requestHeaders.set("content-security-policy", policy);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("content-security-policy", policy);
  return response;
}

export const config = {
  matcher: [
    {
      source: "/((?!api/|_next/static|_next/image|favicon.ico|\\.well-known/).*)",
      // Prefetches are not rendered into a document; they need no nonce of their own.
      missing: [
        { type: "header", key: "next-router-prefetch" },
        { type: "header", key: "purpose", value: "prefetch" },
      ],
    },
  ],
};
