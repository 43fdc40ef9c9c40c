/**
 * "Approve and allow similar": the narrowest grant that would have let one
 * held action run without a person (issue 13). A person sees the proposal,
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
 * Not at or above the passkey threshold either: such a grant needs a passkey
 * signature over its own scope (server/policy/grants), made on the Grants page.
 */
import type { Database } from "../db";
import { LeaseholdError } from "../errors";
import { GRANTABLE_LEVELS, GRANT_LIMITS, createGrant, grantNeedsPasskey, grantPasskeyRefusal, grantSubject, sha256Hex, type GrantRow } from "../policy/grants";
import { hasInvisibleCharacters, neutraliseOneLine } from "../text";
import { approve, showApproval, type ApprovalListing, type ApprovalRow, type ApprovingAdmin, type DecideOptions } from "./approvals";

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

/**
 * Refuses a pattern that holds a control, invisible or direction-changing
 * character as itself: what the person read would not be what the grant
 * matches (`r<U+200B>m` reads as `rm`). Written as an escape (`\u200b`) it is
 * accepted.
 */
export function assertPatternVisible(pattern: string): void {
  if (hasInvisibleCharacters(pattern)) {
    throw new LeaseholdError("INVALID_ARGUMENT", `grant pattern holds invisible or direction-changing characters (${neutraliseOneLine(pattern).text}); write each as an escape such as \\u200b`, { tier: "hub" });
  }
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
 * Approves the held action, then creates the (edited) grant: in that order,
 * so a refused approval (wrong hash, decided already, expired, four-eyes)
 * creates nothing. The grant keeps the action's exact env and stdin digest
 * and is sealed as grant/1 like any other. Obvious mistakes in the edits are
 * refused before the approval, so a person is not left with an approval and
 * no grant for a typo.
 */
export async function approveAndGrant(
  db: Database,
  id: string,
  admin: ApprovingAdmin,
  options: DecideOptions & { reason?: string | null },
  edits: GrantEdits,
): Promise<{ approval: ApprovalRow; grant: GrantRow }> {
  const listing = await showApproval(db, id);
  const base = proposeGrant(listing);
  assertGrantable(edits.maxRisk);
  if (edits.pattern !== null) {
    assertPatternVisible(edits.pattern);
    try {
      new RegExp(`^(?:${edits.pattern})$`, "u");
    } catch (error) {
      throw new LeaseholdError("INVALID_ARGUMENT", `grant pattern is not a valid regular expression: ${(error as Error).message}`, { tier: "hub" });
    }
  }
  if (!Number.isInteger(edits.uses) || edits.uses < 1 || edits.uses > GRANT_LIMITS.maxUses) {
    throw new LeaseholdError("INVALID_ARGUMENT", `uses must be a whole number from 1 to ${GRANT_LIMITS.maxUses}`, { tier: "hub" });
  }
  const lifetime = edits.expiresAt.getTime() - Date.now();
  if (!(lifetime > 0) || lifetime > GRANT_LIMITS.maxLifetimeMs) throw new LeaseholdError("INVALID_ARGUMENT", "expiry must be in the future and at most 90 days away", { tier: "hub" });
  // A grant at or above the passkey threshold needs a passkey signature over its own scope, which
  // this path does not carry (the approval's assertion covers the action, not the grant): refused
  // before approving, so the person is not left with an approval and no grant.
  if (grantNeedsPasskey(edits.maxRisk, options.passkey?.settings)) {
    const refusal = grantPasskeyRefusal(edits.maxRisk, options.passkey?.settings);
    throw new LeaseholdError(refusal.code, `${refusal.message}. Approve this action alone, then create the grant on the Grants page`, { tier: "hub", hint: "approve alone, then create the grant on the Grants page" });
  }
  const approval = await approve(db, listing.id, admin, options.reason ?? null, options);
  const grant = await createGrant(
    db,
    admin,
    {
    tool: base.tool,
    host: base.host,
    maxRisk: edits.maxRisk,
    uses: edits.uses,
    expiresAt: edits.expiresAt,
    pattern: edits.pattern,
    env: base.env,
    stdinSha256: base.stdinSha256,
    cwd: edits.cwd,
    },
    options.passkey === undefined ? undefined : { settings: options.passkey.settings },
  );
  return { approval, grant };
}
