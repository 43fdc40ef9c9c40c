/**
 * The hub's OAuth authorization server in the browser admin, owner only:
 * the consent decision (after re-authentication, like minting a token),
 * clients (list, register by hand, remove — which revokes their grants) and
 * the dynamic-registration switch. Grants themselves are listed and revoked
 * with the other tokens (routers/tokens.ts).
 */
import { z } from "zod";
import { ROLES } from "../../admins";
import { knownToolNames } from "../../mcp";
import { decideAuthorization, getOAuthSettings, listOAuthClients, oauthContext, registerClientByAdmin, removeOAuthClient, setOAuthSettings } from "../../oauth";
import { createRouter, roleProcedure } from "../init";
import { channel } from "./channel";

const scopeList = z.array(z.string().min(1).max(128)).max(64).nullable();

export const oauthRouter = createRouter({
  decide: roleProcedure(ROLES.owner, { reauth: true })
    .input(z.strictObject({ handle: z.string().min(16).max(128), approve: z.boolean(), readOnly: z.boolean(), tools: scopeList, hosts: scopeList, lifetimeS: z.number().int().positive() }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const { location } = await decideAuthorization(oauthContext(ctx.runtime, knownToolNames()), input, { adminId: ctx.session.adminId, username: ctx.session.username });
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
        const client = await registerClientByAdmin(ctx.runtime.database.handle.db, input, ctx.session.adminId);
        return { id: client.id, name: client.name };
      }),
    ),
  removeClient: roleProcedure(ROLES.owner)
    .input(z.strictObject({ id: z.string().min(1).max(2048) }))
    .mutation(({ ctx, input }) => channel(() => removeOAuthClient(ctx.runtime.database.handle.db, input.id, ctx.session.adminId))),
  setSettings: roleProcedure(ROLES.owner)
    .input(z.strictObject({ dynamicRegistration: z.boolean() }))
    .mutation(({ ctx, input }) => channel(() => setOAuthSettings(ctx.runtime.database.handle.db, input, ctx.session.adminId))),
});
