/**
 * Approvals (docs/design.md#approvals): a person's yes or no for one held action.
 *
 * - Bound to `action_hash`. A decision recomputes the hash from the stored
 *   prepared action; if the action changed since the request (or the
 *   approver saw a different hash), the decision is refused.
 * - A deadline (default 5 minutes). An undecided request is denied at its
 *   deadline — state `expired`, sealed as approval/1 `expired` — by whoever
 *   looks first (a waiter, a listing, a decision attempt, the sweep).
 * - Optional four-eyes: the approver may not be the requester's owner (the
 *   admin who issued the requesting token, or the requesting admin).
 * - Every state change and its approval/1 entry commit in one transaction;
 *   waiters are then woken in this process and, through NOTIFY, in others.
 *
 * The request itself is sealed by the pipeline as decision/1 `hold` (same
 * action_id); approval/1 records the outcome.
 */
import { and, asc, eq, or, sql } from "drizzle-orm";
import { canonicalDigest } from "../canonical";
import type { Database, DatabaseHandle } from "../db";
import { actions, adminUsers, agentTokens, approvals, hosts, mcpSessions } from "../db/schema";
import { hostPathsOf } from "../hosts/health";
import type { HostPathEntry } from "../trust/host-paths";
import { LeaseholdError } from "../errors";
import { appendEntry } from "../ledger/append";
import { digestOf, hashActor } from "../ledger/entry";
import { assertionDigest, needsPasskey, type StoredAssertion } from "../passkeys/challenge";
import { verifyApprovalAssertion } from "../passkeys/passkeys";
import { relyingParty, type PasskeySettings } from "../passkeys/relying-party";
import { livenessOf, markClientWaiting, waitingMarkDue, type Liveness } from "./liveness";
import { announceDecision, approvalNotifier } from "./notifier";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";

export type ApprovalRow = typeof approvals.$inferSelect;
/** `cancelled`: withdrawn from the queue because its action was cancelled (server/actions/cancel.ts), sealed as cancel/1. */
export type ApprovalState = "pending" | "approved" | "denied" | "expired" | "cancelled";
export const DEFAULT_APPROVAL_TTL_MS = 5 * 60_000;

export interface ApprovingAdmin {
  id: string;
  username: string;
}

export interface DecideOptions {
  /** Refuse the decision unless the approver saw exactly this action. */
  expectedActionHash?: string;
  /** Approver ≠ requester's owner. */
  fourEyes?: boolean;
  /**
   * Four-eyes for `critical` (LEASEHOLD_FOUR_EYES_CRITICAL=1): the first
   * approval of a critical action is recorded (first_approved_by, its passkey
   * assertion, sealed as admin/1 `approval.first`) and the action stays held;
   * a second, different approver completes it.
   */
  fourEyesCritical?: boolean;
  /**
   * The passkey rule: approving an action at or above
   * `settings.passkeyApprovalRisk` needs `assertion`, a WebAuthn assertion
   * over this approval's challenge (server/passkeys). Every channel (CLI,
   * tRPC) passes the hub's configuration here; an in-process caller that
   * passes none decides without the rule (tests and fixtures).
   */
  passkey?: { settings: PasskeySettings; assertion?: AuthenticationResponseJSON };
  /**
   * `false` when `db` is an enclosing transaction (approve and create a
   * grant as one commit): waiters are woken by the caller with
   * `announceDecision(outerDb, id)` after that transaction commits, never
   * before (a woken waiter would read the decision as not yet made).
   */
  announce?: boolean;
}

export { needsPasskey };

/** The refusal for approving `risk` without a passkey signature (names what to do, or why it cannot be done here). */
function passkeyRefusal(risk: string, settings: PasskeySettings): LeaseholdError {
  const rp = relyingParty(settings);
  const threshold = settings.passkeyApprovalRisk ?? "high";
  if (!rp.available) {
    return new LeaseholdError(
      "FORBIDDEN",
      `approving a ${risk}-risk action needs a passkey signature, and ${rp.reason}. Until then such approvals are refused (LEASEHOLD_PASSKEY_APPROVAL_RISK=${threshold}; set it to off to approve without a passkey)`,
      { tier: "hub", hint: "set LEASEHOLD_PUBLIC_URL to a URL with a host name" },
    );
  }
  return new LeaseholdError(
    "FORBIDDEN",
    `approving a ${risk}-risk action needs a passkey signature (LEASEHOLD_PASSKEY_APPROVAL_RISK=${threshold}): approve it in the browser at ${rp.origins[0]}/approvals`,
    { tier: "hub", hint: `open ${rp.origins[0]}/approvals` },
  );
}

function asDb(tx: unknown): Database {
  return tx as Database;
}

async function sealApproval(db: Database, approval: ApprovalRow, outcome: "approved" | "denied" | "expired", actor: `sha256:${string}`, assertion?: StoredAssertion): Promise<void> {
  const data = { action_hash: approval.actionHash as `sha256:${string}`, approval_id: approval.id, outcome, deadline: approval.deadline.toISOString() };
  await appendEntry(db, {
    type: "approval/1",
    time: new Date(),
    action_id: approval.actionId,
    actor,
    data: assertion === undefined ? data : { ...data, assertion_digest: await assertionDigest(assertion) },
  });
}

/** Creates the pending approval for a held action, inside the pipeline's transaction. */
export async function insertApproval(
  tx: Database,
  input: { actionId: string; actionHash: string; requestedBy: string; riskLevel: string; deadline: Date },
): Promise<ApprovalRow> {
  const [row] = await tx
    .insert(approvals)
    // The submitting call is open as the row is made: a client is waiting on it from the start.
    .values({ actionId: input.actionId, actionHash: input.actionHash, state: "pending", requestedBy: input.requestedBy, riskLevel: input.riskLevel, deadline: input.deadline, clientWaitingAt: new Date() })
    .returning();
  if (row === undefined) throw new LeaseholdError("INTERNAL", "approval insert returned no row", { tier: "database" });
  return row;
}

export async function getApproval(db: Database, approvalId: string): Promise<ApprovalRow | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(approvalId)) return undefined;
  const [row] = await db.select().from(approvals).where(eq(approvals.id, approvalId));
  return row;
}

/** Denies `approvalId` if it is still pending past its deadline. Returns the row as it now is. */
export async function expireApproval(db: Database, approvalId: string): Promise<ApprovalRow | undefined> {
  const expired = await db.transaction(async (tx) => {
    const [row] = await tx
      .update(approvals)
      .set({ state: "expired", decidedAt: new Date() })
      .where(and(eq(approvals.id, approvalId), eq(approvals.state, "pending"), sql`${approvals.deadline} <= now()`))
      .returning();
    if (row === undefined) return undefined;
    await tx.update(actions).set({ state: "expired", updatedAt: new Date() }).where(eq(actions.id, row.actionId));
    await sealApproval(asDb(tx), row, "expired", hashActor("system", "approval-deadline"));
    return row;
  });
  if (expired !== undefined) await announceDecision(db, approvalId);
  return expired ?? getApproval(db, approvalId);
}

/** Expires every overdue pending approval (the sweep). Returns how many. */
export async function expireOverdueApprovals(db: Database): Promise<number> {
  const overdue = await db
    .select({ id: approvals.id })
    .from(approvals)
    .where(and(eq(approvals.state, "pending"), sql`${approvals.deadline} <= now()`));
  let count = 0;
  for (const { id } of overdue) if ((await expireApproval(db, id))?.state === "expired") count += 1;
  return count;
}

async function decide(
  db: Database,
  idOrActionId: string,
  admin: ApprovingAdmin,
  outcome: "approved" | "denied",
  reason: string | null,
  options: DecideOptions,
): Promise<ApprovalRow> {
  // The approval id, or the id of the action it holds (what an agent reports).
  const current = await findApproval(db, idOrActionId);
  if (current === undefined) throw new LeaseholdError("NOT_FOUND", `no approval or held action ${idOrActionId}`, { tier: "hub", hint: "leasehold approvals list shows approval and action ids" });
  const approvalId = current.id;
  if (current.state === "pending" && current.deadline.getTime() <= Date.now()) await expireApproval(db, approvalId);

  const decided = await db.transaction(async (tx) => {
    const [row] = await tx.select().from(approvals).where(eq(approvals.id, approvalId)).for("update");
    if (row === undefined) throw new LeaseholdError("NOT_FOUND", `no approval ${approvalId}`, { tier: "hub" });
    if (row.state === "expired") {
      throw new LeaseholdError("APPROVAL_EXPIRED", `approval ${approvalId} passed its deadline ${row.deadline.toISOString()} and was denied`, { tier: "hub" });
    }
    if (row.state !== "pending") {
      throw new LeaseholdError("POLICY_REFUSED", `approval ${approvalId} was already ${row.state}; a decision is final (refused by a hub check)`, { tier: "hub" });
    }
    const [action] = await tx.select().from(actions).where(eq(actions.id, row.actionId));
    const recomputed = action === undefined ? null : canonicalDigest(action.prepared);
    if (action === undefined || recomputed !== row.actionHash || action.actionHash !== row.actionHash) {
      throw new LeaseholdError("POLICY_REFUSED", "the action changed since its approval was requested; the decision is refused (hub check on action_hash)", {
        tier: "hub",
        details: { approval_action_hash: row.actionHash },
      });
    }
    if (options.expectedActionHash !== undefined && options.expectedActionHash !== row.actionHash) {
      throw new LeaseholdError("POLICY_REFUSED", "the action you reviewed is not the action awaiting approval (action_hash differs); decision refused", {
        tier: "hub",
        details: { approval_action_hash: row.actionHash },
      });
    }
    if (options.fourEyes && (row.requestedBy === admin.id || row.requestedBy === admin.username || row.requestedBy === `admin:${admin.id}`)) {
      throw new LeaseholdError("POLICY_REFUSED", "four-eyes is on: the approver may not be the owner of the requesting token or session (hub check)", { tier: "hub" });
    }
    let assertion: StoredAssertion | undefined;
    if (outcome === "approved" && options.passkey !== undefined) {
      if (options.passkey.assertion !== undefined) {
        // Bound to this approval id and action hash: an assertion made for another is refused here.
        assertion = await verifyApprovalAssertion(asDb(tx), { approvalId: row.id, actionHash: row.actionHash, adminId: admin.id, response: options.passkey.assertion, settings: options.passkey.settings });
      } else if (needsPasskey(row.riskLevel, options.passkey.settings.passkeyApprovalRisk)) {
        throw passkeyRefusal(row.riskLevel, options.passkey.settings);
      }
    }
    if (outcome === "approved" && options.fourEyesCritical === true && row.riskLevel === "critical") {
      if (row.firstApprovedBy === admin.id) {
        throw new LeaseholdError("POLICY_REFUSED", "four-eyes for critical actions: you already approved this one; a second, different approver must approve it (hub check)", { tier: "hub" });
      }
      if (row.firstApprovedBy === null) {
        const [first] = await tx
          .update(approvals)
          .set({ firstApprovedBy: admin.id, firstApprovedAt: new Date(), ...(assertion === undefined ? {} : { firstAssertion: { ...assertion } }) })
          .where(and(eq(approvals.id, approvalId), eq(approvals.state, "pending")))
          .returning();
        if (first === undefined) throw new LeaseholdError("POLICY_REFUSED", `approval ${approvalId} is no longer pending`, { tier: "hub" });
        await appendEntry(asDb(tx), {
          type: "admin/1",
          time: new Date(),
          action_id: row.actionId,
          actor: hashActor("admin", admin.id),
          data: { operation: "approval.first", target_digest: digestOf(`approval:${row.id}`), settings_digest: row.actionHash as `sha256:${string}` },
        });
        return first;
      }
    }
    const [updated] = await tx
      .update(approvals)
      .set({ state: outcome, decidedBy: admin.id, decidedAt: new Date(), reason, ...(assertion === undefined ? {} : { assertion: { ...assertion } }) })
      .where(and(eq(approvals.id, approvalId), eq(approvals.state, "pending")))
      .returning();
    if (updated === undefined) throw new LeaseholdError("POLICY_REFUSED", `approval ${approvalId} is no longer pending`, { tier: "hub" });
    await tx.update(actions).set({ state: outcome, updatedAt: new Date() }).where(eq(actions.id, updated.actionId));
    await sealApproval(asDb(tx), updated, outcome, hashActor("admin", admin.id), assertion);
    return updated;
  });
  if (options.announce !== false) await announceDecision(db, approvalId);
  return decided;
}

export const TOKEN_REVOKED_REASON = "token revoked";

/**
 * Denies every pending approval of actions submitted with `tokenId`, inside
 * the caller's transaction (the token revocation's), each sealed as
 * approval/1 `denied` under `actor`, reason "token revoked". Returns the
 * denied approval ids; the caller announces them after commit
 * (`announceDecision`) so waiters wake and answer APPROVAL_DENIED.
 */
export async function denyApprovalsOfToken(tx: Database, tokenId: string, actor: `sha256:${string}`): Promise<string[]> {
  const denied = await tx
    .update(approvals)
    .set({ state: "denied", decidedAt: new Date(), reason: TOKEN_REVOKED_REASON })
    .where(and(eq(approvals.state, "pending"), sql`${approvals.actionId} in (select ${actions.id} from ${actions} where ${actions.tokenId} = ${tokenId})`))
    .returning();
  for (const row of denied) {
    await tx.update(actions).set({ state: "denied", updatedAt: new Date() }).where(eq(actions.id, row.actionId));
    await sealApproval(tx, row, "denied", actor);
  }
  return denied.map((row) => row.id);
}

/**
 * Withdraws the pending approval of `actionId` from the queue, inside the
 * caller's transaction (the cancellation's, which seals cancel/1 for it).
 * Returns the approval withdrawn, or undefined when none was pending; the
 * caller announces it after commit (`announceDecision`) so its waiters wake.
 */
export async function withdrawApproval(tx: Database, actionId: string): Promise<ApprovalRow | undefined> {
  const [row] = await tx
    .update(approvals)
    .set({ state: "cancelled", decidedAt: new Date() })
    .where(and(eq(approvals.actionId, actionId), eq(approvals.state, "pending")))
    .returning();
  return row;
}

/** Approves a pending action as `admin` (by approval id or action id). Sealed; wakes waiters everywhere. */
export function approve(db: Database, approvalId: string, admin: ApprovingAdmin, reason?: string | null, options: DecideOptions = {}): Promise<ApprovalRow> {
  return decide(db, approvalId, admin, "approved", reason ?? null, options);
}

/** Denies a pending action as `admin` (by approval id or action id); a reason is required. Sealed; wakes waiters everywhere. */
export function deny(db: Database, approvalId: string, admin: ApprovingAdmin, reason: string, options: DecideOptions = {}): Promise<ApprovalRow> {
  if (reason.trim().length === 0) return Promise.reject(new LeaseholdError("INVALID_ARGUMENT", "a denial needs a reason", { tier: "hub" }));
  return decide(db, approvalId, admin, "denied", reason, options);
}

export interface ApprovalListing {
  id: string;
  action_id: string;
  action_hash: string;
  operation: string;
  capability: string;
  host: string | null;
  risk: string;
  reasons: unknown;
  state: string;
  /** Why it was decided as it was (an admin's reason, or "token revoked"). */
  reason: string | null;
  deadline: string;
  requested_at: string;
  /** Four-eyes for critical: when the first of two approvers approved (null until then). */
  first_approved_at: string | null;
  channel: string;
  /** Who asked: the token (id and name) or the admin. */
  requester: { kind: "token" | "admin" | "unknown"; id: string | null; name: string | null };
  /** The MCP session the request came from (the digest the MCP layer keeps; shown through `sessionLabel`). */
  session_id: string | null;
  /** Four-eyes for critical: the admin who gave the first approval (null until then). */
  first_approved_by: string | null;
  /** The prepared action in full: `arguments`, the compiled `policy`, whether the operation is `mutating`. */
  prepared: { arguments?: Record<string, unknown>; policy?: Record<string, unknown>; mutating?: unknown; reason?: unknown };
  /** The host paths the host last reported (owner and budget of each label the policy mounts), null when none. */
  host_paths: HostPathEntry[] | null;
  /** Whether a client is still waiting on it (liveness.ts), judged by the hub's clock when listed. */
  liveness: Liveness;
}

export interface ApprovalPage {
  items: ApprovalListing[];
  /** How many approvals are in this state (every page). */
  total: number;
  offset: number;
  limit: number;
  has_more: boolean;
  /** Per requester, how many are in this state, most first: nobody's requests are hidden behind a count. */
  by_requester: Array<{ requester: ApprovalListing["requester"]; count: number }>;
}

export const APPROVAL_PAGE = { defaultLimit: 50, maxLimit: 200 } as const;

function requesterOf(action: { tokenId: string | null; adminId: string | null }, tokenName: string | null, adminName: string | null): ApprovalListing["requester"] {
  if (action.tokenId !== null) return { kind: "token", id: action.tokenId, name: tokenName };
  if (action.adminId !== null) return { kind: "admin", id: action.adminId, name: adminName };
  return { kind: "unknown", id: null, name: null };
}

function stateFilter(state: ApprovalState | "all") {
  return state === "all" ? undefined : eq(approvals.state, state);
}

/**
 * One page of approvals (pending by default) with their prepared actions.
 * Overdue ones are expired first.
 *
 * Fair order (one token's ~280 held requests pushed another
 * agent's request off the oldest-200 list until it expired): round-robin by
 * requester (token or admin), oldest first within each — the first page
 * holds every requester's oldest request before anyone's second. Each
 * request's turn is `row_number() over (partition by requester order by
 * created_at)`; the page is ordered by (turn, created_at). `by_requester`
 * counts every requester's approvals in this state, whatever the page.
 */
export async function pageApprovals(db: Database, options: { state?: ApprovalState | "all"; offset?: number; limit?: number } = {}): Promise<ApprovalPage> {
  await expireOverdueApprovals(db);
  const state = options.state ?? "pending";
  const offset = Math.max(0, Math.floor(options.offset ?? 0));
  const limit = Math.min(APPROVAL_PAGE.maxLimit, Math.max(1, Math.floor(options.limit ?? APPROVAL_PAGE.defaultLimit)));
  const now = new Date();
  const turn = sql<number>`row_number() over (partition by ${actions.callerKey} order by ${approvals.createdAt}, ${approvals.id})`;
  const ranked = db
    .select({ approvalId: approvals.id, turn: turn.as("turn") })
    .from(approvals)
    .innerJoin(actions, eq(actions.id, approvals.actionId))
    .where(stateFilter(state))
    .as("ranked");
  const rows = await db
    .select({ approval: approvals, action: actions, host: hosts.name, hostHealth: hosts.health, tokenName: agentTokens.name, adminName: adminUsers.username, sessionExpiresAt: mcpSessions.expiresAt, turn: ranked.turn })
    .from(ranked)
    .innerJoin(approvals, eq(approvals.id, ranked.approvalId))
    .innerJoin(actions, eq(actions.id, approvals.actionId))
    .leftJoin(hosts, eq(hosts.id, actions.hostId))
    .leftJoin(agentTokens, eq(agentTokens.id, actions.tokenId))
    .leftJoin(adminUsers, eq(adminUsers.id, actions.adminId))
    .leftJoin(mcpSessions, and(eq(actions.channel, "mcp"), eq(mcpSessions.id, actions.sessionId)))
    .orderBy(asc(ranked.turn), asc(approvals.createdAt), asc(approvals.id))
    .offset(offset)
    .limit(limit);
  const counts = await db
    .select({ tokenId: actions.tokenId, adminId: actions.adminId, tokenName: agentTokens.name, adminName: adminUsers.username, count: sql<number>`count(*)::int` })
    .from(approvals)
    .innerJoin(actions, eq(actions.id, approvals.actionId))
    .leftJoin(agentTokens, eq(agentTokens.id, actions.tokenId))
    .leftJoin(adminUsers, eq(adminUsers.id, actions.adminId))
    .where(stateFilter(state))
    .groupBy(actions.tokenId, actions.adminId, agentTokens.name, adminUsers.username);
  const byRequester = counts
    .map((c) => ({ requester: requesterOf(c, c.tokenName, c.adminName), count: Number(c.count) }))
    .sort((a, b) => b.count - a.count || String(a.requester.name).localeCompare(String(b.requester.name)));
  const total = byRequester.reduce((sum, r) => sum + r.count, 0);
  return {
    items: rows.map(({ approval, action, host, hostHealth, tokenName, adminName, sessionExpiresAt }) => listingOf(approval, action, host, hostHealth, tokenName, adminName, sessionExpiresAt, now)),
    total,
    offset,
    limit,
    has_more: offset + rows.length < total,
    by_requester: byRequester,
  };
}

function listingOf(
  approval: ApprovalRow,
  action: typeof actions.$inferSelect,
  host: string | null,
  hostHealth: unknown,
  tokenName: string | null,
  adminName: string | null,
  sessionExpiresAt: Date | null,
  now: Date,
): ApprovalListing {
  return {
    id: approval.id,
    action_id: action.id,
    action_hash: approval.actionHash,
    operation: action.operation,
    capability: action.capabilityId,
    host,
    risk: approval.riskLevel,
    reasons: action.riskReasons,
    state: approval.state,
    reason: approval.reason,
    deadline: approval.deadline.toISOString(),
    requested_at: approval.createdAt.toISOString(),
    first_approved_at: approval.firstApprovedAt === null ? null : approval.firstApprovedAt.toISOString(),
    first_approved_by: approval.firstApprovedBy,
    channel: action.channel,
    requester: requesterOf(action, tokenName, adminName),
    session_id: action.sessionId,
    prepared: (action.prepared ?? {}) as ApprovalListing["prepared"],
    host_paths: hostPathsOf(hostHealth).host_paths,
    liveness: livenessOf({ clientWaitingAt: approval.clientWaitingAt, heldAt: approval.createdAt, sessionId: action.channel === "mcp" ? action.sessionId : null, sessionExpiresAt }, now),
  };
}

/** An approval without its prepared action: what leaves the hub for a browser (no raw env or stdin). */
export type ApprovalSummary = Omit<ApprovalListing, "prepared" | "session_id" | "first_approved_by">;

/**
 * Approvals (pending by default), in fair order (see `pageApprovals`), at
 * most `limit` (default 200), WITHOUT the prepared action: environment values
 * and stdin are shown to people only through the scrubbing view (`view.ts`,
 * the CLI), so this summary — what the console's tRPC route sends to a
 * browser — carries no raw copy of them.
 */
export async function listApprovals(db: Database, options: { state?: ApprovalState | "all"; limit?: number } = {}): Promise<ApprovalSummary[]> {
  const page = await pageApprovals(db, { state: options.state, limit: options.limit ?? APPROVAL_PAGE.maxLimit });
  return page.items.map(({ prepared: _prepared, session_id: _session, first_approved_by: _first, ...summary }) => summary);
}

/**
 * The approval named by `id` — an approval id, or the id of the action it
 * holds (the id an agent reports from APPROVAL_PENDING). Undefined when
 * neither exists.
 */
export async function findApproval(db: Database, id: string): Promise<ApprovalRow | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
  const [row] = await db
    .select()
    .from(approvals)
    .where(or(eq(approvals.id, id), eq(approvals.actionId, id)))
    .limit(1);
  return row;
}

/** One approval (by approval id or action id) with its prepared action, for `approvals show`. Overdue → expired first. */
export async function showApproval(db: Database, id: string): Promise<ApprovalListing> {
  const found = await findApproval(db, id);
  if (found === undefined) throw new LeaseholdError("NOT_FOUND", `no approval or held action ${id}`, { tier: "hub", hint: "leasehold approvals list shows approval and action ids" });
  if (found.state === "pending" && found.deadline.getTime() <= Date.now()) await expireApproval(db, found.id);
  const [row] = await db
    .select({ approval: approvals, action: actions, host: hosts.name, hostHealth: hosts.health, tokenName: agentTokens.name, adminName: adminUsers.username, sessionExpiresAt: mcpSessions.expiresAt })
    .from(approvals)
    .innerJoin(actions, eq(actions.id, approvals.actionId))
    .leftJoin(hosts, eq(hosts.id, actions.hostId))
    .leftJoin(agentTokens, eq(agentTokens.id, actions.tokenId))
    .leftJoin(adminUsers, eq(adminUsers.id, actions.adminId))
    .leftJoin(mcpSessions, and(eq(actions.channel, "mcp"), eq(mcpSessions.id, actions.sessionId)))
    .where(eq(approvals.id, found.id));
  if (row === undefined) throw new LeaseholdError("NOT_FOUND", `no approval ${id}`, { tier: "hub" });
  return listingOf(row.approval, row.action, row.host, row.hostHealth, row.tokenName, row.adminName, row.sessionExpiresAt, new Date());
}

export interface WaitOptions {
  /** How long to wait for a decision before returning the still-pending row. */
  waitMs: number;
  signal?: AbortSignal;
  /** Called about once a second while waiting (MCP progress notifications). */
  onProgress?: (progress: { waitedMs: number; deadline: Date }) => void;
  /** Fallback poll interval (default 2 s); LISTEN/NOTIFY normally wakes sooner. */
  pollMs?: number;
}

/**
 * Waits until the approval is decided, expires (denied at its deadline), or
 * `waitMs` passes. Returns the row as it then is.
 */
export async function waitForDecision(handle: DatabaseHandle, approvalId: string, options: WaitOptions): Promise<ApprovalRow> {
  const db = handle.db;
  const notifier = approvalNotifier(handle);
  let wake: (() => void) | undefined;
  // Set by a notification that lands while the row is being re-read, so that wake-up is not lost.
  const state = { woken: false };
  const unsubscribe = notifier.subscribe(approvalId, () => {
    state.woken = true;
    wake?.();
  });
  const onAbort = (): void => wake?.();
  options.signal?.addEventListener("abort", onAbort);
  try {
    await notifier.ready();
    const started = Date.now();
    const pollMs = options.pollMs ?? 2000;
    for (;;) {
      state.woken = false;
      let row = await getApproval(db, approvalId);
      if (row === undefined) throw new LeaseholdError("NOT_FOUND", `no approval ${approvalId}`, { tier: "hub" });
      if (row.state === "pending" && row.deadline.getTime() <= Date.now()) row = (await expireApproval(db, approvalId)) ?? row;
      if (row.state !== "pending") return row;
      // This loop IS a client waiting: recorded for every hub process to see, at most every few seconds.
      const now = new Date();
      if (waitingMarkDue(row.clientWaitingAt, now)) await markClientWaiting(db, approvalId, now);
      const waited = Date.now() - started;
      if (waited >= options.waitMs || options.signal?.aborted) return row;
      options.onProgress?.({ waitedMs: waited, deadline: row.deadline });
      const progressEvery = options.onProgress === undefined ? Number.POSITIVE_INFINITY : 1000;
      const sleep = Math.max(1, Math.min(options.waitMs - waited, row.deadline.getTime() - Date.now() + 5, pollMs, progressEvery));
      if (!state.woken) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, sleep);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    }
  } finally {
    unsubscribe();
    options.signal?.removeEventListener("abort", onAbort);
  }
}
