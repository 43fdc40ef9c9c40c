/**
 * tRPC for the browser channel, read top to bottom: context, initialisation,
 * procedures. Routers live in ./routers, one per domain.
 */
import { initTRPC, TRPCError } from "@trpc/server";
import { getHubRuntime, type HubRuntime } from "../hub/runtime";
import { isLeaseholdError, toErrorPayload } from "../errors";

export interface TrpcContext {
  runtime: HubRuntime;
  headers: Headers;
}

export async function createTrpcContext(opts: { headers: Headers }): Promise<TrpcContext> {
  return { runtime: await getHubRuntime(), headers: opts.headers };
}

const t = initTRPC.context<TrpcContext>().create({
  errorFormatter({ shape, error }) {
    // Same {code, message, retryable, hint} as every other channel; anything
    // that is not a LeaseholdError leaks nothing beyond INTERNAL.
    const cause = error.cause;
    const leasehold = isLeaseholdError(cause) ? toErrorPayload(cause) : undefined;
    return {
      ...shape,
      message: leasehold?.message ?? (error.code === "INTERNAL_SERVER_ERROR" ? "internal error" : shape.message),
      data: { ...shape.data, stack: undefined, leasehold: leasehold ?? null },
    };
  },
});

export const createRouter = t.router;
export const publicProcedure = t.procedure;
export { TRPCError };
