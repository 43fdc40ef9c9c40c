import { z } from "zod";
import { latestCheckpoint, proveConsistency, proveInclusion } from "../../ledger/prove";
import { ROLES } from "../../admins";
import { createRouter, roleProcedure } from "../init";

const reader = roleProcedure(ROLES.readers);

const size = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** The audit log for the browser: checkpoint and proofs, same functions as HTTP and CLI. */
export const ledgerRouter = createRouter({
  checkpoint: reader.query(({ ctx }) => latestCheckpoint(ctx.runtime.database.handle.db)),
  inclusionProof: reader
    .input(z.strictObject({ leafIndex: size, treeSize: size.optional() }))
    .query(({ ctx, input }) => proveInclusion(ctx.runtime.database.handle.db, input.leafIndex, input.treeSize)),
  consistencyProof: reader
    .input(z.strictObject({ fromSize: size, toSize: size.optional() }))
    .query(({ ctx, input }) => proveConsistency(ctx.runtime.database.handle.db, input.fromSize, input.toSize)),
});
