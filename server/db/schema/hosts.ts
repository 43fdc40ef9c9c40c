// Hosts and capabilities
import {
  boolean,
  index,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt } from "./columns";

export const hosts = pgTable("hosts", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull().unique(),
  /** Ed25519 public key of the host's guest agent (SPKI PEM): request signatures and evidence. */
  publicKey: text("public_key").notNull(),
  /** The guest's separate cosignature/v1 witness key (C2SP verifier key string). */
  witnessKey: text("witness_key"),
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
  /**
   * The admin's egress allow-list for a `network-egress` capability (canonical
   * CIDR:port and name:port rules, server/trust/egress.ts), replacing the
   * manifest's default list; null = the manifest's list. Sealed as admin/1
   * `capability.egress` (server/capabilities/enablement.ts).
   */
  egress: jsonb("egress").$type<string[]>(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/**
 * One-time enrolment codes (`leasehold host enrol-code`). Only the SHA-256 of
 * the code is stored; a code is used at most once (used_at set in the
 * transaction that records the host) and refused after expires_at.
 */
export const hostEnrolmentCodes = pgTable("host_enrolment_codes", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull(),
  codeHash: text("code_hash").notNull().unique(),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  usedAt: timestamp("used_at", { withTimezone: true }),
  hostId: uuid("host_id").references(() => hosts.id),
  createdAt: createdAt(),
});

/**
 * Nonces of signed guest requests seen within the clock-skew window: a
 * replayed request (same host, same nonce) is refused. Rows past expires_at
 * are pruned; by then the request's timestamp is outside the window anyway.
 */
export const hostRequestNonces = pgTable(
  "host_request_nonces",
  {
    hostId: uuid("host_id")
      .notNull()
      .references(() => hosts.id),
    nonce: text("nonce").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.hostId, t.nonce] }), index("host_request_nonces_expiry_idx").on(t.expiresAt)],
);
