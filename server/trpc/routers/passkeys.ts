/**
 * Passkeys (server/passkeys): the signed-in admin's own passkeys
 * (registration, list, removal), signing in with one, and approving a held
 * action with a passkey signature bound to its approval id and action hash.
 * Every ceremony step that creates a challenge is a mutation (POST, Origin
 * checked): no state changes on GET. The page's Origin picks the
 * relying-party id.
 *
 * Adding or removing a passkey changes how the account signs in and what it
 * may sign, so both need a recent password re-authentication; adding one
 * beside an existing passkey also needs that passkey's assertion in the same
 * ceremony (`registrationOptions().confirmWith` → `register({confirmation})`).
 * Every addition is announced on the hub webhook (`passkey.added`).
 */
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { z } from "zod";
import { actionPipelineFor } from "../../actions";
import { ROLES, sessionCookie } from "../../admins";
import { approve } from "../../approvals";
import { hubWebhookFor } from "../../approvals/webhook";
import {
  PASSKEY_NAME_MAX,
  approvalOptions,
  listPasskeys,
  passkeyAvailability,
  passkeySettingsOf,
  registerPasskey,
  registrationOptions,
  removePasskey,
  signInOptions,
  signInWithPasskey,
} from "../../passkeys";
import { createRouter, publicProcedure, roleProcedure, servedSecurely, type TrpcContext } from "../init";
import { channel } from "./channel";

const b64url = z.string().max(16_384).regex(/^[A-Za-z0-9_-]*$/, "must be base64url");

/** What @simplewebauthn/browser's startAuthentication() returns. */
export const assertionSchema = z.object({
  id: b64url,
  rawId: b64url,
  type: z.literal("public-key"),
  response: z.object({ clientDataJSON: b64url, authenticatorData: b64url, signature: b64url, userHandle: b64url.optional() }),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
});

/** What startRegistration() returns. */
const registrationSchema = z.object({
  id: b64url,
  rawId: b64url,
  type: z.literal("public-key"),
  response: z.object({
    clientDataJSON: b64url,
    attestationObject: b64url,
    authenticatorData: b64url.optional(),
    transports: z.array(z.string().max(32)).max(10).optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: b64url.optional(),
  }),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
});

function settings(ctx: TrpcContext) {
  return passkeySettingsOf(ctx.runtime.config);
}

function origin(ctx: TrpcContext): string | null {
  return ctx.headers.get("origin");
}

const uuid = z.string().max(64);

export const passkeysRouter = createRouter({
  /** Whether passkeys work on this hub (a bare-IP public URL turns them off) and the signed-in admin's passkeys. */
  list: roleProcedure(ROLES.anyone).query(({ ctx }) =>
    channel(async () => ({ ...passkeyAvailability(settings(ctx)), approvalRisk: settings(ctx).passkeyApprovalRisk ?? "high", passkeys: await listPasskeys(ctx.runtime.database.handle.db, ctx.session.adminId) })),
  ),
  registrationOptions: roleProcedure(ROLES.anyone, { reauth: true }).mutation(({ ctx }) =>
    channel(() => registrationOptions(ctx.runtime.database.handle.db, { id: ctx.session.adminId, username: ctx.session.username }, settings(ctx), origin(ctx))),
  ),
  register: roleProcedure(ROLES.anyone, { reauth: true })
    .input(z.object({ name: z.string().max(PASSKEY_NAME_MAX), response: registrationSchema, confirmation: assertionSchema.optional() }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const added = await registerPasskey(
          ctx.runtime.database.handle.db,
          { id: ctx.session.adminId },
          { name: input.name, response: input.response as RegistrationResponseJSON, confirmation: (input.confirmation ?? null) as AuthenticationResponseJSON | null },
          settings(ctx),
          origin(ctx),
        );
        // In the background: a receiver that is down never fails the registration (already committed).
        void hubWebhookFor(ctx.runtime.config)?.passkeyAdded({ username: ctx.session.username, passkeyName: added.name, credentialId: added.credentialId, addedAt: new Date(added.createdAt) });
        return added;
      }),
    ),
  remove: roleProcedure(ROLES.anyone, { reauth: true })
    .input(z.object({ id: uuid }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        await removePasskey(ctx.runtime.database.handle.db, { id: ctx.session.adminId }, input.id);
        return { removed: true };
      }),
    ),
  signInOptions: publicProcedure.mutation(({ ctx }) => channel(() => signInOptions(ctx.runtime.database.handle.db, settings(ctx), origin(ctx)))),
  signIn: publicProcedure.input(z.object({ response: assertionSchema })).mutation(({ ctx, input }) =>
    channel(async () => {
      const result = await signInWithPasskey(ctx.runtime.database.handle.db, input.response as AuthenticationResponseJSON, settings(ctx), origin(ctx));
      ctx.resHeaders?.append("Set-Cookie", sessionCookie(result.token, result.expiresAt, servedSecurely(ctx.runtime)));
      return { username: result.admin.username, role: result.admin.role, mustChangePassword: result.admin.mustChangePassword, binding: result.binding };
    }),
  ),
  /** The WebAuthn options whose challenge is sha256("leasehold.approval/1\n" + approval id + "\n" + action hash + "\n" + nonce). */
  approvalOptions: roleProcedure(ROLES.deciders)
    .input(z.object({ approvalId: uuid }))
    .mutation(({ ctx, input }) => channel(() => approvalOptions(ctx.runtime.database.handle.db, { id: ctx.session.adminId }, input.approvalId, settings(ctx), origin(ctx)))),
  approveWithPasskey: roleProcedure(ROLES.deciders)
    .input(z.object({ approvalId: uuid, actionHash: z.string().max(80), reason: z.string().max(1000).optional(), assertion: assertionSchema }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const row = await approve(ctx.runtime.database.handle.db, input.approvalId, { id: ctx.session.adminId, username: ctx.session.username }, input.reason ?? null, {
          expectedActionHash: input.actionHash,
          fourEyes: actionPipelineFor(ctx.runtime).deps.settings?.fourEyes ?? false,
          fourEyesCritical: ctx.runtime.config.fourEyesCritical === true,
          passkey: { settings: settings(ctx), assertion: input.assertion as AuthenticationResponseJSON },
        });
        return { id: row.id, state: row.state, passkeyVerified: row.assertion !== null };
      }),
    ),
});
