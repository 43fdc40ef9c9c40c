/**
 * The approvals queue for the browser: deciders (owner, approver)
 * see each held action in full — the same builder as `leasehold approvals
 * list` (server/approvals/view.ts `buildApprovalView`), as structured data —
 * and approve or deny it, bound to the action hash they were shown. Batch
 * decisions bind each item to its own hash. "Approve and allow similar"
 * proposes the narrowest grant (server/approvals/propose.ts) and, once the
 * person confirms the (edited) proposal, approves and creates it.
 */
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { z } from "zod";
import { actionPipelineFor } from "../../actions";
import { ROLES, type AdminSession } from "../../admins";
import { APPROVAL_PAGE, allowSimilarPasskeyOptions, approve, approveAndGrant, deny, pageApprovals, proposeGrant, showApproval } from "../../approvals";
import { approvalViewOf, buildApprovalView, escapeForTerminal } from "../../approvals/view";
import { LeaseholdError, toErrorPayload } from "../../errors";
import type { HubRuntime } from "../../hub/runtime";
import { passkeySettingsOf } from "../../passkeys";
import { createRouter, roleProcedure, type TrpcContext } from "../init";
import { assertionSchema } from "./passkeys";
import { channel } from "./channel";

const id = z.string().max(64);
const actionHash = z.string().max(80);
const reason = z.string().trim().min(1, "a denial needs a reason").max(1000);
export const MAX_BATCH = 50;

function approver(session: AdminSession) {
  return { id: session.adminId, username: session.username };
}

function fourEyes(runtime: HubRuntime): boolean {
  return actionPipelineFor(runtime).deps.settings?.fourEyes ?? false;
}

/**
 * The passkey rule: every approve path passes the hub's settings,
 * so at or above LEASEHOLD_PASSKEY_APPROVAL_RISK approve() refuses without an
 * assertion made for exactly this approval (passkeys.approvalOptions →
 * startAuthentication in the browser).
 */
function passkey(ctx: TrpcContext, assertion: z.output<typeof assertionSchema> | undefined) {
  return { settings: passkeySettingsOf(ctx.runtime.config), ...(assertion === undefined ? {} : { assertion: assertion as AuthenticationResponseJSON }) };
}

const grantEdits = z.strictObject({
  pattern: z.string().min(1).max(1000).nullable(),
  uses: z.number().int().min(1).max(10_000),
  expiresAt: z.iso.datetime(),
  maxRisk: z.string().max(16),
  cwd: z.string().min(1).max(1024),
});

export const approvalsRouter = createRouter({
  /** One page of pending approvals, fair across requesters, each prepared action in full (scrubbed, visible-safe). */
  list: roleProcedure(ROLES.deciders)
    .input(z.strictObject({ offset: z.number().int().min(0).max(999_999).default(0), limit: z.number().int().min(1).max(APPROVAL_PAGE.maxLimit).default(APPROVAL_PAGE.defaultLimit) }).optional())
    .query(({ ctx, input }) =>
      channel(async () => {
        const page = await pageApprovals(ctx.runtime.database.handle.db, { state: "pending", offset: input?.offset ?? 0, limit: input?.limit ?? APPROVAL_PAGE.defaultLimit });
        return {
          // Four-eyes: whether this admin gave the first approval (their second one is refused), never who did.
          items: page.items.map((item) => ({ ...buildApprovalView(approvalViewOf(item)), first_approved_by_you: item.first_approved_by === ctx.session.adminId })),
          total: page.total,
          offset: page.offset,
          limit: page.limit,
          has_more: page.has_more,
          by_requester: page.by_requester.map((r) => ({ requester: { ...r.requester, name: r.requester.name === null ? null : escapeForTerminal(r.requester.name) }, count: r.count })),
          server_time: new Date().toISOString(),
        };
      }),
    ),
  approve: roleProcedure(ROLES.deciders)
    .input(z.strictObject({ approvalId: id, actionHash, reason: z.string().max(1000).optional(), assertion: assertionSchema.optional() }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const row = await approve(ctx.runtime.database.handle.db, input.approvalId, approver(ctx.session), input.reason ?? null, {
          expectedActionHash: input.actionHash,
          fourEyes: fourEyes(ctx.runtime),
          fourEyesCritical: ctx.runtime.config.fourEyesCritical === true,
          passkey: passkey(ctx, input.assertion),
        });
        return { id: row.id, state: row.state };
      }),
    ),
  deny: roleProcedure(ROLES.deciders)
    .input(z.strictObject({ approvalId: id, actionHash, reason }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const row = await deny(ctx.runtime.database.handle.db, input.approvalId, approver(ctx.session), input.reason, { expectedActionHash: input.actionHash });
        return { id: row.id, state: row.state };
      }),
    ),
  /** Several decisions at once; each item is bound to its own action hash and succeeds or fails on its own. */
  batch: roleProcedure(ROLES.deciders)
    .input(
      z
        .strictObject({ decision: z.enum(["approve", "deny"]), reason: z.string().trim().max(1000).optional(), items: z.array(z.strictObject({ approvalId: id, actionHash, assertion: assertionSchema.optional() })).min(1).max(MAX_BATCH) })
        .refine((v) => v.decision === "approve" || (v.reason ?? "").length > 0, { message: "a denial needs a reason", path: ["reason"] }),
    )
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const db = ctx.runtime.database.handle.db;
        const results: Array<{ approvalId: string; ok: true; state: string } | { approvalId: string; ok: false; error: { code: string; message: string } }> = [];
        // One after another: each decision is its own sealed transaction, and a failure stops nothing else.
        for (const item of input.items) {
          try {
            const row =
              input.decision === "approve"
                ? await approve(db, item.approvalId, approver(ctx.session), input.reason ?? null, {
                    expectedActionHash: item.actionHash,
                    fourEyes: fourEyes(ctx.runtime),
          fourEyesCritical: ctx.runtime.config.fourEyesCritical === true,
                    // Each item carries its own assertion (its own challenge); without one a high item is refused alone.
                    passkey: passkey(ctx, item.assertion),
                  })
                : await deny(db, item.approvalId, approver(ctx.session), input.reason ?? "", { expectedActionHash: item.actionHash });
            results.push({ approvalId: item.approvalId, ok: true, state: row.state });
          } catch (error) {
            const payload = toErrorPayload(error);
            results.push({ approvalId: item.approvalId, ok: false, error: { code: payload.code, message: payload.message } });
          }
        }
        return { results };
      }),
    ),
  /** The narrowest grant that would cover this held action (never for critical). Env values shown scrubbed. */
  proposeGrant: roleProcedure(ROLES.deciders)
    .input(z.strictObject({ approvalId: id, actionHash }))
    .query(({ ctx, input }) =>
      channel(async () => {
        const listing = await showApproval(ctx.runtime.database.handle.db, input.approvalId);
        if (listing.action_hash !== input.actionHash) {
          throw new LeaseholdError("POLICY_REFUSED", "the action you reviewed is not the action awaiting approval (action_hash differs)", { tier: "hub" });
        }
        if (listing.state !== "pending") throw new LeaseholdError("POLICY_REFUSED", `approval ${listing.id} was already ${listing.state}`, { tier: "hub" });
        const proposal = proposeGrant(listing);
        const shown = buildApprovalView(approvalViewOf(listing));
        return { ...proposal, env: shown.env ?? [], stdin: shown.stdin === null || shown.stdin.bytes === 0 ? null : { bytes: shown.stdin.bytes, sha256: shown.stdin.sha256 } };
      }),
    ),
  /**
   * The passkey ceremony for the grant "allow similar" would create, at or
   * above the passkey threshold: server/policy/grants' one grant ceremony
   * (what `grants.passkeyOptions` runs) over the scope built on the hub from
   * the stored action (its raw env never reaches the browser) and these
   * edits. The hub fixes the exact expiry; `approveAndGrant` must be sent it
   * with the assertion.
   */
  grantPasskeyOptions: roleProcedure(ROLES.deciders, { reauth: true })
    .input(z.strictObject({ approvalId: id, actionHash, grant: grantEdits }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const made = await allowSimilarPasskeyOptions(
          ctx.runtime.database.handle.db,
          input.approvalId,
          { id: ctx.session.adminId },
          input.actionHash,
          { ...input.grant, expiresAt: new Date(input.grant.expiresAt) },
          passkeySettingsOf(ctx.runtime.config),
          ctx.headers.get("origin"),
        );
        return { options: made.options, scopeDigest: made.scopeDigest, expiresAt: made.scope.expires_at };
      }),
    ),
  /**
   * Approves (bound to the hash shown) and creates the confirmed grant with the action's exact env and stdin, in one commit.
   * Re-authenticated like every other way to make a grant: it lets later actions run with no person. `assertion` signs the
   * approval (a high action); `grantAssertion` signs the grant's scope (a ceiling at or above the passkey threshold).
   */
  approveAndGrant: roleProcedure(ROLES.deciders, { reauth: true })
    .input(z.strictObject({ approvalId: id, actionHash, reason: z.string().max(1000).optional(), grant: grantEdits, assertion: assertionSchema.optional(), grantAssertion: assertionSchema.optional() }))
    .mutation(({ ctx, input }) =>
      channel(async () => {
        const { approval, grant } = await approveAndGrant(
          ctx.runtime.database.handle.db,
          input.approvalId,
          approver(ctx.session),
          {
            expectedActionHash: input.actionHash,
            fourEyes: fourEyes(ctx.runtime),
            fourEyesCritical: ctx.runtime.config.fourEyesCritical === true,
            reason: input.reason ?? null,
            passkey: passkey(ctx, input.assertion),
          },
          { ...input.grant, expiresAt: new Date(input.grant.expiresAt) },
          input.grantAssertion === undefined ? null : (input.grantAssertion as AuthenticationResponseJSON),
        );
        return {
          approval: { id: approval.id, state: approval.state },
          grant: { id: grant.id, pattern: grant.argumentPattern, usesRemaining: grant.usesRemaining, expiresAt: grant.expiresAt.toISOString(), passkeySigned: grant.assertion !== null },
        };
      }),
    ),
});
