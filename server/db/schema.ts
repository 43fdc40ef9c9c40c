/**
 * The hub's PostgreSQL schema: the one place tables are declared. Migrations
 * in drizzle/ are generated from this file and never edited after they land;
 * a change here ships as a new migration.
 *
 * Timestamps are `timestamptz`. Secrets never appear here in the clear: tokens
 * and session ids are stored as SHA-256 digests.
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  check,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";

/** Raw bytes (hashes, canonical ledger entries) as `bytea`, surfaced as Uint8Array. */
export const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType() {
    return "bytea";
  },
});

const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();

// ─── Admins (browser channel) ────────────────────────────────────────────────

export const adminUsers = pgTable("admin_users", {
  id: uuid("id").primaryKey().defaultRandom(),
  username: text("username").notNull().unique(),
  passwordHash: text("password_hash").notNull(),
  createdAt: createdAt(),
  disabledAt: timestamp("disabled_at", { withTimezone: true }),
});

export const adminSessions = pgTable(
  "admin_sessions",
  {
    /** sha256(session token), hex. The token itself is only in the cookie. */
    id: text("id").primaryKey(),
    userId: uuid("user_id")
      .notNull()
      .references(() => adminUsers.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("admin_sessions_user_idx").on(t.userId)],
);

// ─── Agents (MCP channel) ────────────────────────────────────────────────────

export const agentTokens = pgTable("agent_tokens", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull(),
  /** sha256 of the bearer token; compared in constant time after lookup. */
  tokenHash: bytea("token_hash").notNull().unique(),
  readOnly: boolean("read_only").notNull().default(false),
  /** null = every tool / host the hub exposes. */
  tools: text("tools").array(),
  hosts: text("hosts").array(),
  createdBy: text("created_by").notNull(),
  createdAt: createdAt(),
  expiresAt: timestamp("expires_at", { withTimezone: true }),
  revokedAt: timestamp("revoked_at", { withTimezone: true }),
});

export const mcpSessions = pgTable(
  "mcp_sessions",
  {
    id: text("id").primaryKey(),
    tokenId: uuid("token_id")
      .notNull()
      .references(() => agentTokens.id, { onDelete: "cascade" }),
    protocolVersion: text("protocol_version").notNull(),
    clientInfo: jsonb("client_info").notNull().default({}),
    createdAt: createdAt(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("mcp_sessions_token_idx").on(t.tokenId), index("mcp_sessions_expiry_idx").on(t.expiresAt)],
);

// ─── Hosts and capabilities ──────────────────────────────────────────────────

export const hosts = pgTable("hosts", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull().unique(),
  /** Ed25519 public key of the host's guest agent (evidence, witness). */
  publicKey: text("public_key").notNull(),
  enforcementTier: text("enforcement_tier"),
  health: jsonb("health").notNull().default({}),
  enrolledAt: createdAt(),
  lastSeenAt: timestamp("last_seen_at", { withTimezone: true }),
  removedAt: timestamp("removed_at", { withTimezone: true }),
});

export const capabilities = pgTable("capabilities", {
  id: text("id").primaryKey(),
  manifest: jsonb("manifest").notNull(),
  /** Only meaningful for `opt-in` capabilities; required/optional are active by default. */
  enabled: boolean("enabled").notNull().default(false),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

// ─── The action pipeline ─────────────────────────────────────────────────────

export const actions = pgTable(
  "actions",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    channel: text("channel").notNull(),
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
    uniqueIndex("actions_idempotency_idx").on(t.tokenId, t.idempotencyKey),
    index("actions_state_idx").on(t.state),
    index("actions_host_idx").on(t.hostId),
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
    deadline: timestamp("deadline", { withTimezone: true }).notNull(),
    decidedBy: uuid("decided_by").references(() => adminUsers.id),
    decidedAt: timestamp("decided_at", { withTimezone: true }),
    reason: text("reason"),
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
    maxRisk: text("max_risk").notNull(),
    usesRemaining: integer("uses_remaining").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdBy: uuid("created_by").references(() => adminUsers.id),
    createdAt: createdAt(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
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
    mode: text("mode").notNull(),
    ownerKind: text("owner_kind").notNull(),
    ownerId: text("owner_id").notNull(),
    sessionId: text("session_id"),
    description: text("description").notNull().default(""),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    idleExpiresAt: timestamp("idle_expires_at", { withTimezone: true }).notNull(),
    releasedAt: timestamp("released_at", { withTimezone: true }),
  },
  (t) => [index("leases_host_active_idx").on(t.hostId, t.releasedAt)],
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
    claimedAt: timestamp("claimed_at", { withTimezone: true }),
    heartbeatAt: timestamp("heartbeat_at", { withTimezone: true }),
    deadline: timestamp("deadline", { withTimezone: true }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("jobs_host_state_idx").on(t.hostId, t.state)],
);

export const evidence = pgTable("evidence", {
  id: uuid("id").primaryKey().defaultRandom(),
  actionId: uuid("action_id")
    .notNull()
    .references(() => actions.id),
  hostId: uuid("host_id")
    .notNull()
    .references(() => hosts.id),
  envelope: jsonb("envelope").notNull(),
  envelopeSha256: text("envelope_sha256").notNull(),
  signature: text("signature").notNull(),
  createdAt: createdAt(),
});

// ─── Ledger (Merkle log) ─────────────────────────────────────────────────────

/**
 * Sequencing: an append is one INSERT here (no shared row is touched, so
 * concurrent appends never queue on a lock). The integrator later assigns
 * `leaf_index` in batches; rows with a null index are waiting.
 */
export const ledgerEntries = pgTable(
  "ledger_entries",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    /** JCS bytes of {type, time, action_id, actor, data}. */
    body: bytea("body").notNull(),
    leafIndex: bigint("leaf_index", { mode: "bigint" }).unique(),
    leafHash: bytea("leaf_hash"),
    createdAt: createdAt(),
  },
  (t) => [index("ledger_entries_pending_idx").on(t.id).where(sql`${t.leafIndex} is null`)],
);

/** Perfect subtrees (level, index) of the Merkle tree, enough for O(log n) proofs. */
export const ledgerNodes = pgTable(
  "ledger_nodes",
  {
    level: smallint("level").notNull(),
    index: bigint("idx", { mode: "bigint" }).notNull(),
    hash: bytea("hash").notNull(),
  },
  (t) => [primaryKey({ columns: [t.level, t.index] })],
);

export const ledgerCheckpoints = pgTable("ledger_checkpoints", {
  treeSize: bigint("tree_size", { mode: "bigint" }).primaryKey(),
  rootHash: bytea("root_hash").notNull(),
  /** The C2SP signed note, verbatim. */
  note: text("note").notNull(),
  createdAt: createdAt(),
});

export const ledgerCosignatures = pgTable(
  "ledger_cosignatures",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    treeSize: bigint("tree_size", { mode: "bigint" })
      .notNull()
      .references(() => ledgerCheckpoints.treeSize),
    witnessName: text("witness_name").notNull(),
    witnessKeyId: text("witness_key_id").notNull(),
    /** The C2SP cosignature line, verbatim. */
    signatureLine: text("signature_line").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("ledger_cosignatures_once_idx").on(t.treeSize, t.witnessKeyId)],
);
