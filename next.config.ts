import type { NextConfig } from "next";

const config: NextConfig = {
  // The hub embeds Next.js in its own server (bin/next-web.ts); no standalone output.
  reactStrictMode: true,
  poweredByHeader: false,
  // Native/WASM packages must be loaded by Node, not bundled: a bundled
  // PGlite builds but fails at run time.
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "web-tree-sitter", "tree-sitter-bash"],
  // `npm test` type-checks and lints the whole project; the build need not repeat it.
  typescript: { ignoreBuildErrors: true },
  async rewrites() {
    return [
      // The ledger's public key where verifiers and witnesses look for it.
      { source: "/.well-known/leasehold/ledger-key", destination: "/api/ledger/key" },
    ];
  },
};

export default config;
