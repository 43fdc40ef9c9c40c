import http from "node:http";
import { LeaseholdError } from "../errors";

export type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

/**
 * Binds the hub's port before anything else happens, so "port in use" is
 * reported before a data directory or database is touched. Requests that
 * arrive while the hub is still starting wait for `setHandler`.
 */
export async function bindHttpServer(host: string, port: number): Promise<{
  server: http.Server;
  setHandler(handler: RequestListener): void;
  close(): Promise<void>;
}> {
  let handler: RequestListener | undefined;
  const waiting: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const run = () => {
      Promise.resolve(handler?.(req, res)).catch((error: unknown) => {
        console.error(`leasehold: request failed: ${error instanceof Error ? error.message : String(error)}`);
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: "INTERNAL", message: "internal error", retryable: false }));
      });
    };
    if (handler) run();
    else waiting.push(run);
  });
  // Header limit: a client cannot make the hub buffer megabytes of headers.
  server.maxHeadersCount = 100;
  server.headersTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE") {
        reject(new LeaseholdError("CONFIG_INVALID", `LEASEHOLD_PORT ${port} is already in use on ${host}; stop the other process or choose another port`, { tier: "config" }));
      } else if (error.code === "EADDRNOTAVAIL" || error.code === "ENOTFOUND" || error.code === "EAI_AGAIN") {
        reject(new LeaseholdError("CONFIG_INVALID", `LEASEHOLD_HOST ${host} is not an address of this machine (${error.code})`, { tier: "config" }));
      } else if (error.code === "EACCES") {
        reject(new LeaseholdError("CONFIG_INVALID", `LEASEHOLD_PORT ${port} on ${host} is not permitted for this user`, { tier: "config" }));
      } else {
        reject(error);
      }
    });
    server.listen({ host, port, exclusive: true }, () => resolve());
  });
  return {
    server,
    setHandler(h) {
      handler = h;
      for (const run of waiting.splice(0)) run();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
