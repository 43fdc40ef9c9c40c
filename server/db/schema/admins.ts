// Admins (browser channel): accounts with roles, Lucia-style sessions, passkeys.
import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt } from "./columns";

export const adminUsers = pgTable(
  "admin_users",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    username: text("username").notNull().unique(),
    /** `$argon2id$…` (PHC string), or a legacy `scrypt$…` upgraded at the next sign-in. */
    passwordHash: text("password_hash").notNull(),
    /** owner | approver | auditor (server/admins/roles.ts). */
    role: text("role").notNull().default("owner"),
    /** A generated one-time password must be replaced at the first sign-in. */
    mustChangePassword: boolean("must_change_password").notNull().default(false),
    passwordChangedAt: timestamp("password_changed_at", { withTimezone: true }),
    createdAt: createdAt(),
    disabledAt: timestamp("disabled_at", { withTimezone: true }),
  },
  (t) => [check("admin_users_role_known", sql`${t.role} in ('owner', 'approver', 'auditor')`)],
);

export const adminSessions = pgTable(
  "admin_sessions",
  {
    /** sha256(session token), hex. The token itself is only in the cookie. */
    id: text("id").primaryKey(),
    userId: uuid("user_id")
      .notNull()
      .references(() => adminUsers.id, { onDelete: "cascade" }),
    createdAt: createdAt(),
    /** Sliding (idle) expiry; never beyond created_at + the absolute lifetime. */
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    /** Last time this session proved the password or a passkey again (token minting, role changes). */
    reauthenticatedAt: timestamp("reauthenticated_at", { withTimezone: true }),
    /**
     * hex(sha256(binding secret)). The secret is returned once in the sign-in
     * response body and kept in the page's origin-scoped storage; every API
     * call sends it as a header. A cookie without it opens nothing (cookies do
     * not isolate ports). Null (sessions older than binding) never validates.
     */
    bindingHash: text("binding_hash"),
  },
  (t) => [index("admin_sessions_user_idx").on(t.userId)],
);

/** WebAuthn credentials (passkeys) registered by an admin. */
export const passkeyCredentials = pgTable(
  "passkey_credentials",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => adminUsers.id, { onDelete: "cascade" }),
    /** The authenticator's credential id, base64url. */
    credentialId: text("credential_id").notNull().unique(),
    /** COSE public key, base64url: what `leasehold verify` checks approval assertions against. */
    publicKey: text("public_key").notNull(),
    signCount: integer("sign_count").notNull().default(0),
    transports: jsonb("transports").$type<string[]>().notNull().default([]),
    name: text("name").notNull().default("passkey"),
    createdAt: createdAt(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    /** Removed credentials are kept (not deleted) so old approvals stay verifiable. */
    removedAt: timestamp("removed_at", { withTimezone: true }),
  },
  (t) => [index("passkey_credentials_user_idx").on(t.userId)],
);

/** Outstanding WebAuthn challenges, single use, short-lived. */
export const webauthnChallenges = pgTable(
  "webauthn_challenges",
  {
    /** The challenge, base64url. */
    challenge: text("challenge").primaryKey(),
    /** register | sign-in | approve */
    purpose: text("purpose").notNull(),
    userId: uuid("user_id").references(() => adminUsers.id, { onDelete: "cascade" }),
    /** For purpose "approve": the approval and the exact action hash the challenge is derived from. */
    approvalId: uuid("approval_id"),
    actionHash: text("action_hash"),
    /** The fresh random part the approval challenge mixes in, base64url. */
    nonce: text("nonce"),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("webauthn_challenges_expiry_idx").on(t.expiresAt)],
);
