import type { NextConfig } from "next";
import { SECURITY_HEADERS } from "./server/http/headers";

const config: NextConfig = {
  // The hub embeds Next.js in its own server (bin/next-web.ts); no standalone output.
  reactStrictMode: true,
  poweredByHeader: false,
  experimental: {
    // Next loads every page and route module at start by default: about a
    // CPU-second of each hub start (compiling them, and parsing their source
    // maps, which bin/leasehold.mjs enables), for pages a hub may never
    // serve. A route's module is loaded on its first request instead.
    preloadEntriesOnStart: false,
  },
  // Native/WASM packages must be loaded by Node, not bundled: a bundled
  // PGlite builds but fails at run time.
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "web-tree-sitter", "tree-sitter-bash"],
  // `npm test` type-checks and lints the whole project; the build need not repeat it.
  typescript: { ignoreBuildErrors: true },
  // The same headers bin/next-web.ts sets on every response (and on its own 421), for the app run under bare Next.
  async headers() {
    return [{ source: "/:path*", headers: SECURITY_HEADERS.map(([key, value]) => ({ key, value })) }];
  },
  async rewrites() {
    return [
      // The ledger's public key where verifiers and witnesses look for it.
      { source: "/.well-known/leasehold/ledger-key", destination: "/api/ledger/key" },
      // RFC 9728 protected-resource metadata for /api/mcp: MCP clients look at
      // the root well-known path and at its path-suffixed form.
      { source: "/.well-known/oauth-protected-resource", destination: "/api/oauth-protected-resource" },
      { source: "/.well-known/oauth-protected-resource/api/mcp", destination: "/api/oauth-protected-resource" },
      // RFC 8414 authorization server metadata: the issuer is the public URL with no path.
      { source: "/.well-known/oauth-authorization-server", destination: "/api/oauth-authorization-server" },
    ];
  },
};

export default config;
