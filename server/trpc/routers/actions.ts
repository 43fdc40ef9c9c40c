/**
 * The actions list and detail for the browser (readers: owners, approvers,
 * auditors), and the stop button (deciders: owners, approvers), which
 * cancels through the hub's one path (server/actions/cancel.ts, by `admin`).
 * Queries live in server/action-records; this file only declares roles and
 * inputs.
 */
import { z } from "zod";
import { ROLES } from "../../admins";
import { actionDetail, listActions, MAX_PAGE } from "../../action-records";
import { cancelAction } from "../../actions/cancel";
import { createRouter, roleProcedure } from "../init";
import { channel } from "./channel";

export const actionsRouter = createRouter({
  list: roleProcedure(ROLES.readers)
    .input(z.strictObject({ query: z.string().max(200).optional(), offset: z.number().int().min(0).max(1_000_000).default(0), limit: z.number().int().min(1).max(MAX_PAGE).default(25) }))
    .query(({ ctx, input }) => channel(() => listActions(ctx.runtime.database.handle.db, input))),
  get: roleProcedure(ROLES.readers)
    .input(z.strictObject({ id: z.string().max(64) }))
    .query(({ ctx, input }) => channel(() => actionDetail(ctx.runtime.database.handle.db, input.id))),
  stop: roleProcedure(ROLES.deciders)
    .input(z.strictObject({ id: z.string().max(64), reason: z.string().max(500).optional() }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const done = await cancelAction(ctx.runtime.database.handle.db, {
          actionId: input.id,
          by: { kind: "admin", id: ctx.session.adminId },
          reason: input.reason ?? `stopped in the browser by ${ctx.session.username}`,
        });
        return { state: done.state, stage: done.stage, exit: done.completion?.envelope.exit ?? null };
      }),
    ),
});
