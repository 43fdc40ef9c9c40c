/**
 * "Approve and allow similar": the narrowest grant that would have let one
 * held action run without a person. A person sees the proposal,
 * may edit it (widen the pattern, change uses or expiry) and confirms; the
 * hub then approves the action and creates the grant, in that order.
 *
 * Narrowest means:
 *  - this host and this operation (tool);
 *  - the subject the grant pattern matches (command, code or path) exactly:
 *    the program, its options and its operands, every regex metacharacter
 *    escaped, anchored in full by the grant matcher (`^(?:P)$`);
 *  - the action's exact environment (names and values), its exact stdin
 *    (sha256) and its working directory — taken from the stored action on
 *    the hub, never from the browser, so secrets in env values never leave
 *    the hub raw (the proposal shows them scrubbed);
 *  - the action's own risk level as the ceiling, 3 uses, expiry in 1 hour.
 * Never for `critical` (grants cannot cover it; the proposal is refused).
 * At or above the passkey threshold the grant is signed by the person's
 * passkey over its own scope, with the ceremony the Grants page uses
 * (server/policy/grants `grantPasskeyOptions` → `createGrant`).
 */
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import type { Database } from "../db";
import { LeaseholdError } from "../errors";
import type { PasskeySettings } from "../passkeys/relying-party";
import {
  GRANTABLE_LEVELS,
  assertPatternVisible,
  createGrant,
  grantNeedsPasskey,
  grantPasskeyOptions,
  grantPasskeyRefusal,
  grantScope,
  grantSubject,
  sha256Hex,
  type CreateGrantInput,
  type GrantRow,
} from "../policy/grants";
import { neutraliseOneLine } from "../text";
import { approve, expireApproval, showApproval, type ApprovalListing, type ApprovalRow, type ApprovingAdmin, type DecideOptions } from "./approvals";
import { announceDecision } from "./notifier";

export { assertPatternVisible };

export const PROPOSED_GRANT = { uses: 3, lifetimeMs: 3600_000 } as const;

/** The grant "approve and allow similar" proposes (what `createGrant` takes, plus the exact env kept on the hub). */
export interface GrantProposal {
  tool: string;
  host: string;
  maxRisk: string;
  uses: number;
  expiresAt: string;
  /** Anchored by the matcher; the subject with every metacharacter escaped. */
  pattern: string;
  /** Exact env of the action (raw values: stays on the hub). */
  env: Record<string, string>;
  stdinSha256: string | null;
  cwd: string;
}

/**
 * Escapes every character a Unicode-mode regular expression treats as syntax
 * (and nothing else: `\-` is an error in `u` mode), then writes every control,
 * invisible or direction-changing character as a regex escape (`\u202e`,
 * `\x0a`): the person editing the pattern sees each one, and the pattern
 * still matches exactly the subject.
 */
export function escapeRegExp(text: string): string {
  return neutraliseOneLine(text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&")).text;
}

/** Refuses a grant for a critical action (or anything above the grantable ceiling). */
export function assertGrantable(risk: string): void {
  if (!(GRANTABLE_LEVELS as readonly string[]).includes(risk)) {
    throw new LeaseholdError("POLICY_REFUSED", `a ${risk} action can never be covered by a grant; approve or deny it alone (refused by a hub check)`, { tier: "hub" });
  }
}

/** The narrowest grant covering exactly this held action. `now` for the expiry. */
export function proposeGrant(listing: ApprovalListing, now = new Date()): GrantProposal {
  assertGrantable(listing.risk);
  if (listing.host === null) throw new LeaseholdError("NOT_FOUND", "the held action names no host", { tier: "hub" });
  const args = listing.prepared.arguments ?? {};
  if ("language" in args) {
    // grants.ts covers no `language` argument: a grant could never match this action.
    throw new LeaseholdError("POLICY_REFUSED", "grants cannot cover run_code actions yet (the interpreter is not part of a grant); approve it alone", { tier: "hub" });
  }
  const envArg = args["env"];
  const env: Record<string, string> = {};
  if (envArg !== null && typeof envArg === "object" && !Array.isArray(envArg)) {
    for (const [name, value] of Object.entries(envArg as Record<string, unknown>)) {
      Object.defineProperty(env, name, { value: String(value), enumerable: true, writable: true, configurable: true });
    }
  }
  const stdin = args["stdin"];
  const stdinText = typeof stdin === "string" ? stdin : stdin === undefined || stdin === null ? "" : JSON.stringify(stdin);
  const cwd = typeof args["cwd"] === "string" ? args["cwd"] : ".";
  return {
    tool: listing.operation,
    host: listing.host,
    maxRisk: listing.risk,
    uses: PROPOSED_GRANT.uses,
    expiresAt: new Date(now.getTime() + PROPOSED_GRANT.lifetimeMs).toISOString(),
    pattern: escapeRegExp(grantSubject(args)),
    env,
    stdinSha256: stdinText === "" ? null : sha256Hex(stdinText),
    cwd,
  };
}

/** What the person may edit in the proposal before confirming (env and stdin stay the action's own). */
export interface GrantEdits {
  pattern: string | null;
  uses: number;
  expiresAt: Date;
  maxRisk: string;
  cwd: string;
}

/**
 * The grant "approve and allow similar" makes for one held action and the
 * person's edits: the action's own tool, host, exact env and stdin digest
 * (from the stored action, never from the browser), the person's pattern,
 * uses, expiry, ceiling and cwd. The same input feeds the passkey ceremony
 * (`allowSimilarPasskeyOptions`) and the creation, so what is signed is what
 * is created.
 */
export function allowSimilarGrantInput(listing: ApprovalListing, edits: GrantEdits): CreateGrantInput {
  const base = proposeGrant(listing);
  assertGrantable(edits.maxRisk);
  return {
    tool: base.tool,
    host: base.host,
    maxRisk: edits.maxRisk,
    uses: edits.uses,
    expiresAt: edits.expiresAt,
    pattern: edits.pattern,
    env: base.env,
    stdinSha256: base.stdinSha256,
    cwd: edits.cwd,
  };
}

/** Refuses unless the held action is still pending and is the one the person reviewed. */
function assertReviewed(listing: ApprovalListing, expectedActionHash: string | undefined): void {
  if (expectedActionHash !== undefined && listing.action_hash !== expectedActionHash) {
    throw new LeaseholdError("POLICY_REFUSED", "the action you reviewed is not the action awaiting approval (action_hash differs)", { tier: "hub" });
  }
  if (listing.state !== "pending") throw new LeaseholdError("POLICY_REFUSED", `approval ${listing.id} was already ${listing.state}`, { tier: "hub" });
}

/**
 * The passkey ceremony for the grant "approve and allow similar" would
 * create: server/policy/grants' `grantPasskeyOptions` — the one grant
 * ceremony the Grants page uses too — over the scope built from the stored
 * action and the edits. The hub fixes the exact expiry here; the creation
 * must be sent that `expiresAt` and the assertion.
 */
export async function allowSimilarPasskeyOptions(
  db: Database,
  id: string,
  admin: { id: string },
  expectedActionHash: string,
  edits: GrantEdits,
  settings: PasskeySettings,
  origin: string | null,
): Promise<Awaited<ReturnType<typeof grantPasskeyOptions>>> {
  const listing = await showApproval(db, id);
  assertReviewed(listing, expectedActionHash);
  return grantPasskeyOptions(db, admin, allowSimilarGrantInput(listing, edits), settings, origin);
}

/**
 * Approves the held action and creates the (edited) grant in one
 * transaction: a refused approval (wrong hash, decided already, expired,
 * four-eyes) creates nothing, and a refused grant (a scope the passkey did
 * not sign, a used challenge) approves nothing. The grant keeps the
 * action's exact env and stdin digest and is sealed as grant/1 like any
 * other. At or above the passkey threshold the grant needs
 * `grantAssertion`, a passkey signature over its whole scope
 * (`allowSimilarPasskeyOptions`), verified by `createGrant` exactly as for
 * the Grants page; the approval's own assertion (`options.passkey`) covers
 * the action, not the grant.
 */
export async function approveAndGrant(
  db: Database,
  id: string,
  admin: ApprovingAdmin,
  options: DecideOptions & { reason?: string | null },
  edits: GrantEdits,
  grantAssertion?: AuthenticationResponseJSON | null,
): Promise<{ approval: ApprovalRow; grant: GrantRow }> {
  const listing = await showApproval(db, id);
  const input = allowSimilarGrantInput(listing, edits);
  // Every mistake in the edits is refused before anything is decided (the same validation createGrant runs).
  grantScope(input);
  const settings = options.passkey?.settings;
  if ((grantAssertion ?? null) === null && grantNeedsPasskey(edits.maxRisk, settings)) {
    const refusal = grantPasskeyRefusal(edits.maxRisk, settings);
    throw new LeaseholdError(refusal.code, `${refusal.message}. In "approve and allow similar" your passkey signs the grant in the same step`, {
      tier: "hub",
      hint: "sign the grant with your passkey in the allow-similar form",
    });
  }
  // A deadline already passed is sealed as expired on its own, not inside (and rolled back with) the refused decision.
  if (listing.state === "pending" && Date.parse(listing.deadline) <= Date.now()) await expireApproval(db, listing.id);
  const result = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const approval = await approve(t, listing.id, admin, options.reason ?? null, { ...options, announce: false });
    const grant = await createGrant(t, admin, input, settings === undefined ? undefined : { settings, assertion: grantAssertion ?? null });
    return { approval, grant };
  });
  await announceDecision(db, result.approval.id);
  return result;
}
