/**
 * The conformance suite's server scenarios connect with a bare
 * `StreamableHTTPClientTransport(new URL(url))`: no way to send a header, so
 * against /api/mcp every request would be a 401 and the run would measure
 * nothing. This loopback proxy plays the part of a client configured with
 * `--header "Authorization: Bearer …"` (what `leasehold mcp-config` prints):
 * it adds that header when the request has none and otherwise forwards
 * method, path, headers and body unchanged, streaming the response (SSE)
 * back. The hub's checks are untouched — the proxy is a client, not a route.
 */
import http from "node:http";

export interface BearerProxy {
  url: string;
  requests: number;
  close(): Promise<void>;
}

export function startBearerProxy(options: { port: number; target: string; token: string }): Promise<BearerProxy> {
  const target = new URL(options.target);
  const state = { requests: 0 };
  const server = http.createServer((req, res) => {
    state.requests += 1;
    const headers = { ...req.headers };
    headers.authorization ??= `Bearer ${options.token}`;
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${options.port}`,
        get requests() {
          return state.requests;
        },
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      }),
    );
  });
}
