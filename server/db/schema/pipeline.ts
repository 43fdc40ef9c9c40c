// The action pipeline
import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt } from "./columns";
import { adminUsers } from "./admins";
import { agentTokens } from "./agents";
import { hosts } from "./hosts";

export const actions = pgTable(
  "actions",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    channel: text("channel").notNull(),
    /** "token:<id>" or "admin:<id>": whose idempotency keys and sessions these are. */
    callerKey: text("caller_key").notNull(),
    sessionId: text("session_id"),
    tokenId: uuid("token_id").references(() => agentTokens.id),
    adminId: uuid("admin_id").references(() => adminUsers.id),
    operation: text("operation").notNull(),
    capabilityId: text("capability_id").notNull(),
    hostId: uuid("host_id").references(() => hosts.id),
    actionHash: text("action_hash").notNull(),
    prepared: jsonb("prepared").notNull(),
    riskLevel: text("risk_level").notNull(),
    riskReasons: jsonb("risk_reasons").notNull().default([]),
    state: text("state").notNull(),
    idempotencyKey: text("idempotency_key"),
    result: jsonb("result"),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // Keys are per caller; pruned keys are set to null (the action row stays).
    uniqueIndex("actions_idempotency_idx").on(t.callerKey, t.idempotencyKey),
    index("actions_state_idx").on(t.state),
    index("actions_host_idx").on(t.hostId),
    // Per-token held-action cap and revocation look actions up by token and state.
    index("actions_token_state_idx").on(t.tokenId, t.state),
  ],
);

export const approvals = pgTable(
  "approvals",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    actionId: uuid("action_id")
      .notNull()
      .unique()
      .references(() => actions.id, { onDelete: "cascade" }),
    actionHash: text("action_hash").notNull(),
    state: text("state").notNull(),
    /** Who owns the requesting credential (token creator or the requesting admin), for four-eyes. */
    requestedBy: text("requested_by").notNull(),
    riskLevel: text("risk_level").notNull(),
    deadline: timestamp("deadline", { withTimezone: true }).notNull(),
    decidedBy: uuid("decided_by").references(() => adminUsers.id),
    decidedAt: timestamp("decided_at", { withTimezone: true }),
    reason: text("reason"),
    /**
     * The passkey assertion that signed this decision (server/admins/passkeys):
     * credential id, authenticatorData, clientDataJSON, signature, nonce — all
     * base64url. Its challenge is derived from the approval id and action_hash.
     */
    assertion: jsonb("assertion").$type<Record<string, string>>(),
    /** Four-eyes for `critical`: the first of two different approvers, and their assertion. */
    firstApprovedBy: uuid("first_approved_by").references(() => adminUsers.id),
    firstApprovedAt: timestamp("first_approved_at", { withTimezone: true }),
    firstAssertion: jsonb("first_assertion").$type<Record<string, string>>(),
    /**
     * The last time a client was waiting on this held action — an open
     * tools/call or approval_wait, or an approval_status poll — on any hub
     * process (server/approvals/liveness.ts). Written at most every few
     * seconds; null when no client has waited since the row was made.
     */
    clientWaitingAt: timestamp("client_waiting_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [index("approvals_state_deadline_idx").on(t.state, t.deadline)],
);

export const grants = pgTable(
  "grants",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    tool: text("tool").notNull(),
    host: text("host").notNull(),
    argumentPattern: text("argument_pattern"),
    /** The exact environment a granted action may carry (names → values); `{}` = none. */
    env: jsonb("env").$type<Record<string, string>>().notNull().default({}),
    /** sha256 (hex) of the exact stdin a granted action may carry; null = no stdin. */
    stdinSha256: text("stdin_sha256"),
    /** The exact workspace-relative working directory (normalised); "." = the workspace root. */
    cwd: text("cwd").notNull().default("."),
    maxRisk: text("max_risk").notNull(),
    usesRemaining: integer("uses_remaining").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdBy: uuid("created_by").references(() => adminUsers.id),
    createdAt: createdAt(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    revokedBy: uuid("revoked_by").references(() => adminUsers.id),
    /**
     * The passkey assertion over this grant's canonical scope (a grant whose
     * ceiling is at or above the passkey threshold needs one): credential id,
     * authenticatorData, clientDataJSON, signature, nonce — base64url. Its
     * digest is sealed in grant/1 `created`.
     */
    assertion: jsonb("assertion").$type<Record<string, string>>(),
  },
  (t) => [
    index("grants_lookup_idx").on(t.tool, t.host),
    check("grants_uses_nonnegative", sql`${t.usesRemaining} >= 0`),
  ],
);

export const leases = pgTable(
  "leases",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    hostId: uuid("host_id")
      .notNull()
      .references(() => hosts.id),
    /** exclusive | observe; a label lease is always exclusive */
    mode: text("mode").notNull(),
    /** A host path label's lease (docs/design.md#leases); null for the host's own lease. */
    label: text("label"),
    ownerKind: text("owner_kind").notNull(),
    ownerId: text("owner_id").notNull(),
    sessionId: text("session_id"),
    description: text("description").notNull().default(""),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    idleExpiresAt: timestamp("idle_expires_at", { withTimezone: true }).notNull(),
    releasedAt: timestamp("released_at", { withTimezone: true }),
    /** released | lapsed | revoked | session_ended */
    releaseReason: text("release_reason"),
  },
  (t) => [
    index("leases_host_active_idx").on(t.hostId, t.releasedAt),
    index("leases_session_idx").on(t.sessionId),
    check("leases_label_exclusive", sql`${t.label} is null or ${t.mode} = 'exclusive'`),
    // One live holder per label of a host, held by the database itself (lapsed rows are released before any insert).
    uniqueIndex("leases_active_label_uq").on(t.hostId, t.label).where(sql`${t.releasedAt} is null and ${t.label} is not null`),
  ],
);

export const jobs = pgTable(
  "jobs",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    actionId: uuid("action_id")
      .notNull()
      .unique()
      .references(() => actions.id),
    hostId: uuid("host_id")
      .notNull()
      .references(() => hosts.id),
    /** The signed job: prepared action, compiled policy, action_hash, deadline. */
    payload: jsonb("payload").notNull(),
    signature: text("signature").notNull(),
    state: text("state").notNull(),
    claimedBy: text("claimed_by"),
    claimedAt: timestamp("claimed_at", { withTimezone: true }),
    completedAt: timestamp("completed_at", { withTimezone: true }),
    result: jsonb("result"),
    heartbeatAt: timestamp("heartbeat_at", { withTimezone: true }),
    deadline: timestamp("deadline", { withTimezone: true }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("jobs_host_state_idx").on(t.hostId, t.state, t.createdAt)],
);

export const evidence = pgTable("evidence", {
  id: uuid("id").primaryKey().defaultRandom(),
  actionId: uuid("action_id")
    .notNull()
    .references(() => actions.id),
  /** One envelope per job: a retried delivery is stored once. */
  jobId: uuid("job_id")
    .unique()
    .references(() => jobs.id),
  hostId: uuid("host_id")
    .notNull()
    .references(() => hosts.id),
  envelope: jsonb("envelope").notNull(),
  envelopeSha256: text("envelope_sha256").notNull(),
  signature: text("signature").notNull(),
  createdAt: createdAt(),
});

/**
 * Scrubbed output of a job as the guest streamed it (base64 chunks, in
 * order per stream). The key makes a retried chunk a no-op. Only scrubbed
 * bytes ever reach the hub.
 */
export const jobOutputChunks = pgTable(
  "job_output_chunks",
  {
    jobId: uuid("job_id")
      .notNull()
      .references(() => jobs.id),
    stream: text("stream").notNull(),
    seq: integer("seq").notNull(),
    data: text("data").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.stream, t.seq] })],
);

/**
 * MCP Tasks (docs/design.md#mcp-tasks): a task-augmented tools/call of a
 * pipeline tool. Its status is not stored: it is read from the action, its
 * approval and its job each time it is asked for, so every hub process
 * answers alike and a restart loses nothing. `result` holds the final tool
 * result only for a call that ended before the pipeline named an action (a
 * refusal); `cancelled_at` is set only by a cancellation that took effect.
 */
export const mcpTasks = pgTable(
  "mcp_tasks",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    tokenId: uuid("token_id")
      .notNull()
      .references(() => agentTokens.id, { onDelete: "cascade" }),
    actionId: uuid("action_id").references(() => actions.id, { onDelete: "cascade" }),
    tool: text("tool").notNull(),
    /** The submission answered from an earlier action with the same idempotency key (as the synchronous result says). */
    replayed: boolean("replayed").notNull().default(false),
    result: jsonb("result"),
    ttlMs: integer("ttl_ms").notNull(),
    cancelledAt: timestamp("cancelled_at", { withTimezone: true }),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    index("mcp_tasks_token_idx").on(t.tokenId, t.createdAt),
    index("mcp_tasks_expiry_idx").on(t.expiresAt),
    check("mcp_tasks_action_or_result", sql`${t.actionId} is not null or ${t.result} is not null`),
  ],
);
