/**
 * The browser console channel: the same pipeline as MCP (`ActionPipeline`
 * from server/actions), reached with an admin session instead of a bearer
 * token. Procedures only; the pages come with the admin UI issue. Errors
 * carry the same LeaseholdError payload (`data.leasehold`) as every channel.
 */
import { z } from "zod";
import { actionPipelineFor } from "../../actions";
import { authenticateAdminSession } from "../../admins";
import { approve, deny, listApprovals } from "../../approvals";
import { ERROR_CODES, LeaseholdError, isLeaseholdError } from "../../errors";
import { createGrant, listGrants, revokeGrant } from "../../policy/grants";
import { TRPCError, createRouter, publicProcedure } from "../init";

type TrpcCode = ConstructorParameters<typeof TRPCError>[0]["code"];
const BY_HTTP: Readonly<Record<number, TrpcCode>> = {
  202: "PRECONDITION_FAILED",
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  410: "PRECONDITION_FAILED",
  422: "UNPROCESSABLE_CONTENT",
  429: "TOO_MANY_REQUESTS",
  503: "SERVICE_UNAVAILABLE",
  504: "GATEWAY_TIMEOUT",
};

/** Runs `fn`, turning a LeaseholdError into a TRPCError whose cause keeps the stable code. */
async function channel<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (isLeaseholdError(error)) throw new TRPCError({ code: BY_HTTP[ERROR_CODES[error.code].http] ?? "INTERNAL_SERVER_ERROR", message: error.message, cause: error });
    throw error;
  }
}

/** Admin-session procedures: the context gains `admin`, narrowing the type. */
const adminProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const admin = await authenticateAdminSession(ctx.runtime.database.handle.db, ctx.headers);
  if (admin === undefined) {
    throw new TRPCError({ code: "UNAUTHORIZED", message: "sign in as an admin", cause: new LeaseholdError("UNAUTHENTICATED", "sign in as an admin", { tier: "hub" }) });
  }
  return next({ ctx: { ...ctx, admin } });
});

const MAX_CONSOLE_WAIT_MS = 60_000;
const waitMs = z.number().int().min(0).max(MAX_CONSOLE_WAIT_MS).default(25_000);

export const consoleRouter = createRouter({
  submit: adminProcedure
    .input(z.object({ operation: z.string().max(200), arguments: z.unknown(), waitMs }))
    .mutation(({ ctx, input }) =>
      channel(() =>
        actionPipelineFor(ctx.runtime).submit(
          { kind: "admin", adminId: ctx.admin.adminId, username: ctx.admin.username, sessionId: ctx.admin.sessionId },
          { operation: input.operation, arguments: input.arguments, channel: "console" },
          { waitMs: input.waitMs },
        ),
      ),
    ),
  resume: adminProcedure
    .input(z.object({ actionId: z.string().max(64), waitMs }))
    .mutation(({ ctx, input }) =>
      channel(() =>
        actionPipelineFor(ctx.runtime).resume({ kind: "admin", adminId: ctx.admin.adminId, username: ctx.admin.username, sessionId: ctx.admin.sessionId }, input.actionId, { waitMs: input.waitMs }),
      ),
    ),
  approvals: createRouter({
    list: adminProcedure.query(({ ctx }) => channel(() => listApprovals(ctx.runtime.database.handle.db))),
    approve: adminProcedure
      .input(z.object({ approvalId: z.string().max(64), actionHash: z.string().max(80), reason: z.string().max(1000).optional() }))
      .mutation(({ ctx, input }) =>
        channel(async () => {
          const row = await approve(ctx.runtime.database.handle.db, input.approvalId, { id: ctx.admin.adminId, username: ctx.admin.username }, input.reason ?? null, {
            expectedActionHash: input.actionHash,
            fourEyes: actionPipelineFor(ctx.runtime).deps.settings?.fourEyes ?? false,
          });
          return { id: row.id, state: row.state };
        }),
      ),
    deny: adminProcedure
      .input(z.object({ approvalId: z.string().max(64), actionHash: z.string().max(80), reason: z.string().min(1).max(1000) }))
      .mutation(({ ctx, input }) =>
        channel(async () => {
          const row = await deny(ctx.runtime.database.handle.db, input.approvalId, { id: ctx.admin.adminId, username: ctx.admin.username }, input.reason, { expectedActionHash: input.actionHash });
          return { id: row.id, state: row.state };
        }),
      ),
  }),
  grants: createRouter({
    list: adminProcedure.query(({ ctx }) => channel(() => listGrants(ctx.runtime.database.handle.db))),
    create: adminProcedure
      .input(z.object({ tool: z.string().max(64), host: z.string().max(63), maxRisk: z.string().max(16), uses: z.number().int(), expiresAt: z.iso.datetime(), pattern: z.string().max(1000).nullable().optional() }))
      .mutation(({ ctx, input }) =>
        channel(() => createGrant(ctx.runtime.database.handle.db, { id: ctx.admin.adminId }, { ...input, expiresAt: new Date(input.expiresAt), pattern: input.pattern ?? null })),
      ),
    revoke: adminProcedure.input(z.object({ grantId: z.string().max(64) })).mutation(({ ctx, input }) => channel(() => revokeGrant(ctx.runtime.database.handle.db, { id: ctx.admin.adminId }, input.grantId))),
  }),
});
