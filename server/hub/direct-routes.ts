import type { IncomingMessage, ServerResponse } from "node:http";
import { serveEnrol, serveHealthReport } from "../hosts/http";
import { serveAck, serveArtifact, serveHeartbeat, serveNextJob, serveOutput, serveResult, serveStopWatch } from "../jobs/http";
import { sendWebResponse, toWebRequest } from "../http/node-bridge";
import { serveHealth } from "../health/serve-health";
import { serveReady } from "../health/ready";
import { serveMcp } from "../mcp";
import { getHubRuntime, type HubRuntime } from "./runtime";

/**
 * The machine-to-machine routes the hub's own HTTP server answers without
 * Next.js: the guest channel (`/api/agent/**`), MCP (`/api/mcp`) and the
 * health probe (`/api/health`, which monitors poll and the MCP bench uses as
 * its baseline: it must pass the same way MCP does to measure MCP alone).
 *
 * Why: each of these is already a web-standard function in `server/`; the
 * route files in `app/api/` only hand the request over. Next.js's request
 * handling around them (routing, its async contexts and tracing, response
 * compression) cost more hub CPU per request than many of the routes
 * themselves, and an MCP call crosses three or four of them (the call, the
 * guest's claim, its output and its result). Measured in docs/benchmarks.md
 * ("Direct routes").
 *
 * Nothing is skipped that guards them: `bin/next-web.ts` sets the security
 * headers, checks Host and sets the peer header before dispatching here, and
 * every route authenticates and bounds its own body as before. The route
 * files stay, for the app run under bare Next; `direct-routes.test.ts` keeps
 * the two lists equal. Anything that does not match exactly (another method,
 * a trailing slash, an id that is not one path segment) goes to Next.js,
 * which answers it as it always did.
 */

type Handler = (runtime: HubRuntime, request: Request, id: string) => Promise<Response>;

interface DirectRoute {
  method: string;
  /** The path, with `[id]` for one segment. */
  path: string;
  handler: Handler;
}

const MCP_METHODS = ["GET", "POST", "DELETE", "OPTIONS", "PUT", "PATCH"] as const;

export const DIRECT_ROUTES: readonly DirectRoute[] = [
  { method: "POST", path: "/api/agent/enrol", handler: (runtime, request) => serveEnrol(runtime, request) },
  { method: "POST", path: "/api/agent/health", handler: (runtime, request) => serveHealthReport(runtime, request) },
  { method: "GET", path: "/api/agent/jobs", handler: (runtime, request) => serveNextJob(runtime, request) },
  { method: "POST", path: "/api/agent/jobs/[id]/ack", handler: serveAck },
  { method: "GET", path: "/api/agent/jobs/[id]/artifact", handler: serveArtifact },
  { method: "POST", path: "/api/agent/jobs/[id]/heartbeat", handler: serveHeartbeat },
  { method: "POST", path: "/api/agent/jobs/[id]/output", handler: serveOutput },
  { method: "POST", path: "/api/agent/jobs/[id]/result", handler: serveResult },
  { method: "GET", path: "/api/agent/jobs/[id]/stop", handler: serveStopWatch },
  { method: "GET", path: "/api/health", handler: (runtime, request) => serveHealth(runtime, request) },
  { method: "GET", path: "/api/ready", handler: (runtime) => serveReady(runtime) },
  ...MCP_METHODS.map((method) => ({ method, path: "/api/mcp", handler: ((runtime, request) => serveMcp(request, runtime)) satisfies Handler })),
];

const ID_SEGMENT = /^[^/]+$/;

/** The route for this method and path (query excluded), with its `[id]` decoded; undefined when none matches exactly. */
export function matchDirectRoute(method: string, pathname: string): { route: DirectRoute; id: string } | undefined {
  const parts = pathname.split("/");
  for (const route of DIRECT_ROUTES) {
    if (route.method !== method) continue;
    const pattern = route.path.split("/");
    if (pattern.length !== parts.length) continue;
    let id = "";
    let matched = true;
    for (let i = 0; i < pattern.length && matched; i++) {
      const want = pattern[i]!;
      const got = parts[i]!;
      if (want === "[id]") {
        if (!ID_SEGMENT.test(got)) matched = false;
        else {
          try {
            id = decodeURIComponent(got);
          } catch {
            matched = false;
          }
        }
      } else if (want !== got) matched = false;
    }
    if (matched) return { route, id };
  }
  return undefined;
}

/**
 * Answers `req` if it is a direct route: the returned promise settles when
 * the answer is sent. Undefined leaves `req` untouched for Next.js. A route
 * that throws is answered by the server's own handler (`listen.ts`: logged,
 * 500 `INTERNAL`), as any request that fails.
 */
export function serveDirectRoute(req: IncomingMessage, res: ServerResponse): Promise<void> | undefined {
  const target = req.url ?? "/";
  const query = target.indexOf("?");
  const match = matchDirectRoute(req.method ?? "GET", query === -1 ? target : target.slice(0, query));
  if (match === undefined) return undefined;
  const request = toWebRequest(req, res);
  return (async () => {
    const response = await match.route.handler(await getHubRuntime(), request, match.id);
    await sendWebResponse(res, response);
  })();
}
