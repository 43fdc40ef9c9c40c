import fs from "node:fs";
import path from "node:path";
import type { WebFrontEnd } from "../server/cli/context";
import { HEADER_PEER } from "../server/trust/protocol";
import { getHubRuntime } from "../server/hub/runtime";
import { SECURITY_HEADERS, STRICT_TRANSPORT_SECURITY } from "../server/http/headers";
import { allowedHostnames, hostAllowed } from "../server/http/host-allow";
import { serveDirectRoute } from "../server/hub/direct-routes";
import { loopbackIpPageRedirect } from "../server/http/loopback-admin";
import { resolveClientAddress, trustedProxyMatcher } from "../server/http/client-address";

/** Page routes only: the API, Next's assets and well-known documents answer on every allowed Host. */
function pageRedirect(host: string | null, url: string, publicUrlSet: boolean): string | null {
  if (/^\/(api|_next|\.well-known)(\/|$)/.test(url) || url === "/favicon.ico") return null;
  return loopbackIpPageRedirect(host, url, publicUrlSet);
}

/**
 * Idle keep-alive sockets are kept this long. Longer than any common
 * client's idle pool (undici/Node fetch: 4 s; browsers: 60 s+), so a client
 * never reuses a socket the server is closing at that moment (the
 * intermittent `fetch failed`). Node's default is 5 s.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 75_000;

/**
 * Embeds the production Next.js build in the hub's own HTTP server (one
 * process: route handlers share the hub runtime on globalThis). Before Next
 * sees a request: the Host allow-list (421 for a name the hub is not known
 * by — DNS rebinding), and the security headers on every response. Then
 * the guest channel and MCP are answered directly (server/hub/direct-routes.ts)
 * and everything else by Next.js.
 */
export function createNextFrontEnd(root: string): WebFrontEnd {
  return {
    async createRequestHandler({ hostname, port, server }) {
      if (!fs.existsSync(path.join(root, ".next", "BUILD_ID"))) {
        throw new Error("the admin UI is not built; run `npm start` (it builds first) or `npm run build`");
      }
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      const { config } = await getHubRuntime();
      const allowed = allowedHostnames(config.publicUrl, config.host);
      const isTrustedProxy = trustedProxyMatcher(config.trustedProxies ?? []);
      const headers = config.publicUrl.startsWith("https://") ? [...SECURITY_HEADERS, STRICT_TRANSPORT_SECURITY] : SECURITY_HEADERS;
      // next reads NODE_ENV at import time.
      (process.env as Record<string, string>).NODE_ENV = "production";
      process.env.NEXT_MANUAL_SIG_HANDLE = "1";
      const { default: next } = await import("next");
      const app = next({ dev: false, dir: root, hostname, port, httpServer: server, quiet: true });
      await app.prepare();
      const handle = app.getRequestHandler();
      return (req, res) => {
        for (const [name, value] of headers) res.setHeader(name, value);
        if (!hostAllowed(req.headers.host, allowed)) {
          // The body is not read: close rather than drain it.
          res.writeHead(421, { "content-type": "application/json", "cache-control": "no-store", connection: "close" });
          res.end(
            JSON.stringify({
              code: "FORBIDDEN",
              message: `this hub does not answer to Host ${JSON.stringify(req.headers.host ?? "")}`,
              retryable: false,
              hint: "use the hub's public URL (LEASEHOLD_PUBLIC_URL) or a loopback address",
            }),
          );
          return;
        }
        // Admin pages live on localhost, never a loopback IP (server/http/loopback-admin.ts). Answered
        // here, not in Next's proxy: Next turns a same-port Location into a relative one, which loops.
        const target = req.method === "GET" || req.method === "HEAD" ? pageRedirect(req.headers.host ?? null, req.url ?? "/", config.publicUrlSet === true) : null;
        if (target !== null) {
          res.writeHead(308, { location: target, "cache-control": "no-store", "content-length": "0" });
          res.end();
          return;
        }
        // Replaces anything a client sent under this name: routes record it as the client's address
        // (sign-in throttling, host list, OAuth registration). X-Forwarded-For counts only from a
        // trusted proxy (LEASEHOLD_TRUSTED_PROXIES; server/http/client-address.ts).
        req.headers[HEADER_PEER] = resolveClientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], isTrustedProxy);
        return serveDirectRoute(req, res) ?? handle(req, res);
      };
    },
  };
}
