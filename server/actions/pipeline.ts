/**
 * The one action pipeline (docs/design.md#pipeline). Every channel
 * — MCP, the browser console, tests — calls `submitAction`; nothing else
 * reaches the dispatch queue.
 *
 * Order (the safety property; nothing here is configurable):
 *   1 scope     read-only callers: a mutating operation is refused here,
 *               before its target or arguments are looked at; token tool scope
 *   2 resolve   operation → its one manifest (enabled); target host; host scope;
 *               capability readiness on that host
 *   3 validate  arguments against the operation's JSON Schema
 *   4 prepare   artifact arguments resolved to stored `{sha256, bytes}` (an
 *               inline `{base64}` is stored first; a `{sha256}` must be a
 *               complete upload of this caller); adapter normalisation;
 *               sandbox policy = capability ∩ scope ∩
 *               request; action_hash = sha256(JCS(prepared action));
 *               idempotency key lookup
 *   5 assess    risk from the prepared action (never the caller's claim)
 *   6 decide    auto-allow / observe scope / grant (one use, atomic) / hold
 *               for approval — sealed (decision/1, grant/1) in the
 *               transaction that records it; a caller whose observe scope is
 *               `any` runs an observe-capable operation at once under the
 *               observe lease whatever its risk (`observe_scope`), unless the
 *               call asks for `lease: "write"`;
 *               a call a grant would allow first checks that no other session
 *               holds the host exclusively (HOST_BUSY, the use left unspent)
 *   7 approval  wait for the decision (approval/1 is sealed by approvals/)
 *   8 lease     exclusive for a mutating operation above read_only risk,
 *               observe otherwise and for `observe_scope` (lease/1); the
 *               mode travels in the job
 *   9 dispatch  hash recomputed and compared; hub-signed job queued (dispatch/1)
 *
 * Steps 1–5 have no side effects, so their result is sealed with the
 * decision (decision/1 names operation, capability, host, action hash, risk,
 * reasons digest and policy digest). Every refusal at any step is sealed as
 * refusal/1 before the error reaches the caller. A ledger append that fails
 * stops the action with LEDGER_UNAVAILABLE; the step it would have recorded
 * is not taken (appends share the transaction of the change they record).
 */
import { randomUUID } from "node:crypto";
import { and, eq, inArray, sql } from "drizzle-orm";
import { canonicalDigest } from "../canonical";
import { artifactArgumentNames, capabilityEgressConfiguration, checkLabelsListed, checkSnapshotReference, compileSandboxPolicy, validateArguments, type CompiledMount, type OperationResolution } from "../capabilities";
import { hostPathsOf } from "../hosts/health";
import { checkCwdReported } from "../hosts/workspace-dirs";
import { claimArtifact, DEFAULT_ARTIFACT_LIMITS, storeArtifact, type ArtifactLimits, type ArtifactOwner, type ArtifactRef } from "../artifacts";
import type { Database } from "../db";
import { actions, adminUsers, agentTokens, approvals, hosts, jobs } from "../db/schema";
import { LeaseholdError, isLeaseholdError, type ErrorPayload } from "../errors";
import { appendEntry } from "../ledger/append";
import { digestOf, digestOfJson, hashActor } from "../ledger/entry";
import { DEFAULT_APPROVAL_TTL_MS, getApproval, insertApproval, waitForDecision } from "../approvals";
import { JOB_SCHEMA, signJob, type JobDocument } from "../dispatch/jobs";
import { announce, notifyOthersAtCommit } from "../jobs/notify";
import { actionTopic, jobTopic, wake } from "../jobs/wake";
import { TOKEN_REVOKED_MESSAGE } from "./messages";
import { acquireLabelLeases, acquireLabelLeasesInTransaction, acquireLease, acquireLeaseInTransaction, releaseLease, DEFAULT_LEASE_IDLE_MS, DEFAULT_LEASE_TTL_MS, exclusiveConflict, labelConflict, type LeaseHolder, type LeaseMode } from "../leases";
import { assessActionRisk } from "../policy/assess-action";
import { decideCall, type DecisionPath } from "../policy/decide";
import { consumeMatchingGrant, matchingGrants } from "../policy/grants";
import type { RiskLevel, RiskReason, RiskVerdict } from "../policy/risk";
import { traceStage } from "../../common/trace/stage";
import { checkAgentReason, splitAgentReason } from "./agent-reason";
import type { ActionOutcome, ActionRequest, Caller, PipelineDeps, PipelineSettings, StoredResult, SubmitOptions } from "./types";

export const PREPARED_ACTION_SCHEMA = "leasehold.action/1";
type Stage = "authenticate" | "resolve" | "validate" | "prepare" | "assess" | "decide" | "lease" | "dispatch";
type ActionRow = typeof actions.$inferSelect;

export const DEFAULT_SETTINGS: PipelineSettings = {
  approvalTtlMs: DEFAULT_APPROVAL_TTL_MS,
  fourEyes: false,
  jobGraceMs: 10 * 60_000,
  leaseTtlMs: DEFAULT_LEASE_TTL_MS,
  leaseIdleMs: DEFAULT_LEASE_IDLE_MS,
  idempotencyMaxKeys: 1000,
  idempotencyMaxAgeMs: 24 * 3600_000,
  approvalPollMs: 2000,
  maxHeldPerToken: 20,
  artifacts: DEFAULT_ARTIFACT_LIMITS,
};

/** Decoded bytes an action may carry inline as `{base64}`; larger input goes through artifact_upload. */
export const INLINE_ARTIFACT_MAX_BYTES = 2 * 1024 * 1024;

function settingsOf(deps: PipelineDeps): PipelineSettings {
  return { ...DEFAULT_SETTINGS, ...deps.settings };
}

export function callerKey(caller: Caller): string {
  return caller.kind === "token" ? `token:${caller.tokenId}` : `admin:${caller.adminId}`;
}

function callerActor(caller: Caller): `sha256:${string}` {
  return caller.kind === "token" ? hashActor("token", caller.tokenId) : hashActor("admin", caller.adminId);
}

function callerDescription(caller: Caller): string {
  const session = caller.sessionId === null ? "no session" : `session ${digestOf(caller.sessionId).slice(7, 15)}`;
  return caller.kind === "token" ? `agent token ${JSON.stringify(caller.label ?? caller.tokenId.slice(0, 8))} (${session})` : `admin ${JSON.stringify(caller.username)} (${session})`;
}

function asDb(tx: unknown): Database {
  return tx as Database;
}

interface Trace {
  deps: PipelineDeps;
  caller: Caller;
  operation: string | null;
  actionId: string | null;
  actionHash: string | null;
  hostId: string | null;
}

function refusalOf(error: unknown): LeaseholdError {
  if (isLeaseholdError(error)) return error;
  return new LeaseholdError("INTERNAL", "internal error", { tier: "hub", cause: error });
}

/** Seals refusal/1 for `error` at `stage`, then rethrows it (or the ledger's error if sealing fails). */
async function sealRefusal(trace: Trace, stage: Stage, error: unknown): Promise<never> {
  const refusal = refusalOf(error);
  if (refusal.code === "LEDGER_UNAVAILABLE") throw refusal;
  await appendEntry(trace.deps.handle.db, {
    type: "refusal/1",
    time: new Date(),
    action_id: trace.actionId,
    actor: callerActor(trace.caller),
    data: {
      stage,
      code: refusal.code,
      action_hash: trace.actionHash as `sha256:${string}` | null,
      operation: trace.operation,
      host_id: trace.hostId,
      reason_digest: digestOf(refusal.message),
    },
  });
  throw refusal;
}

async function step<T>(trace: Trace, stage: Stage, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    return sealRefusal(trace, stage, error);
  }
}

function hubRefusal(code: "FORBIDDEN" | "NOT_FOUND" | "INVALID_ARGUMENT" | "CAPABILITY_UNAVAILABLE" | "POLICY_REFUSED" | "IDEMPOTENCY_CONFLICT", message: string, extra: { hint?: string; details?: Record<string, unknown> } = {}): LeaseholdError {
  return new LeaseholdError(code, `${message} (refused by a hub policy check)`, { tier: "hub", ...extra });
}

/**
 * Runs one action through the pipeline. Resolves with the dispatched
 * outcome; every other result is a thrown LeaseholdError with a stable code
 * (APPROVAL_PENDING carries `details.action_id` for `resumeAction`).
 */
// eslint-disable-next-line max-lines-per-function -- the pipeline's order is the safety property (docs/design.md#pipeline): its steps stay in one place, in order
export async function submitAction(deps: PipelineDeps, caller: Caller, request: ActionRequest, options: SubmitOptions): Promise<ActionOutcome> {
  const db = deps.handle.db;
  const settings = settingsOf(deps);
  const trace: Trace = { deps, caller, operation: null, actionId: null, actionHash: null, hostId: null };
  // Chosen now so the bench's stage trace can follow the call from its start; recorded as the action's id only at 6 decide.
  const actionId = randomUUID();
  traceStage(actionId, "hub.start");

  // 1 scope — before the target or the arguments are looked at.
  const resolution = await step(trace, "resolve", () => {
    if (typeof request.operation !== "string" || !/^[a-z][a-z0-9_]{0,63}$/.test(request.operation)) {
      throw hubRefusal("NOT_FOUND", "unknown operation", { hint: "list_capabilities shows the operations this hub serves" });
    }
    trace.operation = request.operation;
    return deps.registry.resolveOperation(request.operation);
  });
  await step(trace, "authenticate", () => {
    if (caller.kind !== "token") return;
    if (caller.readOnly && resolution.operation.mutating) {
      // Invisible to read-only tokens: same answer whatever the arguments say.
      throw hubRefusal("FORBIDDEN", `${request.operation} changes hosts and is not available to read-only tokens`, { details: { read_only: true } });
    }
    if (caller.tools !== null && !caller.tools.includes(request.operation)) {
      throw hubRefusal("FORBIDDEN", `this token's scope does not cover ${request.operation}`);
    }
  });

  // 3 validate — the agent's reason (mutating operations) apart from the operation's own arguments.
  const split = splitAgentReason(resolution.operation, request.arguments);
  const agentReason = await step(trace, "validate", () => {
    const reason = checkAgentReason(split.reason);
    if (!reason.ok) throw hubRefusal("INVALID_ARGUMENT", `reason ${reason.message}`, { details: { field: "reason", path: "/reason" } });
    return reason.reason;
  });
  const args = await step(trace, "validate", () => {
    const checked = validateArguments(resolution.operation, split.rest);
    if (!checked.ok) {
      throw new LeaseholdError("INVALID_ARGUMENT", `invalid arguments for ${request.operation}: ${checked.issues.map((issue) => `${issue.path || "/"} ${issue.message}`).join("; ")}`, {
        tier: "hub",
        details: { issues: checked.issues },
      });
    }
    return checked.value as Record<string, unknown>;
  });

  // 2 resolve (continued): the target host, host scope, readiness.
  const host = await step(trace, "resolve", async () => {
    const name = args["host"];
    if (typeof name !== "string") throw hubRefusal("INVALID_ARGUMENT", `${request.operation} names no host`);
    // Its stored health comes with it, for the readiness check below (one read, not two).
    const [row] = await db
      .select({ id: hosts.id, name: hosts.name, health: hosts.health })
      .from(hosts)
      .where(and(eq(hosts.name, name), sql`${hosts.removedAt} is null`));
    if (row === undefined) throw hubRefusal("NOT_FOUND", `no enrolled host named ${JSON.stringify(name)}`, { hint: "hosts_list shows enrolled hosts" });
    return row;
  });
  trace.hostId = host.id;
  await step(trace, "authenticate", () => {
    if (caller.kind === "token" && caller.hosts !== null && !caller.hosts.includes(host.name)) {
      throw hubRefusal("FORBIDDEN", `this token's scope does not cover host ${host.name}`);
    }
  });
  await step(trace, "resolve", async () => {
    const ready = await deps.readiness.check({ manifest: resolution.manifest, operation: resolution.operation, host });
    if (!ready.ready && ready.unenforceable === true) {
      throw new LeaseholdError("UNENFORCEABLE", `capability ${resolution.manifest.id} cannot be enforced on ${host.name}: ${ready.reason}`, { tier: "hub", details: { host: host.name } });
    }
    if (!ready.ready) throw new LeaseholdError("CAPABILITY_UNAVAILABLE", `capability ${resolution.manifest.id} is not ready on ${host.name}: ${ready.reason}`, { tier: "hub", retryable: true });
  });

  // 4 prepare
  const prepared = await step(trace, "prepare", async () => {
    // Host paths and snapshots as the host's guest last reported them (docs/design.md#host-paths).
    const hostPaths = hostPathsOf(host.health);
    const resolved = await resolveArtifactArguments(db, caller, resolution.operation.input_schema, args, settings.artifacts);
    const preparedArguments = resolution.adapter.prepareArguments(resolution.operation, resolved);
    const sandboxRequest = resolution.adapter.sandboxRequest(resolution.operation, preparedArguments);
    // Arguments the guest will certainly refuse are refused before a person is asked (docs/design.md#prechecks).
    checkLabelsListed(host.name, sandboxRequest.mounts ?? [], args, hostPaths.host_paths);
    // Read per action (not cached), so a change by any hub process applies to the next action.
    const configuredEgress = resolution.manifest.sandbox.network === "none" ? null : await capabilityEgressConfiguration(db, resolution.manifest.id);
    const policy = compileSandboxPolicy({
      manifest: resolution.manifest,
      operation: resolution.operation.name,
      configuredEgress,
      // Token rows carry no sandbox limits yet; when they do, they join here as a scope.
      scopes: [],
      request: sandboxRequest,
      host: { name: host.name, hostPaths: hostPaths.host_paths },
    });
    checkSnapshotReference(host.name, preparedArguments, hostPaths.snapshots);
    const action = {
      schema: PREPARED_ACTION_SCHEMA,
      operation: resolution.operation.name,
      // A pinned worker bundle's digest is part of what is hashed and signed, so the guest runs
      // exactly those bytes; capabilities without a pin keep their action hashes unchanged.
      capability: { id: resolution.manifest.id, version: resolution.manifest.version, ...(resolution.manifest.worker_digest === undefined ? {} : { worker_digest: resolution.manifest.worker_digest }) },
      mutating: resolution.operation.mutating,
      host: { id: host.id, name: host.name },
      arguments: preparedArguments,
      policy,
      // The agent's reason is hashed and signed with what it explains; absent when none was given.
      ...(agentReason === undefined ? {} : { reason: agentReason }),
    };
    return { action, hash: canonicalDigest(action) };
  });
  trace.actionHash = prepared.hash;

  const key = typeof prepared.action.arguments["idempotency_key"] === "string" ? prepared.action.arguments["idempotency_key"] : null;
  if (key !== null) {
    const existing = await findByIdempotencyKey(db, callerKey(caller), key, settings);
    if (existing !== undefined) return replay(deps, trace, caller, existing, options);
  }

  // 5 assess
  const verdict = await step(trace, "assess", () =>
    assessActionRisk({ capability: resolution.manifest.id, operation: resolution.operation, prepared: prepared.action.arguments, customRules: deps.customRiskRules, mounts: prepared.action.policy.mounts }),
  );

  const path = decideCall({
    level: verdict.level,
    reasons: verdict.reasons,
    observe: caller.kind === "token" ? (caller.observe ?? "judged") : "judged",
    observeCapable: resolution.operation.observe_scope === true,
    // A hub-only argument (never sent to the worker), in the prepared arguments so action_hash covers it.
    writeLeaseRequested: prepared.action.arguments["lease"] === "write",
    writesHostPaths: rwLabels(prepared.action.policy).length > 0,
  });
  // A cwd missing from the host's last workspace listing is refused only where a person would be asked
  // (docs/design.md#prechecks): the listing can be older than a directory made on the host by hand, and
  // an action that runs at once is answered by the guest itself, from the workspace as it is.
  if (path !== "auto_allow" && path !== "observe_scope") await step(trace, "assess", () => checkCwdReported(db, host, prepared.action.arguments["cwd"]));
  const labels = rwLabels(prepared.action.policy);
  const mode = leaseModeFor(jobWritesWorkspace(resolution.adapter.writesWorkspace(resolution.operation, prepared.action.arguments), prepared.action.arguments, labels), verdict.level, path);

  // A grant use is spent only on an action that can take its leases now: when another session holds
  // the host exclusively (and this call needs it so) or a label this call writes, and a grant would
  // allow this call, it gets HOST_BUSY (retryable) and the use stays unspent, so retries against a
  // busy host cannot drain a grant. (A held call is still held: the host may be free by the time a
  // person decides.)
  if (path === "grant_or_hold" && (mode === "exclusive" || labels.length > 0)) {
    await step(trace, "lease", async () => {
      const holder = leaseHolderOf(caller);
      const busy = (mode === "exclusive" ? await exclusiveConflict(db, host.id, holder) : null) ?? (await labelConflict(db, host.id, labels, holder));
      if (busy === null) return;
      const grants = await matchingGrants(db, { tool: resolution.operation.name, host: host.name, risk: verdict.level, prepared: prepared.action.arguments });
      if (grants.length > 0) throw busy;
    });
  }

  traceStage(actionId, "hub.assessed");
  // 6 decide — action row, grant use, decision and approval request commit together; an allowed
  // read-only action's lease and dispatch (8, 9) join that transaction (dispatchWithDecision).
  let dispatched: ActionOutcome | null = null;
  const fastPath =
    mode === "observe"
      ? async (tx: Database, row: ActionRow) => {
          dispatched = await dispatchWithDecision(deps, caller, tx, row);
        }
      : undefined;
  const decided = await step(trace, "decide", () => decide(deps, caller, request, resolution, host, prepared, verdict, { path, mode }, key, actionId, fastPath));
  if (decided === "duplicate") {
    const existing = key === null ? undefined : await findByIdempotencyKey(db, callerKey(caller), key, settings);
    if (existing === undefined) throw new LeaseholdError("INTERNAL", "idempotency key vanished", { tier: "hub" });
    return replay(deps, trace, caller, existing, options);
  }
  trace.actionId = actionId;
  traceStage(actionId, "hub.decided");
  if (decided.state === "held") announceHeld(deps, decided, host.name);
  const queued = dispatched as ActionOutcome | null;
  if (queued !== null) {
    traceStage(actionId, "hub.leased");
    // Other hub processes were told at commit (recordDispatch); this one's guest long-polls now.
    wake(jobTopic(host.id));
    traceStage(actionId, "hub.dispatched");
    return awaitCompletion(deps, queued, options);
  }
  return proceed(deps, trace, caller, decided, options, false);
}

function artifactOwnerOf(caller: Caller): ArtifactOwner {
  return caller.kind === "token" ? { kind: "token", id: caller.tokenId } : { kind: "admin", id: caller.adminId };
}

/**
 * Contract item 1: every argument the operation's schema marks `artifact:
 * true` becomes `{sha256, bytes}` of a stored artifact before action_hash is
 * computed — `{base64}` (canonical, ≤ 2 MiB decoded) is stored as this
 * caller's upload, `{sha256}` must be a complete upload of this caller.
 * Driven by the schema alone: no operation is named here.
 */
async function resolveArtifactArguments(db: Database, caller: Caller, schema: unknown, args: Record<string, unknown>, limits: ArtifactLimits): Promise<Record<string, unknown>> {
  const names = artifactArgumentNames(schema);
  if (names.length === 0) return args;
  const resolved = { ...args };
  for (const name of names) {
    const value = args[name] as { base64?: unknown; sha256?: unknown } | undefined;
    if (value === undefined) continue;
    let ref: ArtifactRef;
    if (typeof value.base64 === "string") {
      const decoded = Buffer.from(value.base64, "base64");
      if (decoded.toString("base64") !== value.base64 || decoded.length === 0) {
        throw hubRefusal("INVALID_ARGUMENT", `${name}.base64 is not canonical, non-empty base64`, { details: { field: `/${name}/base64` } });
      }
      if (decoded.length > INLINE_ARTIFACT_MAX_BYTES) {
        throw hubRefusal("INVALID_ARGUMENT", `${name}.base64 is ${decoded.length} bytes decoded; at most ${INLINE_ARTIFACT_MAX_BYTES} bytes may be passed inline`, {
          hint: "upload it with artifact_upload (chunked, resumable), then pass {\"sha256\": \"<its SHA-256>\"}",
          details: { field: `/${name}/base64`, bytes: decoded.length, limit: INLINE_ARTIFACT_MAX_BYTES },
        });
      }
      ref = await storeArtifact(db, artifactOwnerOf(caller), decoded, limits);
    } else if (typeof value.sha256 === "string") {
      ref = await claimArtifact(db, artifactOwnerOf(caller), value.sha256, limits);
    } else {
      throw hubRefusal("INVALID_ARGUMENT", `${name} must give base64 or sha256`);
    }
    resolved[name] = { sha256: ref.sha256, bytes: ref.bytes };
  }
  return resolved;
}

/** Tells `deps.onHeld` (the webhook, Web Push) about a newly held action, in the background: never in the action's way. */
function announceHeld(deps: PipelineDeps, row: ActionRow, hostName: string): void {
  const onHeld = deps.onHeld;
  const approvalId = (row.result as StoredResult | null)?.approval_id;
  if (onHeld === undefined || typeof approvalId !== "string") return;
  void getApproval(deps.handle.db, approvalId)
    .then((approval) => {
      if (approval !== undefined) onHeld({ approvalId, actionId: row.id, host: hostName, operation: row.operation, risk: approval.riskLevel, deadline: approval.deadline });
    })
    .catch(() => undefined);
}

// eslint-disable-next-line max-lines-per-function -- grant use or hold, with the approval row, in one transaction: split, the transaction's scope would be harder to see
async function decide(
  deps: PipelineDeps,
  caller: Caller,
  request: ActionRequest,
  resolution: OperationResolution,
  host: { id: string; name: string },
  prepared: { action: { arguments: Record<string, unknown>; policy: unknown; reason?: string }; hash: string },
  verdict: RiskVerdict,
  decision: { path: DecisionPath; mode: LeaseMode },
  key: string | null,
  actionId: string,
  onAllowed?: (tx: Database, row: ActionRow) => Promise<void>,
): Promise<ActionRow | "duplicate"> {
  const settings = settingsOf(deps);
  const db = deps.handle.db;
  return db.transaction(async (txRaw) => {
    const tx = asDb(txRaw);
    // The fast path takes locks in the order revocation does — the token row, then (for a new
    // lease) the host row — so the two cannot deadlock; the token is re-read FOR SHARE first.
    if (onAllowed !== undefined && caller.kind === "token") await assertSubmitterActive(tx, { id: actionId, tokenId: caller.tokenId }, tx);
    const { path } = decision;
    // An auto-allowed (or observe-scope) action's decision is known before its row exists (no grant,
    // no approval): the row is inserted decided, one write instead of an insert and an update.
    // Nothing outside this transaction sees the row before decision/1 is appended with it.
    const known: StoredResult | null = path === "auto_allow" || path === "observe_scope" ? { decision: path, grant_id: null, approval_id: null } : null;
    const [inserted] = await tx
      .insert(actions)
      .values({
        id: actionId,
        channel: request.channel,
        callerKey: callerKey(caller),
        sessionId: caller.sessionId,
        tokenId: caller.kind === "token" ? caller.tokenId : null,
        adminId: caller.kind === "admin" ? caller.adminId : null,
        operation: resolution.operation.name,
        capabilityId: resolution.manifest.id,
        hostId: host.id,
        actionHash: prepared.hash,
        prepared: prepared.action,
        riskLevel: verdict.level,
        riskReasons: verdict.reasons,
        state: known === null ? "deciding" : "allowed",
        ...(known === null ? {} : { result: known }),
        idempotencyKey: key,
      })
      .onConflictDoNothing()
      .returning();
    if (inserted === undefined) return "duplicate";

    const grant =
      path === "grant_or_hold"
        ? await consumeMatchingGrant(tx, { tool: resolution.operation.name, host: host.name, risk: verdict.level, prepared: prepared.action.arguments, actor: callerActor(caller), actionId })
        : null;
    const outcome = path === "auto_allow" || path === "observe_scope" ? path : grant !== null ? "grant" : "hold";
    if (outcome === "hold" && caller.kind === "token") await assertHeldBelowCap(tx, caller.tokenId, settings.maxHeldPerToken);
    await appendEntry(tx, {
      type: "decision/1",
      time: new Date(),
      action_id: actionId,
      actor: callerActor(caller),
      data: {
        action_hash: prepared.hash as `sha256:${string}`,
        operation: resolution.operation.name,
        capability: resolution.manifest.id,
        host_id: host.id,
        channel: request.channel,
        risk: verdict.level,
        outcome,
        reasons_digest: digestOfJson(verdict.reasons),
        policy_digest: digestOfJson(prepared.action.policy),
        grant_id: grant?.id ?? null,
        lease: decision.mode,
        ...(prepared.action.reason === undefined ? {} : { agent_reason_digest: digestOf(prepared.action.reason) }),
      },
    });
    const approval =
      outcome === "hold"
        ? await insertApproval(tx, {
            actionId,
            actionHash: prepared.hash,
            requestedBy: caller.kind === "admin" ? caller.adminId : await tokenOwner(tx, caller.tokenId),
            riskLevel: verdict.level,
            deadline: new Date(Date.now() + settings.approvalTtlMs),
          })
        : null;
    const result: StoredResult = { decision: outcome, grant_id: grant?.id ?? null, approval_id: approval?.id ?? null };
    const [row] =
      known !== null
        ? [inserted]
        : await tx
            .update(actions)
            .set({ state: outcome === "hold" ? "held" : "allowed", result, updatedAt: new Date() })
            .where(eq(actions.id, actionId))
            .returning();
    if (key !== null) await pruneIdempotencyKeys(tx, callerKey(caller), settings);
    if (row === undefined) throw new LeaseholdError("INTERNAL", "action update returned no row", { tier: "database" });
    if (onAllowed !== undefined && row.state === "allowed") await onAllowed(tx, row);
    return row;
  });
}

/**
 * Per-token cap on actions held for a person (~280 held requests
 * from one token buried another agent's request). Runs inside the decision
 * transaction after locking the token's row, so concurrent holds of one token
 * are counted one after another; the refusal rolls the action back and is
 * sealed as refusal/1 at stage `decide`.
 */
async function assertHeldBelowCap(tx: Database, tokenId: string, cap: number): Promise<void> {
  // NO KEY UPDATE: serialises the holds of one token, yet stays compatible with the KEY SHARE
  // lock the action row's foreign key already took (FOR UPDATE here would deadlock two holders).
  await tx.select({ id: agentTokens.id }).from(agentTokens).where(eq(agentTokens.id, tokenId)).for("no key update");
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(approvals)
    .innerJoin(actions, eq(actions.id, approvals.actionId))
    .where(and(eq(actions.tokenId, tokenId), eq(approvals.state, "pending"), sql`${approvals.deadline} > now()`));
  const held = Number(row?.n ?? 0);
  if (held >= cap) {
    throw new LeaseholdError("RATE_LIMITED", `this token already has ${held} actions waiting for a person's approval (the limit is ${cap}); nothing was held or run (refused by a hub check)`, {
      tier: "hub",
      retryable: true,
      hint: "wait for the held actions to be decided or to expire (approval_wait shows each), then ask again",
      details: { held, limit: cap },
    });
  }
}

async function tokenOwner(db: Database, tokenId: string): Promise<string> {
  const [row] = await db.select({ createdBy: agentTokens.createdBy }).from(agentTokens).where(eq(agentTokens.id, tokenId));
  return row?.createdBy ?? `token:${tokenId}`;
}

async function findByIdempotencyKey(db: Database, caller: string, key: string, settings: PipelineSettings): Promise<ActionRow | undefined> {
  const [row] = await db
    .select()
    .from(actions)
    .where(and(eq(actions.callerKey, caller), eq(actions.idempotencyKey, key), sql`${actions.createdAt} > now() - ${settings.idempotencyMaxAgeMs} * interval '1 millisecond'`));
  return row;
}

/** Keys are bounded per caller in number and age: older keys are forgotten (the action rows stay). */
async function pruneIdempotencyKeys(tx: Database, caller: string, settings: PipelineSettings): Promise<void> {
  await tx.execute(sql`
    update actions set idempotency_key = null
    where caller_key = ${caller} and idempotency_key is not null
      and (created_at <= now() - ${settings.idempotencyMaxAgeMs} * interval '1 millisecond'
           or id not in (select id from actions where caller_key = ${caller} and idempotency_key is not null
                         order by created_at desc, id limit ${settings.idempotencyMaxKeys}))`);
}

async function replay(deps: PipelineDeps, trace: Trace, caller: Caller, existing: ActionRow, options: SubmitOptions): Promise<ActionOutcome> {
  if (existing.actionHash !== trace.actionHash) {
    return sealRefusal(
      trace,
      "prepare",
      hubRefusal("IDEMPOTENCY_CONFLICT", "this idempotency key was already used with different arguments", {
        hint: "use a new idempotency_key for a different request",
        details: { action_id: existing.id },
      }),
    );
  }
  trace.actionId = existing.id;
  return proceed(deps, trace, caller, existing, options, true);
}

function storedOf(row: ActionRow): StoredResult {
  return (row.result ?? { decision: "hold", grant_id: null, approval_id: null }) as StoredResult;
}

function errorFromPayload(payload: ErrorPayload): LeaseholdError {
  return new LeaseholdError(payload.code, payload.message, { retryable: payload.retryable, hint: payload.hint, tier: payload.tier, details: payload.details });
}

/**
 * Takes an action from wherever it stands to dispatched (or to its final
 * error): held → wait for the decision; allowed/approved → lease → dispatch;
 * dispatched → the stored outcome; denied/expired → the stored error.
 */
async function proceed(deps: PipelineDeps, trace: Trace, caller: Caller, row: ActionRow, options: SubmitOptions, replayed: boolean): Promise<ActionOutcome> {
  return awaitCompletion(deps, await proceedToDispatch(deps, trace, caller, row, options, replayed), options);
}

/** 10–11 execute, scrub, seal happen on the host; the hub waits for the sealed result. */
function awaitCompletion(deps: PipelineDeps, outcome: ActionOutcome, options: SubmitOptions): Promise<ActionOutcome> {
  if (deps.completion === undefined) return Promise.resolve(outcome);
  // Told before the wait: a caller that loses this process from here on still knows the action to ask about.
  if (outcome.status === "dispatched") options.onProgress?.({ stage: "dispatched", actionId: outcome.action_id, host: outcome.host });
  return deps.completion.wait(outcome, { signal: options.signal, onProgress: options.onProgress });
}

async function proceedToDispatch(deps: PipelineDeps, trace: Trace, caller: Caller, row: ActionRow, options: SubmitOptions, replayed: boolean): Promise<ActionOutcome> {
  const db = deps.handle.db;
  trace.actionId = row.id;
  trace.actionHash = row.actionHash;
  trace.hostId = row.hostId;
  trace.operation = row.operation;
  let stored = storedOf(row);
  if (stored.outcome !== undefined) return { ...stored.outcome, replayed: true };
  if (stored.error !== undefined) throw errorFromPayload(stored.error);

  let state = row.state;
  if (state === "held" && stored.approval_id !== null) {
    const approvalId = stored.approval_id;
    const decided = await waitForDecision(deps.handle, stored.approval_id, {
      waitMs: options.waitMs,
      signal: options.signal,
      pollMs: settingsOf(deps).approvalPollMs,
      onProgress: options.onProgress === undefined ? undefined : (p) => options.onProgress?.({ stage: "approval", actionId: row.id, approvalId: approvalId, waitedMs: p.waitedMs, deadline: p.deadline.toISOString() }),
    });
    state = decided.state;
    if (decided.state === "pending") {
      throw new LeaseholdError("APPROVAL_PENDING", `${row.operation} on this host is held for a person's approval (risk ${row.riskLevel}) until ${decided.deadline.toISOString()}`, {
        tier: "hub",
        retryable: true,
        hint: "wait with approval_wait (or repeat the call with the same idempotency_key); an admin approves or denies it in the console or CLI",
        details: { action_id: row.id, approval_id: decided.id, risk: row.riskLevel, reasons: row.riskReasons, deadline: decided.deadline.toISOString() },
      });
    }
  }
  if (state === "denied" || state === "expired") {
    const approval = stored.approval_id === null ? undefined : await getApproval(db, stored.approval_id);
    const error =
      state === "denied"
        ? new LeaseholdError("APPROVAL_DENIED", `an admin denied ${row.operation}${approval?.reason ? `: ${approval.reason}` : ""}`, { tier: "hub", details: { action_id: row.id } })
        : new LeaseholdError("APPROVAL_EXPIRED", `nobody decided on ${row.operation} before its deadline${approval ? ` ${approval.deadline.toISOString()}` : ""}; it was denied`, {
            tier: "hub",
            details: { action_id: row.id },
          });
    await db.update(actions).set({ result: { ...stored, error: error.toPayload() }, updatedAt: new Date() }).where(eq(actions.id, row.id));
    throw error;
  }
  if (state !== "allowed" && state !== "approved") {
    // A concurrent caller is dispatching, or dispatched, this action: return what it stored.
    const [again] = await db.select().from(actions).where(eq(actions.id, row.id));
    stored = again === undefined ? stored : storedOf(again);
    if (stored.outcome !== undefined) return { ...stored.outcome, replayed: true };
    // Cancelled while it waited (server/actions/cancel.ts): the stored CANCELLED.
    if (stored.error !== undefined) throw errorFromPayload(stored.error);
    throw new LeaseholdError("APPROVAL_PENDING", `${row.operation} is still being processed`, { tier: "hub", retryable: true, details: { action_id: row.id } });
  }

  // The submitting token must still be valid now, not only when it asked (an action
  // approved after its token's revocation ran). Checked again inside the dispatch transaction.
  await step(trace, "dispatch", () => assertSubmitterActive(db, row));

  // 8 lease
  const prepared = row.prepared as { operation: string; mutating: boolean; host: { id: string; name: string }; arguments: Record<string, unknown>; policy: { mounts?: CompiledMount[] }; capability: { id: string } };
  // The mode this action needs (a holder's exclusive lease may cover it): it is what the job carries.
  const mode = leaseModeFor(writesWorkspace(deps, prepared), row.riskLevel as RiskLevel, stored.decision === "observe_scope" ? "observe_scope" : undefined);
  const timings = { ttlMs: settingsOf(deps).leaseTtlMs, idleMs: settingsOf(deps).leaseIdleMs };
  const lease = await step(trace, "lease", () => acquireLease(db, { hostId: prepared.host.id, mode, holder: leaseHolderOf(caller), timings, actionId: row.id }));
  // Each rw host path label is this holder's alone while the job may write it; a label another holder
  // has gives HOST_BUSY, and the host lease this call took for nothing is given back.
  const labels = rwLabels(prepared.policy);
  if (labels.length > 0) {
    await step(trace, "lease", async () => {
      try {
        await acquireLabelLeases(db, { hostId: prepared.host.id, labels, holder: leaseHolderOf(caller), timings, actionId: row.id });
      } catch (error) {
        if (lease.acquired) await releaseLease(db, lease.lease.id, leaseHolderOf(caller));
        throw error;
      }
    });
  }

  traceStage(row.id, "hub.leased");
  // 9 dispatch
  try {
    const dispatched = await step(trace, "dispatch", () => dispatch(deps, caller, row, stored, { id: lease.lease.id, mode }, replayed));
    traceStage(row.id, "hub.dispatched");
    return dispatched;
  } catch (error) {
    // Revoked or cancelled between the check above and the dispatch: give back the lease taken for nothing.
    if (lease.acquired && isLeaseholdError(error) && (error.details?.["token_revoked"] === true || error.code === "CANCELLED")) await releaseLease(db, lease.lease.id, leaseHolderOf(caller));
    throw error;
  }
}

/**
 * Refuses (FORBIDDEN, `details.token_revoked`) an action whose submitting
 * token is revoked or expired. `tx` given: reads the token row FOR SHARE, so
 * a revocation (which locks the row FOR UPDATE) either commits first and is
 * seen here, or waits until this dispatch committed and then cancels its job.
 */
async function assertSubmitterActive(db: Database, row: Pick<ActionRow, "id" | "tokenId">, tx?: Database): Promise<void> {
  if (row.tokenId === null) return;
  const query = (tx ?? db).select({ revokedAt: agentTokens.revokedAt, expiresAt: agentTokens.expiresAt }).from(agentTokens).where(eq(agentTokens.id, row.tokenId));
  const [token] = tx === undefined ? await query : await query.for("share");
  const ended = token === undefined || token.revokedAt !== null || (token.expiresAt !== null && token.expiresAt.getTime() <= Date.now());
  if (ended) {
    throw new LeaseholdError("FORBIDDEN", `${token?.revokedAt ? TOKEN_REVOKED_MESSAGE : "the agent token that submitted this action has expired; it does not run (refused by a hub check)"}`, {
      tier: "hub",
      details: { action_id: row.id, token_revoked: true },
    });
  }
}

/**
 * docs/design.md#pipeline, step 8 (Lease): a mutating action with risk above
 * `read_only` needs the host's exclusive lease; other actions share. An action is read-only when its operation is, or
 * when its assessed risk is `read_only` (`ls` through run_command): such an
 * action takes a shared `observe` lease, so one session's reads never make
 * another session's calls HOST_BUSY. The lease mode travels in the signed
 * job, and the guest gives an observe job no write access to the workspace —
 * so an assessment that missed a write is stopped by file ownership in the
 * kernel, not trusted. An `observe_scope` decision takes the observe lease
 * whatever the risk: that is the whole of what its caller was allowed.
 */
function leaseHolderOf(caller: Caller): LeaseHolder {
  return { ownerKind: caller.kind, ownerId: caller.kind === "token" ? caller.tokenId : caller.adminId, sessionId: caller.sessionId, description: callerDescription(caller) };
}

export function leaseModeFor(writesWorkspace: boolean, risk: RiskLevel, path?: DecisionPath): LeaseMode {
  if (path === "observe_scope") return "observe";
  return writesWorkspace && risk !== "read_only" ? "exclusive" : "observe";
}

type PreparedForLease = { operation: string; mutating: boolean; arguments: Record<string, unknown>; policy: { mounts?: readonly CompiledMount[] } };

/** Whether a stored prepared action may write the workspace (its adapter says; a mutating operation does unless it writes only labels). */
function writesWorkspace(deps: PipelineDeps, prepared: PreparedForLease): boolean {
  const resolution = deps.registry.resolveOperation(prepared.operation);
  return prepared.mutating && jobWritesWorkspace(resolution.adapter.writesWorkspace(resolution.operation, prepared.arguments), prepared.arguments, rwLabels(prepared.policy));
}

/**
 * docs/design.md#leases: an operation that mounts host path labels `rw`
 * writes those labels, under their label leases, and gets the workspace
 * read-only (the observe lease's bind, enforced by the kernel) unless the
 * call asks `lease: "write"` — so a label write does not take the whole
 * host from every other session.
 */
function jobWritesWorkspace(adapterSays: boolean, args: Record<string, unknown>, labels: readonly string[]): boolean {
  return adapterSays && (labels.length === 0 || args["lease"] === "write");
}

/** The host path labels a compiled policy mounts read-write: each needs its label lease (docs/design.md#leases). */
export function rwLabels(policy: { mounts?: readonly CompiledMount[] }): string[] {
  return (policy.mounts ?? []).filter((mount) => mount.mode === "rw").map((mount) => mount.label);
}

/** What the caller is told about the lease its action ran under, and why that lease. */
function sandboxOf(mode: LeaseMode, decision: StoredResult["decision"]): NonNullable<ActionOutcome["sandbox"]> {
  if (mode === "exclusive") return { lease: "exclusive", reason: "write" };
  return { lease: "observe", reason: decision === "observe_scope" ? "observe_scope" : "read_only" };
}

async function dispatch(deps: PipelineDeps, caller: Caller, row: ActionRow, stored: StoredResult, lease: { id: string; mode: LeaseMode }, replayed: boolean): Promise<ActionOutcome> {
  const db = deps.handle.db;
  const job = signedJobFor(deps, row, stored, lease, replayed);
  if (stored.approval_id !== null) {
    const approval = await getApproval(db, stored.approval_id);
    if (approval === undefined || approval.state !== "approved" || approval.actionHash !== job.document.action_hash) {
      throw hubRefusal("POLICY_REFUSED", "the approval does not cover this exact action (action_hash differs); not dispatched");
    }
  }
  const result = await db.transaction((txRaw) => recordDispatch(db, asDb(txRaw), caller, row, stored, job));
  if (result === "raced") {
    const [again] = await db.select().from(actions).where(eq(actions.id, row.id));
    const outcomeStored = again === undefined ? undefined : storedOf(again).outcome;
    const errorStored = again === undefined ? undefined : storedOf(again).error;
    if (outcomeStored === undefined) {
      // Cancelled between its approval and this dispatch: the lease taken for it is given back by the caller's catch.
      if (errorStored !== undefined) throw errorFromPayload(errorStored);
      throw new LeaseholdError("INTERNAL", "action changed state during dispatch", { tier: "hub" });
    }
    return { ...outcomeStored, replayed: true };
  }
  wake(jobTopic(job.document.host_id));
  return job.outcome;
}

interface SignedJobFor {
  document: JobDocument;
  signature: string;
  digest: `sha256:${string}`;
  deadline: Date;
  outcome: ActionOutcome;
}

/** The hub-signed job for `row` under `lease`, and the outcome its caller gets once it is queued. */
function signedJobFor(deps: PipelineDeps, row: ActionRow, stored: StoredResult, lease: { id: string; mode: LeaseMode }, replayed: boolean): SignedJobFor {
  // The approval covers exactly what runs: recompute the hash from what is stored.
  const recomputed = canonicalDigest(row.prepared);
  if (recomputed !== row.actionHash) throw hubRefusal("POLICY_REFUSED", "the prepared action no longer matches its action_hash; not dispatched");
  const prepared = row.prepared as { operation: string; host: { id: string; name: string }; arguments: Record<string, unknown>; policy: Parameters<typeof signJob>[0]["payload"]["sandbox"] };
  const resolution = deps.registry.resolveOperation(prepared.operation);
  const payload = resolution.adapter.jobPayload({ manifest: resolution.manifest, operation: resolution.operation, prepared: prepared.arguments, policy: prepared.policy });
  const jobId = randomUUID();
  const deadline = new Date(Date.now() + prepared.policy.timeout_s * 1000 + settingsOf(deps).jobGraceMs);
  const document: JobDocument = {
    schema: JOB_SCHEMA,
    job_id: jobId,
    action_id: row.id,
    action_hash: row.actionHash,
    host_id: prepared.host.id,
    action: row.prepared as Record<string, unknown>,
    payload,
    deadline: deadline.toISOString(),
    key_id: deps.jobKey.keyId,
    lease,
  };
  const signed = signJob(document, deps.jobKey);
  const outcome: ActionOutcome = {
    status: "dispatched",
    action_id: row.id,
    action_hash: row.actionHash,
    operation: row.operation,
    host: prepared.host.name,
    risk: { level: row.riskLevel as RiskLevel, reasons: row.riskReasons as RiskReason[] },
    decision: stored.decision === "hold" ? "approved" : stored.decision,
    sandbox: sandboxOf(lease.mode, stored.decision),
    grant_id: stored.grant_id,
    approval_id: stored.approval_id,
    lease_id: lease.id,
    job: { id: jobId, deadline: deadline.toISOString() },
    replayed,
  };
  return { document, signature: signed.signature, digest: signed.digest, deadline, outcome };
}

/**
 * Queues the signed job inside `tx`: the submitting token re-checked FOR
 * SHARE (a revocation commits first and is seen, or waits for this and then
 * cancels the job), the action moved to dispatched, dispatch/1 sealed, the
 * job row inserted. "raced" when another caller dispatched the action first.
 */
async function recordDispatch(
  db: Database,
  tx: Database,
  caller: Caller,
  row: ActionRow,
  stored: StoredResult,
  job: SignedJobFor,
  // The fast path read the token FOR SHARE at the start of this same transaction: it is locked
  // until the commit, so a second read could only say the same.
  submitterLocked = false,
): Promise<"dispatched" | "raced"> {
  if (!submitterLocked) await assertSubmitterActive(tx, row, tx);
  const [claimed] = await tx
    .update(actions)
    .set({ state: "dispatched", result: { ...stored, outcome: { ...job.outcome, replayed: false } }, updatedAt: new Date() })
    .where(and(eq(actions.id, row.id), inArray(actions.state, ["allowed", "approved"])))
    .returning({ id: actions.id });
  if (claimed === undefined) return "raced";
  await appendEntry(tx, {
    type: "dispatch/1",
    time: new Date(),
    action_id: row.id,
    actor: callerActor(caller),
    data: { action_hash: row.actionHash as `sha256:${string}`, job_id: job.document.job_id, host_id: job.document.host_id, job_digest: job.digest, deadline: job.deadline.toISOString() },
  });
  await tx.insert(jobs).values({ id: job.document.job_id, actionId: row.id, hostId: job.document.host_id, payload: job.document, signature: job.signature, state: "queued", deadline: job.deadline });
  await notifyOthersAtCommit(db, tx, jobTopic(job.document.host_id));
  return "dispatched";
}

/**
 * The read-only fast path: an action decided allowed (auto-allow
 * or a grant) that needs only an observe lease takes the lease and is
 * dispatched inside the transaction that records its decision, so decision/1,
 * lease/1 (when a lease is new) and dispatch/1 commit with the action and job
 * rows in ONE commit instead of three. Nothing runs before that commit, so
 * each step is still sealed before the next one runs; if any part fails, none
 * of it happened (the refusal is sealed at stage `decide`, with no action).
 * An exclusive lease keeps its own step: HOST_BUSY must not undo a decision.
 */
async function dispatchWithDecision(deps: PipelineDeps, caller: Caller, tx: Database, row: ActionRow): Promise<ActionOutcome> {
  const stored = storedOf(row);
  const prepared = row.prepared as { host: { id: string } };
  const settings = settingsOf(deps);
  const lease = await acquireLeaseInTransaction(tx, {
    hostId: prepared.host.id,
    mode: "observe",
    holder: leaseHolderOf(caller),
    timings: { ttlMs: settings.leaseTtlMs, idleMs: settings.leaseIdleMs },
    actionId: row.id,
  });
  // A grant-allowed write to a host path label only: its label lease joins the same commit.
  await acquireLabelLeasesInTransaction(tx, {
    hostId: prepared.host.id,
    labels: rwLabels((row.prepared as { policy: { mounts?: CompiledMount[] } }).policy),
    holder: leaseHolderOf(caller),
    timings: { ttlMs: settings.leaseTtlMs, idleMs: settings.leaseIdleMs },
    actionId: row.id,
  });
  const job = signedJobFor(deps, row, stored, { id: lease.lease.id, mode: "observe" }, false);
  if ((await recordDispatch(deps.handle.db, tx, caller, row, stored, job, true)) === "raced") throw new LeaseholdError("INTERNAL", "an action decided in this transaction was dispatched by another", { tier: "hub" });
  return job.outcome;
}

/**
 * `approval_wait`: continue a held action the caller submitted earlier.
 * Only the caller who submitted it may continue it.
 */
export async function resumeAction(deps: PipelineDeps, caller: Caller, actionId: string, options: SubmitOptions): Promise<ActionOutcome> {
  const db = deps.handle.db;
  const row = /^[0-9a-f-]{36}$/i.test(actionId) ? (await db.select().from(actions).where(eq(actions.id, actionId)))[0] : undefined;
  if (row === undefined || row.callerKey !== callerKey(caller)) {
    throw new LeaseholdError("NOT_FOUND", `no action ${actionId} of yours`, { tier: "hub" });
  }
  const trace: Trace = { deps, caller, operation: row.operation, actionId: row.id, actionHash: row.actionHash, hostId: row.hostId };
  return proceed(deps, trace, caller, row, options, false);
}

/** The pending approval id of an action, for callers that show it. */
export async function approvalOfAction(db: Database, actionId: string): Promise<string | null> {
  const [row] = await db.select({ id: approvals.id }).from(approvals).where(eq(approvals.actionId, actionId));
  return row?.id ?? null;
}

/**
 * The caller an action was submitted by, rebuilt from its row for work done
 * on its behalf when nobody waits (an approved action dispatched by the
 * housekeeping of any hub process). Only what dispatch uses is filled in:
 * who holds the lease, who the ledger names; scope was checked at submission.
 */
async function submitterOf(db: Database, row: ActionRow): Promise<Caller | null> {
  if (row.tokenId !== null) {
    const [token] = await db.select({ name: agentTokens.name }).from(agentTokens).where(eq(agentTokens.id, row.tokenId));
    return { kind: "token", tokenId: row.tokenId, readOnly: false, tools: null, hosts: null, sessionId: row.sessionId, ...(token === undefined ? {} : { label: token.name }) };
  }
  if (row.adminId !== null) {
    const [admin] = await db.select({ username: adminUsers.username }).from(adminUsers).where(eq(adminUsers.id, row.adminId));
    return { kind: "admin", adminId: row.adminId, username: admin?.username ?? "unknown", sessionId: row.sessionId };
  }
  return null;
}

/**
 * Dispatches an approved action that no caller is taking to dispatch —
 * its waiter's process died, or nobody called `approval_wait` — exactly as
 * its waiter would have (lease, the approval checked against action_hash,
 * dispatch/1 and the job in one transaction, conditional on the action still
 * being approved, so a racing waiter and this dispatch queue one job).
 * "busy": another session holds the host exclusively; left approved for a
 * later pass, with nothing sealed. A refusal that cannot pass later (the
 * submitting token revoked, the action changed) is sealed by the pipeline's
 * step and stored as the action's error, so a later `approval_wait` answers
 * it and no pass tries again.
 */
export async function dispatchApprovedAction(deps: PipelineDeps, actionId: string): Promise<"dispatched" | "busy" | "skipped"> {
  const db = deps.handle.db;
  const [row] = await db.select().from(actions).where(eq(actions.id, actionId));
  if (row === undefined || row.state !== "approved") return "skipped";
  const caller = await submitterOf(db, row);
  if (caller === null) return "skipped";
  const prepared = row.prepared as PreparedForLease & { host: { id: string } };
  const stored = storedOf(row);
  if (leaseModeFor(writesWorkspace(deps, prepared), row.riskLevel as RiskLevel, stored.decision === "observe_scope" ? "observe_scope" : undefined) === "exclusive") {
    if ((await exclusiveConflict(db, prepared.host.id, leaseHolderOf(caller))) !== null) return "busy";
  }
  if ((await labelConflict(db, prepared.host.id, rwLabels(prepared.policy), leaseHolderOf(caller))) !== null) return "busy";
  const trace: Trace = { deps, caller, operation: row.operation, actionId: row.id, actionHash: row.actionHash, hostId: row.hostId };
  try {
    const outcome = await proceedToDispatch(deps, trace, caller, row, { waitMs: 0 }, false);
    // A racer (its waiter, another process) dispatched it first: this call queued nothing.
    return outcome.replayed ? "skipped" : "dispatched";
  } catch (error) {
    if (isLeaseholdError(error) && error.retryable) return "busy";
    const payload = refusalOf(error).toPayload();
    await db
      .update(actions)
      .set({ state: "failed", result: sql`coalesce(${actions.result}, '{}'::jsonb) || jsonb_build_object('error', ${JSON.stringify(payload)}::jsonb)`, updatedAt: new Date() })
      .where(and(eq(actions.id, row.id), eq(actions.state, "approved")));
    await announce(db, actionTopic(row.id));
    return "skipped";
  }
}

/**
 * Approved actions whose approval was decided more than `graceMs` ago and
 * that are still not dispatched: a live waiter dispatches within
 * milliseconds of the decision, so these are the ones nobody is taking.
 * Bounded by the approvals index (state, deadline): an approval is decided
 * before its deadline, and one decided more than `lookBackMs` ago is not
 * looked at again.
 */
export async function approvedUndispatched(db: Database, options: { graceMs: number; lookBackMs: number; limit: number }): Promise<string[]> {
  const rows = await db
    .select({ id: actions.id })
    .from(approvals)
    .innerJoin(actions, eq(actions.id, approvals.actionId))
    .where(
      and(
        eq(approvals.state, "approved"),
        sql`${approvals.deadline} > now() - ${options.lookBackMs} * interval '1 millisecond'`,
        sql`${approvals.decidedAt} < now() - ${options.graceMs} * interval '1 millisecond'`,
        eq(actions.state, "approved"),
      ),
    )
    .limit(options.limit);
  return rows.map((r) => r.id);
}
