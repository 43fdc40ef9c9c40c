/**
 * Pre-approved grants for the browser admin (owners and approvers, as
 * `leasehold grant`): list, create with the whole scope the CLI takes (tool,
 * host, pattern, max risk ≤ high, uses, expiry, exact env entries, stdin
 * sha256, cwd), revoke. Validation and sealing are server/policy/grants'.
 *
 * Creating a grant widens what agents may do without a person, so it needs a
 * recent password re-authentication, and at or above the passkey threshold
 * (LEASEHOLD_PASSKEY_APPROVAL_RISK) a passkey signature over the whole
 * scope: `passkeyOptions` fixes the exact expiry and returns the challenge
 * derived from the scope's digest; `create` is then called with that
 * `expiresAt` and the assertion.
 */
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { z } from "zod";
import { ROLES } from "../../admins";
import { LeaseholdError } from "../../errors";
import { listHostSummaries } from "../../hosts";
import { knownToolNames } from "../../mcp";
import { passkeySettingsOf } from "../../passkeys";
import { GRANTABLE_LEVELS, createGrant, grantNeedsPasskey, grantPasskeyOptions, listGrants, revokeGrant, type CreateGrantInput, type GrantRow } from "../../policy/grants";
import { DURATION_EXAMPLES, parseDurationMs } from "../../time/duration";
import { createRouter, roleProcedure, type TrpcContext } from "../init";
import { channel } from "./channel";
import { assertionSchema } from "./passkeys";

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
    passkeySigned: g.assertion !== null,
  };
}

const envEntry = z.strictObject({ name: z.string().min(1).max(128), value: z.string().max(4096) });

/** A grant's scope as the form sends it: the expiry as a duration (`expires`) or, once signed, the exact instant (`expiresAt`). */
const scopeFields = {
  tool: z.string().max(64),
  host: z.string().max(63),
  maxRisk: z.string().max(16),
  uses: z.number().int(),
  expires: z.string().max(16).optional(),
  expiresAt: z.iso.datetime().optional(),
  pattern: z.string().max(1000).nullable(),
  env: z.array(envEntry).max(64),
  stdinSha256: z.string().max(64).nullable(),
  cwd: z.string().max(1024).nullable(),
};
type ScopeFields = z.output<z.ZodObject<typeof scopeFields>>;

function createInput(input: ScopeFields): CreateGrantInput {
  let expiresAt: Date;
  if (input.expiresAt !== undefined) {
    if (input.expires !== undefined) throw new LeaseholdError("INVALID_ARGUMENT", "give the expiry as a duration or as an instant, not both", { tier: "hub" });
    expiresAt = new Date(input.expiresAt);
  } else {
    const ms = input.expires === undefined ? undefined : parseDurationMs(input.expires);
    if (ms === undefined) throw new LeaseholdError("INVALID_ARGUMENT", `expiry ${JSON.stringify(input.expires ?? "")} is not a duration (e.g. ${DURATION_EXAMPLES})`, { tier: "hub" });
    expiresAt = new Date(Date.now() + ms);
  }
  const env: Record<string, string> = {};
  for (const { name, value } of input.env) {
    if (Object.hasOwn(env, name)) throw new LeaseholdError("INVALID_ARGUMENT", `environment name ${name} is given twice`, { tier: "hub" });
    Object.defineProperty(env, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return { tool: input.tool, host: input.host, maxRisk: input.maxRisk, uses: input.uses, expiresAt, pattern: input.pattern, env, stdinSha256: input.stdinSha256, cwd: input.cwd };
}

function settings(ctx: TrpcContext) {
  return passkeySettingsOf(ctx.runtime.config);
}

export const grantsRouter = createRouter({
  list: roleProcedure(ROLES.deciders).query(({ ctx }) =>
    channel(async () => {
      const db = ctx.runtime.database.handle.db;
      const [grants, hosts] = await Promise.all([listGrants(db), listHostSummaries(db)]);
      // Which ceilings the form must have signed by a passkey.
      const passkeyLevels = GRANTABLE_LEVELS.filter((level) => grantNeedsPasskey(level, settings(ctx)));
      return { grants: grants.map(shown), tools: knownToolNames(), hosts: hosts.map((h) => h.name), levels: GRANTABLE_LEVELS, passkeyLevels };
    }),
  ),
  /**
   * The passkey ceremony for exactly this scope: the exact expiry is decided
   * here, and the challenge is sha256("leasehold.grant/1\n" + sha256(JCS(scope)) + "\n" + nonce).
   */
  passkeyOptions: roleProcedure(ROLES.deciders, { reauth: true })
    .input(z.strictObject(scopeFields))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const made = await grantPasskeyOptions(ctx.runtime.database.handle.db, { id: ctx.session.adminId }, createInput(input), settings(ctx), ctx.headers.get("origin"));
        return { options: made.options, scopeDigest: made.scopeDigest, expiresAt: made.scope.expires_at };
      }),
    ),
  create: roleProcedure(ROLES.deciders, { reauth: true })
    .input(z.strictObject({ ...scopeFields, assertion: assertionSchema.optional() }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const { assertion, ...scope } = input;
        const grant = await createGrant(ctx.runtime.database.handle.db, { id: ctx.session.adminId }, createInput(scope), {
          settings: settings(ctx),
          assertion: assertion === undefined ? null : (assertion as AuthenticationResponseJSON),
        });
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
