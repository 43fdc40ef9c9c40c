/**
 * The browser console channel: the same pipeline as MCP (`ActionPipeline`
 * from server/actions), reached with an admin session instead of a bearer
 * token. Running operations is the owner's; grants are owners' and
 * approvers'. Deciding held actions is in ./approvals.ts (`approvals.*`). Errors carry the same LeaseholdError payload (`data.leasehold`)
 * as every channel.
 */
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { z } from "zod";
import { actionPipelineFor } from "../../actions";
import { ROLES, type AdminSession } from "../../admins";
import { passkeySettingsOf } from "../../passkeys/relying-party";
import { createGrant, listGrants, revokeGrant } from "../../policy/grants";
import { createRouter, roleProcedure } from "../init";
import { channel } from "./channel";
import { assertionSchema } from "./passkeys";

const MAX_CONSOLE_WAIT_MS = 60_000;
const waitMs = z.number().int().min(0).max(MAX_CONSOLE_WAIT_MS).default(25_000);

function consoleCaller(session: AdminSession) {
  return { kind: "admin" as const, adminId: session.adminId, username: session.username, sessionId: session.sessionId };
}

export const consoleRouter = createRouter({
  // Re-authenticated: running as the owner is the widest power the browser has.
  submit: roleProcedure(ROLES.owner, { reauth: true })
    .input(z.object({ operation: z.string().max(200), arguments: z.unknown(), waitMs }))
    .mutation(({ ctx, input }) =>
      channel(() =>
        actionPipelineFor(ctx.runtime).submit(
          consoleCaller(ctx.session),
          { operation: input.operation, arguments: input.arguments, channel: "console" },
          { waitMs: input.waitMs },
        ),
      ),
    ),
  resume: roleProcedure(ROLES.owner)
    .input(z.object({ actionId: z.string().max(64), waitMs }))
    .mutation(({ ctx, input }) =>
      channel(() =>
        actionPipelineFor(ctx.runtime).resume(consoleCaller(ctx.session), input.actionId, { waitMs: input.waitMs }),
      ),
    ),
  grants: createRouter({
    list: roleProcedure(ROLES.deciders).query(({ ctx }) => channel(() => listGrants(ctx.runtime.database.handle.db))),
    create: roleProcedure(ROLES.deciders, { reauth: true })
      .input(
        z.object({
          tool: z.string().max(64),
          host: z.string().max(63),
          maxRisk: z.string().max(16),
          uses: z.number().int(),
          expiresAt: z.iso.datetime(),
          pattern: z.string().max(1000).nullable().optional(),
          // The exact env / stdin (sha256 hex) / cwd the grant covers (server/policy/grants validates them).
          env: z.record(z.string().max(128), z.string().max(4096)).nullable().optional(),
          stdinSha256: z.string().max(64).nullable().optional(),
          cwd: z.string().max(1024).nullable().optional(),
          // At or above the passkey threshold: an assertion from grants.passkeyOptions over this exact scope (same expiresAt).
          assertion: assertionSchema.optional(),
        }),
      )
      .mutation(({ ctx, input }) =>
        channel(() => {
          const { assertion, ...scope } = input;
          return createGrant(
            ctx.runtime.database.handle.db,
            { id: ctx.session.adminId },
            { ...scope, expiresAt: new Date(scope.expiresAt), pattern: scope.pattern ?? null, env: scope.env ?? null, stdinSha256: scope.stdinSha256 ?? null, cwd: scope.cwd ?? null },
            { settings: passkeySettingsOf(ctx.runtime.config), assertion: assertion === undefined ? null : (assertion as AuthenticationResponseJSON) },
          );
        }),
      ),
    revoke: roleProcedure(ROLES.deciders).input(z.object({ grantId: z.string().max(64) })).mutation(({ ctx, input }) => channel(() => revokeGrant(ctx.runtime.database.handle.db, { id: ctx.session.adminId }, input.grantId))),
  }),
});
