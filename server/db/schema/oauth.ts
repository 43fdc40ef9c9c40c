// The hub as an OAuth 2.1 authorization server for MCP clients (server/oauth).
import { bytea, createdAt } from "./columns";
import { index, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { agentTokens } from "./agents";

/**
 * Clients the hub knows: `cimd` (the id is the URL of its Client ID Metadata
 * Document; the row is a snapshot of the last fetch, for display and audit),
 * `dynamic` (RFC 7591 registration) or `registered` (by an admin). All are
 * public clients: PKCE is their proof, there are no client secrets.
 */
export const oauthClients = pgTable(
  "oauth_clients",
  {
    id: text("id").primaryKey(),
    kind: text("kind").notNull(),
    name: text("name").notNull(),
    redirectUris: text("redirect_uris").array().notNull(),
    metadata: jsonb("metadata").notNull().default({}),
    /** Admin user name for `registered`; null otherwise. */
    createdBy: text("created_by"),
    /** `dynamic`: the client address that registered it (per-address registration limit). */
    registeredFrom: text("registered_from"),
    createdAt: createdAt(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
  },
  (t) => [index("oauth_clients_kind_idx").on(t.kind, t.createdAt)],
);

/**
 * An authorization request from the moment the consent page shows it until
 * its code is redeemed. The row id is the sha256 of the handle the consent
 * form carries (a CSRF token: only the page rendered for this admin has it).
 * The code is stored as a sha256 too, and is redeemable once.
 */
export const oauthAuthorizations = pgTable(
  "oauth_authorizations",
  {
    id: text("id").primaryKey(),
    clientId: text("client_id")
      .notNull()
      .references(() => oauthClients.id, { onDelete: "cascade" }),
    redirectUri: text("redirect_uri").notNull(),
    state: text("state"),
    codeChallenge: text("code_challenge").notNull(),
    scopes: text("scopes").array().notNull(),
    resource: text("resource").notNull(),
    /** The admin who was shown the consent page; only they may decide it. */
    adminId: uuid("admin_id").notNull(),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    decidedAt: timestamp("decided_at", { withTimezone: true }),
    outcome: text("outcome"),
    codeHash: bytea("code_hash").unique(),
    codeExpiresAt: timestamp("code_expires_at", { withTimezone: true }),
    codeUsedAt: timestamp("code_used_at", { withTimezone: true }),
    tokenId: uuid("token_id").references(() => agentTokens.id, { onDelete: "cascade" }),
  },
  (t) => [index("oauth_authorizations_expiry_idx").on(t.expiresAt), index("oauth_authorizations_client_idx").on(t.clientId)],
);

/**
 * Bearer (`access`, `lha_…`) and refresh (`lhr_…`) tokens of an OAuth grant
 * (`token_id` → agent_tokens, the grant). Only sha256 is stored. A refresh
 * token is used once (`used_at`); presenting a used one again revokes the
 * whole grant (reuse detection).
 */
export const oauthTokens = pgTable(
  "oauth_tokens",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    tokenId: uuid("token_id")
      .notNull()
      .references(() => agentTokens.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    hash: bytea("hash").notNull().unique(),
    /** RFC 8707: the canonical MCP URL the token is for; refused anywhere else. */
    resource: text("resource").notNull(),
    /**
     * The scopes this token carries: a refresh may ask for fewer than the
     * grant has, and then the new tokens carry only those. Null = the grant's.
     */
    scopes: text("scopes").array(),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true }),
  },
  (t) => [index("oauth_tokens_grant_idx").on(t.tokenId), index("oauth_tokens_expiry_idx").on(t.expiresAt)],
);

/** Hub-wide settings an owner changes in the browser (each change sealed as admin/1). */
export const hubSettings = pgTable("hub_settings", {
  key: text("key").primaryKey(),
  value: jsonb("value").notNull(),
  updatedBy: text("updated_by").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});
