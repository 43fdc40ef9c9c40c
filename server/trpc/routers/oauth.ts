/**
 * The hub's OAuth authorization server in the browser admin, owner only:
 * the consent decision, clients (list, register by hand, remove — which
 * revokes their grants) and the dynamic-registration switch. Grants
 * themselves are listed and revoked with the other tokens (routers/tokens.ts).
 *
 * An approval carries its own proof: the owner's current password, in the
 * same call. A recent sign-in is not enough, because a session that someone
 * else holds (its cookie and binding secret) would then approve a client of
 * theirs without knowing the password. A denial needs no proof: it grants
 * nothing, and the client can simply ask again.
 */
import { z } from "zod";
import { checkAdminPassword, PASSWORD_MAX_LENGTH, ROLES } from "../../admins";
import { LeaseholdError } from "../../errors";
import { knownToolNames } from "../../mcp";
import { adminHostOf, decideAuthorization, getOAuthSettings, listOAuthClients, oauthContext, registerClientByAdmin, removeOAuthClient, setOAuthSettings } from "../../oauth";
import { createRouter, roleProcedure } from "../init";
import { channel } from "./channel";

const scopeList = z.array(z.string().min(1).max(128)).max(64).nullable();

export const oauthRouter = createRouter({
  decide: roleProcedure(ROLES.owner)
    .input(
      z.strictObject({
        handle: z.string().min(16).max(128),
        approve: z.boolean(),
        readOnly: z.boolean(),
        /** Grants the sandbox-first scope; only where the client asked for mcp:observe-any (narrowing only). */
        observeAny: z.boolean().optional(),
        tools: scopeList,
        hosts: scopeList,
        lifetimeS: z.number().int().positive(),
        /** Required to approve; ignored on a denial. */
        password: z.string().max(PASSWORD_MAX_LENGTH).optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const { password, ...decision } = input;
        if (decision.approve) {
          if (password === undefined || password === "") throw new LeaseholdError("FORBIDDEN", "enter your password to approve: an approval needs your password in the same step", { tier: "hub" });
          // Checked before anything is decided: a wrong password leaves the request pending.
          if (!(await checkAdminPassword(ctx.runtime.database.handle.db, ctx.session.adminId, password))) {
            throw new LeaseholdError("FORBIDDEN", "the password is wrong; nothing was approved", { tier: "hub", hint: "enter your current sign-in password" });
          }
        }
        const { location } = await decideAuthorization(oauthContext(ctx.runtime, knownToolNames()), decision, { adminId: ctx.session.adminId, username: ctx.session.username });
        return { location };
      }),
    ),
  clients: roleProcedure(ROLES.owner).query(({ ctx }) =>
    channel(async () => {
      const db = ctx.runtime.database.handle.db;
      const [clients, settings] = await Promise.all([listOAuthClients(db), getOAuthSettings(db)]);
      return {
        settings,
        clients: clients.map((c) => ({ ...c, createdAt: c.createdAt.toISOString(), lastUsedAt: c.lastUsedAt?.toISOString() ?? null })),
        metadataUrl: `${ctx.runtime.config.publicUrl}/.well-known/oauth-authorization-server`,
      };
    }),
  ),
  registerClient: roleProcedure(ROLES.owner, { reauth: true })
    .input(z.strictObject({ name: z.string().min(1).max(100), redirectUris: z.array(z.string().min(1).max(2048)).min(1).max(10) }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const client = await registerClientByAdmin(ctx.runtime.database.handle.db, input, ctx.session.adminId, adminHostOf(ctx.runtime.config));
        return { id: client.id, name: client.name };
      }),
    ),
  removeClient: roleProcedure(ROLES.owner, { reauth: true })
    .input(z.strictObject({ id: z.string().min(1).max(2048) }))
    .mutation(({ ctx, input }) => channel(() => removeOAuthClient(ctx.runtime.database.handle.db, input.id, ctx.session.adminId))),
  setSettings: roleProcedure(ROLES.owner, { reauth: true })
    .input(z.strictObject({ dynamicRegistration: z.boolean() }))
    .mutation(({ ctx, input }) => channel(() => setOAuthSettings(ctx.runtime.database.handle.db, input, ctx.session.adminId))),
});
