import fs from "node:fs";
import path from "node:path";
import type { WebFrontEnd } from "../server/cli/context";
import { HEADER_PEER } from "../server/hosts/protocol";

/**
 * Embeds the production Next.js build in the hub's own HTTP server (one
 * process: route handlers share the hub runtime on globalThis).
 */
export function createNextFrontEnd(root: string): WebFrontEnd {
  return {
    async createRequestHandler({ hostname, port, server }) {
      if (!fs.existsSync(path.join(root, ".next", "BUILD_ID"))) {
        throw new Error("the admin UI is not built; run `npm start` (it builds first) or `npm run build`");
      }
      // next reads NODE_ENV at import time.
      (process.env as Record<string, string>).NODE_ENV = "production";
      process.env.NEXT_MANUAL_SIG_HANDLE = "1";
      const { default: next } = await import("next");
      const app = next({ dev: false, dir: root, hostname, port, httpServer: server, quiet: true });
      await app.prepare();
      const handle = app.getRequestHandler();
      return (req, res) => {
        // Replaces anything a client sent under this name: routes may record it as the peer.
        req.headers[HEADER_PEER] = req.socket.remoteAddress ?? "";
        return handle(req, res);
      };
    },
  };
}
