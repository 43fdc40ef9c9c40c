import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { bodyRefusalResponse, readBoundedBody } from "../../../../server/http/body";
import { appRouter, createTrpcContext } from "../../../../server/trpc";

export const dynamic = "force-dynamic";

/** The browser's calls are small JSON (batched inputs); tRPC itself would read any body whole. */
const MAX_TRPC_BODY_BYTES = 1024 * 1024;

async function handler(request: Request): Promise<Response> {
  let req = request;
  if (request.method !== "GET" && request.method !== "HEAD") {
    const body = await readBoundedBody(request, MAX_TRPC_BODY_BYTES);
    if (!body.ok) return bodyRefusalResponse(body);
    req = new Request(request.url, { method: request.method, headers: request.headers, body: body.value, signal: request.signal });
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: () => createTrpcContext({ headers: req.headers }),
  });
}

export { handler as GET, handler as POST };
