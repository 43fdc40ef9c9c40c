import http from "node:http";
import { Server as NetServer, type Socket } from "node:net";
import { LeaseholdError } from "../errors";
import { logLine } from "../text";

export type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

/**
 * Limits that keep one client from holding the hub's connections.
 *
 * - `requestTimeoutMs`: the whole request (headers and body) must arrive in
 *   this time, else Node answers 408 and closes. Node's default (300 s) let a
 *   body sent at 1 byte/s hold a connection for five minutes. 30 s covers the
 *   largest body the hub accepts (4 MiB for MCP) at ~140 KB/s; answers are not
 *   limited by it (a long-poll or an event stream may run as long as it needs).
 * - `headersTimeoutMs`: the headers alone (at most `requestTimeoutMs`).
 * - `connectionsPerAddress`: open connections from one client address; the
 *   next is closed as soon as it is accepted, before a byte is read, and
 *   counted. 64 is far above a browser (6 per origin) or the guest agent's
 *   pool, far below the process's file descriptors. IPv4-mapped IPv6
 *   addresses count as their IPv4 address.
 * - `checkIntervalMs`: how often Node looks for expired requests (its own
 *   default is 30 s, which would let a request run up to twice its timeout).
 */
export interface HttpLimits {
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  connectionsPerAddress: number;
  checkIntervalMs: number;
}

export const REQUEST_TIMEOUT_MS = 30_000;
export const HEADERS_TIMEOUT_MS = 20_000;
export const MAX_CONNECTIONS_PER_ADDRESS = 64;

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  headersTimeoutMs: HEADERS_TIMEOUT_MS,
  connectionsPerAddress: MAX_CONNECTIONS_PER_ADDRESS,
  checkIntervalMs: 5_000,
};

/** What the connection cap has done since the server started. */
export interface ConnectionStats {
  /** Connections open now. */
  open: number;
  /** Connections closed at once because their address already had its share open. */
  refused: number;
}

/** The key a connection is counted under: its peer address, IPv4-mapped IPv6 as plain IPv4. */
function addressKey(address: string | undefined): string {
  if (address === undefined) return "unknown";
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice("::ffff:".length) : address;
}

/** Closes a connection beyond `limit` per address at once; returns the counts. */
function capConnectionsPerAddress(server: http.Server, limit: number): () => ConnectionStats {
  const perAddress = new Map<string, number>();
  let open = 0;
  let refused = 0;
  server.on("connection", (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    const current = perAddress.get(key) ?? 0;
    if (current >= limit) {
      refused += 1;
      socket.destroy();
      return;
    }
    perAddress.set(key, current + 1);
    open += 1;
    socket.once("close", () => {
      open -= 1;
      const left = (perAddress.get(key) ?? 1) - 1;
      if (left <= 0) perAddress.delete(key);
      else perAddress.set(key, left);
    });
  });
  return () => ({ open, refused });
}

/**
 * Binds the hub's port before anything else happens, so "port in use" is
 * reported before a data directory or database is touched. Requests that
 * arrive while the hub is still starting wait for `setHandler`.
 */
export async function bindHttpServer(
  host: string,
  port: number,
  limits: HttpLimits = DEFAULT_HTTP_LIMITS,
): Promise<{
  server: http.Server;
  setHandler(handler: RequestListener): void;
  connectionStats(): ConnectionStats;
  close(): Promise<void>;
}> {
  let handler: RequestListener | undefined;
  const waiting: Array<() => void> = [];
  const options: http.ServerOptions = {
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
    connectionsCheckingInterval: limits.checkIntervalMs,
  };
  // Responses not yet fully written: closing waits for them (closeGracefully).
  const unfinished = new Set<http.ServerResponse>();
  const sockets = new Set<Socket>();
  const server = http.createServer(options, (req, res) => {
    unfinished.add(res);
    res.once("close", () => unfinished.delete(res));
    const run = () => {
      Promise.resolve(handler?.(req, res)).catch((error: unknown) => {
        console.error(logLine(`leasehold: request failed: ${error instanceof Error ? error.message : String(error)}`));
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ code: "INTERNAL", message: "internal error", retryable: false }));
      });
    };
    if (handler) run();
    else waiting.push(run);
  });
  // Header limit: a client cannot make the hub buffer megabytes of headers.
  server.maxHeadersCount = 100;
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const connectionStats = capConnectionsPerAddress(server, limits.connectionsPerAddress);
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
    connectionStats,
    close: () => closeGracefully(server, unfinished, sockets, CLOSE_GRACE_MS),
  };
}

/**
 * How long closing the listener waits for answers still on their way out
 * before cutting every connection (a long-poll that has not answered, an
 * event stream, a client that stopped reading).
 */
export const CLOSE_GRACE_MS = 3_000;

/**
 * Stops accepting, ends every connection that is not answering, lets each
 * response in progress finish (up to `graceMs`) and ends its connection
 * then, and destroys whatever is still open at the deadline. A connection is
 * ended (its bytes flushed, then FIN), never destroyed, while it may still
 * hold an answer: destroying it resets a response the handler had already
 * produced but the socket had not yet sent — a drained MCP call's answer
 * arriving at its client as ECONNRESET, more often the busier the machine
 * (docs/deploy.md#drain). Node's own `http.Server.close()` does exactly that
 * (it destroys every connection whose request has been answered, sent or
 * not), so only the listening socket is closed through `net.Server`.
 */
function closeGracefully(server: http.Server, unfinished: Set<http.ServerResponse>, sockets: Set<Socket>, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const deadline = setTimeout(() => {
      for (const socket of sockets) socket.destroy();
    }, graceMs);
    NetServer.prototype.close.call(server, () => {
      clearTimeout(deadline);
      resolve();
    });
    const answering = new Set<Socket>();
    for (const res of unfinished) {
      const socket = res.socket;
      if (socket === null) continue;
      answering.add(socket);
      res.once("close", () => socket.end());
    }
    for (const socket of sockets) if (!answering.has(socket)) socket.end();
  });
}
