// Agents (MCP channel)
import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  index,
  jsonb,
  pgTable,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { bytea, createdAt } from "./columns";

export const agentTokens = pgTable("agent_tokens", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull(),
  /**
   * sha256 of the `lh_` bearer token; compared in constant time after lookup.
   * Null for an OAuth grant (`kind` = `oauth`): its bearer tokens live in
   * `oauth_tokens` and rotate, while this row stays the grant's one identity
   * (scope, sessions, leases, actions, revocation).
   */
  tokenHash: bytea("token_hash").unique(),
  /** `static` (an `lh_` token an admin issued) or `oauth` (a grant an admin consented to). */
  kind: text("kind").notNull().default("static"),
  /** The OAuth client the grant was made to (`oauth` rows only). */
  oauthClientId: text("oauth_client_id"),
  readOnly: boolean("read_only").notNull().default(false),
  /**
   * `judged` (default): each call is rated and held or granted as its risk
   * says. `any`: a call to an operation that can run under an observe lease
   * (kernel read-only workspace, no network) runs at once under one,
   * whatever its rating (server/policy/decide.ts `observe_scope`). A
   * read-only token cannot hold `any`: the two contradict each other.
   */
  observe: text("observe").notNull().default("judged"),
  /** null = every tool / host the hub exposes. */
  tools: text("tools").array(),
  hosts: text("hosts").array(),
  createdBy: text("created_by").notNull(),
  createdAt: createdAt(),
  expiresAt: timestamp("expires_at", { withTimezone: true }),
  revokedAt: timestamp("revoked_at", { withTimezone: true }),
}, (t) => [
  check("agent_tokens_observe_known", sql`${t.observe} in ('judged', 'any')`),
  check("agent_tokens_observe_not_read_only", sql`not (${t.readOnly} and ${t.observe} = 'any')`),
]);

/**
 * MCP sessions (Streamable HTTP revisions that have them). Any hub process can
 * serve a session: what the SDK learns from `initialize` is kept here so a
 * process that has never seen the session rebuilds it. The session id only
 * names the session; every request is still authenticated by its bearer
 * token, and a session answers only to the token that opened it.
 */
export const mcpSessions = pgTable(
  "mcp_sessions",
  {
    /** sha256(session id), hex. The id itself is only in the client's Mcp-Session-Id header. */
    id: text("id").primaryKey(),
    tokenId: uuid("token_id")
      .notNull()
      .references(() => agentTokens.id, { onDelete: "cascade" }),
    protocolVersion: text("protocol_version").notNull(),
    clientInfo: jsonb("client_info").notNull().default({}),
    clientCapabilities: jsonb("client_capabilities").notNull().default({}),
    createdAt: createdAt(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("mcp_sessions_token_idx").on(t.tokenId), index("mcp_sessions_expiry_idx").on(t.expiresAt)],
);
