/** The audit explorer (readers): ledger entries, checkpoints with cosignatures, and a summary. The export itself is GET /api/audit/export. */
import { z } from "zod";
import { ROLES } from "../../admins";
import { auditEntry, auditSummary, listAuditCheckpoints, listAuditEntries } from "../../audit/explorer";
import { createRouter, roleProcedure } from "../init";
import { channel } from "./channel";

const reader = roleProcedure(ROLES.readers);
const position = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const auditRouter = createRouter({
  summary: reader.query(({ ctx }) => channel(() => auditSummary(ctx.runtime.database.handle.db, ctx.runtime.ledger.key))),
  entries: reader
    .input(
      z.strictObject({
        before: position.optional(),
        limit: z.number().int().min(1).max(200).default(50),
        type: z.string().min(1).max(64).optional(),
        actionId: z.string().min(4, "give at least 4 characters of the action id").max(128).optional(),
        actor: z.string().min(1).max(128).optional(),
        from: z.string().min(1).max(64).optional(),
        to: z.string().min(1).max(64).optional(),
        text: z.string().min(2, "search for at least 2 characters").max(256).optional(),
      }),
    )
    .query(({ ctx, input }) => channel(() => listAuditEntries(ctx.runtime.database.handle.db, input))),
  entry: reader.input(z.strictObject({ index: position })).query(({ ctx, input }) => channel(() => auditEntry(ctx.runtime.database.handle.db, input.index))),
  checkpoints: reader
    .input(z.strictObject({ before: position.optional(), limit: z.number().int().min(1).max(100).default(20) }))
    .query(({ ctx, input }) => channel(() => listAuditCheckpoints(ctx.runtime.database.handle.db, input))),
});
