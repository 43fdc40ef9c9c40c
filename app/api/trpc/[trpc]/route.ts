import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { bodyRefusalResponse, checkSameOrigin, readBoundedBody } from "~/server/http";
import { getHubRuntime } from "~/server/hub/runtime";
import { appRouter, createTrpcContext } from "~/server/trpc";

export const dynamic = "force-dynamic";

/** The browser's calls are small JSON (batched inputs); tRPC itself would read any body whole. */
const MAX_TRPC_BODY_BYTES = 1024 * 1024;

async function handler(request: Request): Promise<Response> {
  // CSRF: a mutation must come from the admin page's own origin (server/http/same-origin.ts).
  const origin = checkSameOrigin(request, (await getHubRuntime()).config.publicUrl);
  if (!origin.ok) {
    return Response.json({ code: "FORBIDDEN", message: origin.message, retryable: false }, { status: 403, headers: { "cache-control": "no-store" } });
  }
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
    createContext: ({ resHeaders }) => createTrpcContext({ headers: req.headers, resHeaders }),
    responseMeta: () => ({ headers: { "cache-control": "no-store" } }),
  });
}

export { handler as GET, handler as POST };
