/** The audit explorer (readers): ledger entries, checkpoints with cosignatures, and a summary. The export itself is GET /api/audit/export. */
import { z } from "zod";
import { ROLES } from "../../admins";
import { auditSummary, listAuditCheckpoints, listAuditEntries } from "../../audit/explorer";
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
        actionId: z.string().min(1).max(128).optional(),
      }),
    )
    .query(({ ctx, input }) => channel(() => listAuditEntries(ctx.runtime.database.handle.db, input))),
  checkpoints: reader
    .input(z.strictObject({ before: position.optional(), limit: z.number().int().min(1).max(100).default(20) }))
    .query(({ ctx, input }) => channel(() => listAuditCheckpoints(ctx.runtime.database.handle.db, input))),
});
