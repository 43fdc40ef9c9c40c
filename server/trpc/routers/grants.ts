/**
 * Pre-approved grants for the browser admin (owners and approvers, as
 * `leasehold grant`): list, create with the whole scope the CLI takes (tool,
 * host, pattern, max risk ≤ high, uses, expiry, exact env entries, stdin
 * sha256, cwd), revoke. Validation and sealing are server/policy/grants'.
 */
import { z } from "zod";
import { ROLES } from "../../admins";
import { LeaseholdError } from "../../errors";
import { listHostSummaries } from "../../hosts";
import { knownToolNames } from "../../mcp";
import { GRANTABLE_LEVELS, createGrant, listGrants, revokeGrant, type GrantRow } from "../../policy/grants";
import { DURATION_EXAMPLES, parseDurationMs } from "../../time/duration";
import { createRouter, roleProcedure } from "../init";
import { channel } from "./channel";

function shown(g: GrantRow) {
  return {
    id: g.id,
    tool: g.tool,
    host: g.host,
    maxRisk: g.maxRisk,
    usesRemaining: g.usesRemaining,
    expiresAt: g.expiresAt.toISOString(),
    pattern: g.argumentPattern,
    env: Object.entries((g.env ?? {}) as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    stdinSha256: g.stdinSha256,
    cwd: g.cwd,
    createdAt: g.createdAt.toISOString(),
  };
}

const envEntry = z.strictObject({ name: z.string().min(1).max(128), value: z.string().max(4096) });

export const grantsRouter = createRouter({
  list: roleProcedure(ROLES.deciders).query(({ ctx }) =>
    channel(async () => {
      const db = ctx.runtime.database.handle.db;
      const [grants, hosts] = await Promise.all([listGrants(db), listHostSummaries(db)]);
      return { grants: grants.map(shown), tools: knownToolNames(), hosts: hosts.map((h) => h.name), levels: GRANTABLE_LEVELS };
    }),
  ),
  create: roleProcedure(ROLES.deciders)
    .input(
      z.strictObject({
        tool: z.string().max(64),
        host: z.string().max(63),
        maxRisk: z.string().max(16),
        uses: z.number().int(),
        expires: z.string().max(16),
        pattern: z.string().max(1000).nullable(),
        env: z.array(envEntry).max(64),
        stdinSha256: z.string().max(64).nullable(),
        cwd: z.string().max(1024).nullable(),
      }),
    )
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const ms = parseDurationMs(input.expires);
        if (ms === undefined) throw new LeaseholdError("INVALID_ARGUMENT", `expiry ${JSON.stringify(input.expires)} is not a duration (e.g. ${DURATION_EXAMPLES})`, { tier: "hub" });
        const env: Record<string, string> = {};
        for (const { name, value } of input.env) {
          if (Object.hasOwn(env, name)) throw new LeaseholdError("INVALID_ARGUMENT", `environment name ${name} is given twice`, { tier: "hub" });
          Object.defineProperty(env, name, { value, enumerable: true, writable: true, configurable: true });
        }
        const grant = await createGrant(ctx.runtime.database.handle.db, { id: ctx.session.adminId }, { ...input, expiresAt: new Date(Date.now() + ms), env });
        return shown(grant);
      }),
    ),
  revoke: roleProcedure(ROLES.deciders)
    .input(z.strictObject({ id: z.string().max(64) }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const grant = await revokeGrant(ctx.runtime.database.handle.db, { id: ctx.session.adminId }, input.id);
        return { id: grant.id };
      }),
    ),
});
