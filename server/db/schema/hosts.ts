// Hosts and capabilities
import {
  boolean,
  jsonb,
  pgTable,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { createdAt } from "./columns";

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
