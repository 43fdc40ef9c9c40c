/**
 * Agent (MCP) tokens for the browser admin, owner only: list, create (after
 * re-authentication; the secret is returned once, with the same client
 * settings `leasehold mcp-config` prints), revoke (server/tokens revocation:
 * it ends what the token started).
 */
import { z } from "zod";
import { ROLES, listAdmins } from "../../admins";
import { LeaseholdError } from "../../errors";
import { clientSettings, knownToolNames } from "../../mcp";
import { listedStatus, listOAuthClients, unredeemedGrants } from "../../oauth";
import { createToken, listTokens, parseExpiry, revokeToken, type AgentToken } from "../../tokens";
import { createRouter, roleProcedure } from "../init";
import { channel } from "./channel";

const scopeList = z.array(z.string().min(1).max(128)).max(64).nullable();

function shown(token: AgentToken, now: Date, names: ReadonlyMap<string, string>, clients: ReadonlyMap<string, string> = new Map(), unredeemed: ReadonlyMap<string, Date> = new Map()) {
  // An approved OAuth consent whose code was never redeemed is `pending`, expiring with the code (server/oauth/unredeemed.ts).
  const listed = listedStatus(token, unredeemed, now);
  return {
    id: token.id,
    name: token.name,
    // `oauth`: a grant an admin consented to for an OAuth client (server/oauth); scoped and revoked like the others.
    kind: token.kind,
    client: token.oauthClientId === null ? null : { id: token.oauthClientId, name: clients.get(token.oauthClientId) ?? null },
    status: listed.status,
    readOnly: token.readOnly,
    observe: token.observe,
    tools: token.tools,
    hosts: token.hosts,
    // Browser-made tokens record the admin's id; CLI-made ones record "cli".
    createdBy: names.get(token.createdBy) ?? token.createdBy,
    createdAt: token.createdAt.toISOString(),
    expiresAt: listed.expiresAt?.toISOString() ?? null,
    revokedAt: token.revokedAt?.toISOString() ?? null,
  };
}

export const tokensRouter = createRouter({
  list: roleProcedure(ROLES.owner).query(({ ctx }) =>
    channel(async () => {
      const db = ctx.runtime.database.handle.db;
      const [tokens, admins, clients, unredeemed] = await Promise.all([listTokens(db), listAdmins(db), listOAuthClients(db), unredeemedGrants(db)]);
      const names = new Map(admins.map((a) => [a.id, a.username]));
      const clientNames = new Map(clients.map((c) => [c.id, c.name]));
      const now = new Date();
      return { tokens: tokens.map((t) => shown(t, now, names, clientNames, unredeemed)), knownTools: knownToolNames() };
    }),
  ),
  create: roleProcedure(ROLES.owner, { reauth: true })
    .input(z.strictObject({ name: z.string().min(1).max(64), expires: z.string().min(1).max(16), readOnly: z.boolean(), observe: z.enum(["judged", "any"]).optional(), tools: scopeList, hosts: scopeList }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const now = new Date();
        const expiry = parseExpiry(input.expires, now);
        if (!expiry.ok) throw new LeaseholdError("INVALID_ARGUMENT", expiry.message.replace("--expires", "expiry"), { tier: "hub" });
        const { token, secret } = await createToken(
          ctx.runtime.database.handle.db,
          { name: input.name, readOnly: input.readOnly, observe: input.observe ?? "judged", tools: input.tools, hosts: input.hosts, expiresAt: expiry.expiresAt, createdBy: ctx.session.adminId },
          { knownTools: knownToolNames(), now },
        );
        return { token: shown(token, now, new Map([[ctx.session.adminId, ctx.session.username]])), secret, settings: clientSettings(ctx.runtime.config.publicUrl, secret) };
      }),
    ),
  revoke: roleProcedure(ROLES.owner)
    .input(z.strictObject({ id: z.string().max(64) }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const result = await revokeToken(ctx.runtime.database.handle.db, input.id, ctx.session.adminId);
        return { id: result.token.id, alreadyRevoked: result.alreadyRevoked, ended: result.ended };
      }),
    ),
});
